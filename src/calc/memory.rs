//! Model-state memory as DeepSpeed's own estimators compute it.
//!
//! [`zero2_model_states`] and [`zero3_model_states`] return what DeepSpeed 0.19.8's
//! `estimate_zero2_model_states_mem_needs` (runtime/zero/stage_1_and_2.py) and
//! `estimate_zero3_model_states_mem_needs` (runtime/zero/stage3.py) return, in bytes, with their
//! Python semantics: the `int(18 * total_params / total_gpus)` true division then truncation, the
//! float products by `1 / num_nodes` and by `additional_buffer_factor` (1.5 by default) truncated by
//! `int()`, ZeRO-2's offload factor `max(4 · total GPUs, 16)` against its no-offload
//! `4 · GPUs per node`, and ZeRO-3's `cpu_offload_params` read only inside `cpu_offload`. The CPU
//! figure is per node. Model states only: no activations, and frozen parameters count too.
//!
//! `total_params` and `largest_layer_params` come from [`crate::calc::model::Model`]
//! (`num_parameters()`, and the largest module as transformers 5 lays the model out). Checked on
//! every record of tests/fixtures/model_zero.json by tests/model.rs.

use super::model::int_of_truediv;
use super::num;

/// DeepSpeed's default `additional_buffer_factor`.
pub const ADDITIONAL_BUFFER_FACTOR: f64 = 1.5;

/// What an estimator returns, in bytes (`cpu_mem` per node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelStates {
    pub cpu_mem: u128,
    pub gpu_mem: u128,
    /// ZeRO-3 only: `4 · largest_layer_params`.
    pub largest_layer_memory: Option<u128>,
}

/// Python's `int(float(a) * factor…)`: an exact int product, then float factors left to right.
fn int_times(a: u128, factors: &[f64]) -> Option<u128> {
    let x = factors
        .iter()
        .fold(i128::try_from(a).ok()? as f64, |acc, f| acc * f);
    match num::int_of(x).ok()? {
        num::Num::Int(i) => u128::try_from(i).ok(),
        num::Num::Float(_) => None,
    }
}

/// `estimate_zero2_model_states_mem_needs(total_params, num_gpus_per_node, num_nodes, cpu_offload,
/// additional_buffer_factor)`. `None` for zero GPUs or a result out of range.
pub fn zero2_model_states(
    total_params: u128,
    num_gpus_per_node: u64,
    num_nodes: u64,
    cpu_offload: bool,
    additional_buffer_factor: f64,
) -> Option<ModelStates> {
    let gpn = u128::from(num_gpus_per_node);
    let total_gpus = u128::from(num_nodes).checked_mul(gpn)?;
    if total_gpus == 0 {
        return None;
    }
    let two = total_params.checked_mul(2)?;
    let (cpu_mem, gpu_mem) = if cpu_offload {
        let factor = total_gpus.checked_mul(4)?.max(16);
        (
            int_times(
                total_params.checked_mul(factor)?,
                &[additional_buffer_factor],
            )?,
            two,
        )
    } else {
        let sharded = int_of_truediv(total_params.checked_mul(18)?, total_gpus)?;
        (
            int_times(
                total_params.checked_mul(4)?.checked_mul(gpn)?,
                &[additional_buffer_factor],
            )?,
            two.checked_add(sharded)?,
        )
    };
    Some(ModelStates {
        cpu_mem,
        gpu_mem,
        largest_layer_memory: None,
    })
}

/// `estimate_zero3_model_states_mem_needs(total_params, largest_layer_params, num_gpus_per_node,
/// num_nodes, cpu_offload, cpu_offload_params, zero_init, additional_buffer_factor)`.
/// `cpu_offload` is `offload_optimizer.device == cpu`, `cpu_offload_params` is
/// `offload_param.device == cpu` (ignored without `cpu_offload`, as DeepSpeed ignores it).
#[allow(clippy::too_many_arguments)]
pub fn zero3_model_states(
    total_params: u128,
    largest_layer_params: u128,
    num_gpus_per_node: u64,
    num_nodes: u64,
    cpu_offload: bool,
    cpu_offload_params: bool,
    zero_init: bool,
    additional_buffer_factor: f64,
) -> Option<ModelStates> {
    let gpn = u128::from(num_gpus_per_node);
    let total_gpus = u128::from(num_nodes).checked_mul(gpn)?;
    if total_gpus == 0 {
        return None;
    }
    let gpus_factor = num::itruediv(1, i128::from(num_nodes)).ok()?;
    let largest_layer_memory = largest_layer_params.checked_mul(4)?;
    let abf = additional_buffer_factor;
    // `total_params * max(4 * num_gpus_per_node, k * gpus_factor) * abf`: Python's max keeps the
    // int unless the float is larger; an int stays an exact product before the float factor
    let per_gpu_or_node = |k: f64| -> Option<u128> {
        let by_node = k * gpus_factor;
        let by_gpu = gpn.checked_mul(4)?;
        if by_node > by_gpu as f64 {
            int_times(total_params, &[by_node, abf])
        } else {
            int_times(total_params.checked_mul(by_gpu)?, &[abf])
        }
    };
    let (cpu_mem, gpu_mem) = if cpu_offload {
        if cpu_offload_params {
            let cpu = if zero_init {
                int_times(total_params.checked_mul(18)?, &[gpus_factor, abf])?
            } else {
                per_gpu_or_node(18.0)?
            };
            (cpu, largest_layer_memory)
        } else {
            let gpu = largest_layer_memory
                .checked_add(int_of_truediv(total_params.checked_mul(2)?, total_gpus)?)?;
            let cpu = if zero_init {
                int_times(total_params.checked_mul(16)?, &[gpus_factor, abf])?
            } else {
                per_gpu_or_node(16.0)?
            };
            (cpu, gpu)
        }
    } else {
        let gpu = largest_layer_memory
            .checked_add(int_of_truediv(total_params.checked_mul(18)?, total_gpus)?)?;
        let base = if zero_init {
            largest_layer_params
        } else {
            total_params
        };
        let cpu = int_times(base.checked_mul(4)?.checked_mul(gpn)?, &[abf])?;
        (cpu, gpu)
    };
    Some(ModelStates {
        cpu_mem,
        gpu_mem,
        largest_layer_memory: Some(largest_layer_memory),
    })
}
