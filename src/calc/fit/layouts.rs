//! Every layout's memory and step time for the explorer and the planner: [`LayoutEstimator`]
//! holds what the report's own estimate read for the current inputs, so that a layout's figures
//! are arithmetic on its grid alone, built by the same [`setup`](super::setup::setup).

use super::setup::{groups, setup, Shape};
use super::time::Factors;
use crate::calc::estimate;
use crate::calc::estimate::device::Runtime;
use crate::calc::estimated::StepTime;
use crate::calc::model::Model;
use crate::calc::plan::{FsdpRows, Pipeline, Settings, Sharding};
use crate::calc::spec::Axis;
use crate::calc::{Grid, Report};

/// The published estimate for the layouts the explorer lists: what `memory::published` reads for the
/// current inputs (the model and the settings from the plan, LoRA's count, the sequence, the
/// micro batch per GPU), held so that a layout's memory is arithmetic on its grid alone.
pub struct LayoutEstimator {
    model: Model,
    /// The model's parameter counts, counted once.
    params: estimate::Params,
    settings: Settings,
    seq: u64,
    trainable: Option<u128>,
    /// The data-parallel replicas an FSDP layout keeps (`dp ÷ dp_shard` of the current inputs
    /// for [`FsdpRows::KeepReplicas`]; 1 elsewhere).
    replicate: u64,
    /// The current inputs' samples per GPU per micro step (every layout keeps it).
    pub micro: u64,
    /// The pipeline the rules published for the current inputs.
    pipeline: Option<Pipeline>,
    /// Samples per step, all replicas (every layout keeps it): a layout's micro batches per
    /// step follow from it.
    global_batch: Option<u64>,
    /// The framework's rank mesh, slowest dimension first, and the GPUs per node: where each
    /// layout's groups sit, for its step time.
    order: &'static [Axis],
    gpus_per_node: u64,
    /// The report's compute and communication factors (fitted from its measured speeds, or
    /// typed): every layout's step time is calibrated as the report's is.
    factors: Factors,
}

impl LayoutEstimator {
    /// From the current inputs' report (`Framework::compute`); `None` when the report has no
    /// estimate to share (no model, no grid, no sequence or micro batch, LoRA without its count).
    pub fn new(base: &Report, order: &'static [Axis]) -> Option<LayoutEstimator> {
        let g = base.grid?;
        let micro = base.plan.micro_batch?;
        let seq = base.plan.seq_len?;
        let settings = base.plan.settings.clone();
        let trainable = super::setup::trainable_of(base)?;
        let named = settings.model.clone()?;
        let replicate = match settings.sharding {
            Sharding::Fsdp {
                rows: FsdpRows::KeepReplicas,
                dp_shard: Some(s),
                ..
            } if s > 0 && g.dp % s == 0 => g.dp / s,
            _ => 1,
        };
        Some(LayoutEstimator {
            params: estimate::Params::of(&named.model)?,
            model: named.model,
            settings,
            seq,
            trainable,
            replicate,
            micro,
            pipeline: base.plan.pipeline.clone(),
            global_batch: base.plan.global_batch,
            order,
            gpus_per_node: base.plan.node_shape?.gpus_per_node,
            factors: Factors {
                compute: (base.estimated.compute_factor)
                    .or(base.plan.settings.calibration_compute_factor)
                    .unwrap_or(1.0),
                comm: (base.estimated.comm_factor)
                    .or(base.plan.settings.calibration_comm_factor)
                    .unwrap_or(1.0),
            },
        })
    }

    /// The memory per GPU of a layout: its grid (`dp` = the data-parallel size the batch
    /// counts) at `micro` samples per GPU per micro step. Its data-parallel shard is what the
    /// explorer's row sets: torchtitan's `data_parallel_shard_degree = -1` (the rest: dp over the
    /// replicas; `None` when they do not divide it), axolotl's `dp_shard_size` = dp ÷ ep under
    /// expert parallelism, the typed one otherwise.
    pub fn row_memory(&self, grid: Grid, micro: u64) -> Option<u128> {
        self.row(grid, micro, false, u128::MAX).0
    }

    /// The memory on the device and, with `timed`, the step time of a layout (see
    /// [`LayoutEstimator::row_memory`]); no time when the memory is over `capacity`.
    pub fn row(
        &self,
        grid: Grid,
        micro: u64,
        timed: bool,
        capacity: u128,
    ) -> (Option<u128>, Option<StepTime>) {
        let dp_shard = match self.settings.sharding {
            Sharding::Fsdp {
                rows: FsdpRows::KeepReplicas,
                ..
            } => {
                // a row whose data-parallel size the replicas do not divide is refused
                if grid.dp % self.replicate != 0 {
                    return (None, None);
                }
                Some(grid.dp / self.replicate)
            }
            Sharding::Fsdp {
                rows: FsdpRows::ExpertsSplit,
                dp_shard,
                ..
            } => {
                if grid.ep > 1 {
                    Some(grid.dp / grid.ep)
                } else {
                    dp_shard
                }
            }
            _ => None,
        };
        // the micro batches per step that keep the global batch (at least one)
        let micro_batches = self
            .global_batch
            .and_then(|gb| gb.checked_div(micro.checked_mul(grid.dp)?))
            .unwrap_or(1)
            .max(1);
        let shape = Shape {
            pipeline: self.pipeline.as_ref(),
            micro_batches,
            gated: self.model.gated_mlp,
        };
        let (plan, _) = setup(
            &self.settings,
            &shape,
            self.trainable,
            self.seq,
            grid,
            micro,
            dp_shard,
        );
        // what the caching allocator reserves on the largest stage, as the report's own
        // memory_on_device_bytes counts it
        let memory = estimate::reserved::largest_reserved(&self.model, &self.params, &plan)
            .and_then(|reserved| Runtime::of(&groups(grid, plan.shard)).on_device(reserved));
        let time = if timed && memory.is_some_and(|m| m <= capacity) {
            super::time::of_plan(
                self.order,
                &self.settings,
                &self.model,
                &self.params,
                &plan,
                grid,
                self.gpus_per_node,
                self.factors,
            )
        } else {
            None
        };
        (memory, time)
    }
}
