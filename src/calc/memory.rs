//! Memory as the frameworks' own estimators compute it: DeepSpeed's ZeRO model states and
//! Megatron-LM's theoretical memory.
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
//!
//! [`megatron_theoretical_memory`] returns what Megatron-LM 0.19.2's `report_theoretical_memory`
//! (megatron/training/theoretical_memory_usage.py, shipped in the megatron-core 0.19.2 wheel)
//! returns: weight and optimizer bytes of the most loaded shard (18 B/param, or 6 + 12/DP with the
//! distributed optimizer; routed experts over the expert data-parallel size), activations of the
//! first stage by one of its two branches (`compute_activation_memory`, Korthikanti et al. 2022
//! Table 2 with SP and selective recompute, when both are on; `compute_activation_memory_without_sp`
//! otherwise), and their total in MB (= bytes / 2^20), with every Python float step in its order.
//! Its blind spots stay: context parallelism is not seen (DP shrinks, the sequence is not divided),
//! full recompute is not seen, MoE and MLA activations are absent, and neither are linear biases
//! (the router's aside) or position embeddings. Checked on the 51 accepted runs of
//! tests/fixtures/model_megatron.json (Megatron's own GPT among them: GeLU, biases, LayerNorm), to
//! the bit. Multi-latent attention (DeepSeek-V3) is not
//! modelled here (`None`): no recorded run covers it.

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

/// The arguments Megatron-LM's `report_theoretical_memory` reads, as `validate_args` leaves them
/// (`data_parallel_size` = world / (TP·PP·CP), `sequence_parallel` already turned off at TP 1,
/// `expert_tensor_parallel_size` = TP unless given, `padded_vocab_size` from
/// [`crate::calc::flops::megatron_padded_vocab_size`], `num_microbatches` from the batch).
/// Multi-latent attention, latent MoE, MTP and the shared-expert gate are not modelled here
/// ([`megatron_theoretical_memory`] gives `None` for MLA).
#[derive(Clone, Debug, PartialEq)]
pub struct MegatronArgs {
    pub num_layers: u64,
    pub hidden_size: u64,
    pub ffn_hidden_size: u64,
    pub num_attention_heads: u64,
    /// `None` without `--group-query-attention` (then it is `num_attention_heads`).
    pub num_query_groups: Option<u64>,
    pub kv_channels: u64,
    pub swiglu: bool,
    /// `--normalization RMSNorm` (1·h per norm) rather than LayerNorm (2·h).
    pub rms_norm: bool,
    pub add_bias_linear: bool,
    pub untie_embeddings_and_output_weights: bool,
    pub multi_latent_attention: bool,
    pub num_experts: Option<u64>,
    pub moe_ffn_hidden_size: u64,
    pub moe_shared_expert_intermediate_size: Option<u64>,
    /// How many layers are MoE layers (`--moe-layer-freq`'s pattern summed); `None`: every
    /// layer (freq 1).
    pub moe_layer_count: Option<u64>,
    pub padded_vocab_size: u64,
    pub tensor_model_parallel_size: u64,
    pub pipeline_model_parallel_size: u64,
    pub virtual_pipeline_model_parallel_size: Option<u64>,
    pub expert_model_parallel_size: u64,
    pub expert_tensor_parallel_size: u64,
    pub world_size: u64,
    pub data_parallel_size: u64,
    pub use_distributed_optimizer: bool,
    pub seq_length: u64,
    pub micro_batch_size: u64,
    pub sequence_parallel: bool,
    /// `--recompute-granularity selective`.
    pub recompute_selective: bool,
    pub num_microbatches: u64,
}

/// Megatron's report, in bytes and in its MB (bytes / 2^20).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MegatronMemory {
    pub weight_and_optimizer_bytes: f64,
    /// `compute_activation_memory` (the SP + selective recompute branch).
    pub activation_bytes_with_sp: f64,
    /// `compute_activation_memory_without_sp` (every other case).
    pub activation_bytes_without_sp: f64,
    /// Which of the two `report_theoretical_memory` uses.
    pub uses_sp_branch: bool,
    pub weight_and_optimizer_memory_mb: f64,
    pub activation_memory_mb: f64,
    pub total_memory_mb: f64,
}

use num::Num;

/// Python's `+` on two numbers.
fn p_add(a: Num, b: Num) -> Option<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.checked_add(y).map(Num::Int),
        _ => Some(Num::Float(a.to_f64() + b.to_f64())),
    }
}

fn p_mul(a: Num, b: Num) -> Option<Num> {
    num::mul(a, b).ok()
}

/// Python's `/`: always a float.
fn p_div(a: Num, b: Num) -> Option<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => num::itruediv(x, y).ok().map(Num::Float),
        _ => num::fdiv(a.to_f64(), b.to_f64()).ok().map(Num::Float),
    }
}

fn i(x: u64) -> Num {
    Num::Int(i128::from(x))
}

fn prod(xs: &[Num]) -> Option<Num> {
    xs.iter().try_fold(Num::Int(1), |acc, &x| p_mul(acc, x))
}

fn total(xs: &[Num]) -> Option<Num> {
    xs.iter().try_fold(Num::Int(0), |acc, &x| p_add(acc, x))
}

impl MegatronArgs {
    fn moe_layers(&self) -> u64 {
        match (self.num_experts, self.moe_layer_count) {
            (None, _) => 0,
            (Some(_), None) => self.num_layers,
            (Some(_), Some(n)) => n,
        }
    }

    /// `compute_weight_and_optimizer_memory(args)`: bytes on the most loaded (first) stage.
    pub fn weight_and_optimizer_bytes(&self) -> Option<f64> {
        if self.multi_latent_attention {
            return None;
        }
        let (tp_block, replicated_block, expert_block, embedding) = self.blocks()?;
        let pp = i(self.pipeline_model_parallel_size);
        let tp = i(self.tensor_model_parallel_size);
        let mut tp_shard = p_div(total(&[p_div(tp_block, pp)?, Num::Int(0), embedding])?, tp)?;
        let replicated_shard = p_add(p_div(replicated_block, pp)?, Num::Int(0))?;
        let expert_shard = p_div(
            p_add(p_div(expert_block, pp)?, Num::Int(0))?,
            prod(&[
                i(self.expert_tensor_parallel_size),
                i(self.expert_model_parallel_size),
            ])?,
        )?;
        if self.untie_embeddings_and_output_weights && self.pipeline_model_parallel_size == 1 {
            tp_shard = p_add(tp_shard, p_div(embedding, tp)?)?;
        }
        let expert_dp = num::ifloordiv(
            i128::from(self.world_size),
            i128::from(self.expert_tensor_parallel_size)
                .checked_mul(i128::from(self.expert_model_parallel_size))?
                .checked_mul(i128::from(self.pipeline_model_parallel_size))?,
        )
        .ok()?;
        let bytes_per_param = |dp: Num| -> Option<Num> {
            if self.use_distributed_optimizer {
                p_add(Num::Int(6), p_div(Num::Int(12), dp)?)
            } else {
                Some(Num::Int(18))
            }
        };
        let w = p_add(
            p_mul(
                p_add(tp_shard, replicated_shard)?,
                bytes_per_param(i(self.data_parallel_size))?,
            )?,
            p_mul(expert_shard, bytes_per_param(expert_dp)?)?,
        )?;
        Some(w.to_f64()).filter(|x| x.is_finite())
    }

    /// The parameters of the whole model by how Megatron shards them: `(tensor-parallel blocks,
    /// replicated blocks, expert blocks, embedding)`.
    fn blocks(&self) -> Option<(Num, Num, Num, Num)> {
        let h = i(self.hidden_size);
        let heads = i(self.num_attention_heads);
        let groups = i(self.num_query_groups.unwrap_or(self.num_attention_heads));
        let ratio = p_div(prod(&[i(self.kv_channels), heads])?, h)?;
        let glm = if self.swiglu {
            Num::Float(1.5)
        } else {
            Num::Int(1)
        };
        let norm = i(if self.rms_norm { 1 } else { 2 });
        let moe_layers = i(self.moe_layers());
        let dense_layers = i(self.num_layers.checked_sub(self.moe_layers())?);
        let experts = i(self.num_experts.unwrap_or(1));
        let moe_ffn = i(if self.num_experts.is_some() {
            self.moe_ffn_hidden_size
        } else {
            0
        });
        let shared = i(self.moe_shared_expert_intermediate_size.unwrap_or(0));
        // 2·h·h·((1 + g/n)·(kv_channels·n/h))
        let attention = p_mul(
            prod(&[Num::Int(2), h, h])?,
            p_mul(p_add(Num::Int(1), p_div(groups, heads)?)?, ratio)?,
        )?;
        let dense_mlp = prod(&[Num::Int(2), h, i(self.ffn_hidden_size), glm])?;
        let shared_mlp = prod(&[Num::Int(2), h, shared, glm])?;
        let routed = prod(&[Num::Int(2), h, moe_ffn, experts, glm])?;
        let layernorm = prod(&[Num::Int(2), h, norm])?;
        let router = match self.num_experts {
            Some(e) => p_add(
                prod(&[h, i(e)])?,
                i(if self.add_bias_linear { e } else { 0 }),
            )?,
            None => Num::Int(0),
        };
        let embedding = prod(&[h, i(self.padded_vocab_size)])?;
        let final_norm = prod(&[norm, h])?;
        let tp_block = total(&[
            prod(&[p_add(attention, dense_mlp)?, dense_layers])?,
            prod(&[p_add(attention, shared_mlp)?, moe_layers])?,
        ])?;
        let replicated_block = total(&[
            prod(&[layernorm, dense_layers])?,
            prod(&[p_add(layernorm, router)?, moe_layers])?,
            final_norm,
        ])?;
        let expert_block = prod(&[routed, moe_layers])?;
        Some((tp_block, replicated_block, expert_block, embedding))
    }

    /// The embedding and pipeline terms both activation functions share, applied to `a`.
    fn pipeline_terms(&self, a: Num) -> Option<Num> {
        let (s, b, h) = (
            i(self.seq_length),
            i(self.micro_batch_size),
            i(self.hidden_size),
        );
        let pp = i(self.pipeline_model_parallel_size);
        let mut a = p_add(a, prod(&[Num::Int(8), s, b, pp])?)?; // input to embedding
        a = p_add(a, prod(&[s, b, h, pp])?)?; // embedding dropout
        if let Some(vpp) = self.virtual_pipeline_model_parallel_size {
            let penalty = p_add(
                Num::Int(1),
                p_div(
                    i(self.pipeline_model_parallel_size.checked_sub(1)?),
                    prod(&[pp, i(vpp)])?,
                )?,
            )?;
            a = p_mul(a, penalty)?;
        } else if self.pipeline_model_parallel_size > 1 {
            let share = p_div(i(self.num_microbatches), pp)?;
            if share.to_f64() < 1.0 {
                a = p_mul(a, share)?;
            }
        }
        Some(a)
    }

    /// `compute_activation_memory(args, num_microbatches)`: Korthikanti et al. Table 2 with SP and
    /// selective recompute, first stage, bytes.
    pub fn activation_bytes_with_sp(&self) -> Option<f64> {
        let (s, b, h) = (
            i(self.seq_length),
            i(self.micro_batch_size),
            i(self.hidden_size),
        );
        let per_layer = p_mul(
            prod(&[s, b, h])?,
            p_add(
                Num::Int(18),
                p_mul(Num::Int(4), p_div(i(self.ffn_hidden_size), h)?)?,
            )?,
        )?;
        let mut a = self.pipeline_terms(p_mul(per_layer, i(self.num_layers))?)?;
        if self.pipeline_model_parallel_size == 1 {
            let out = p_mul(
                prod(&[s, b, h, Num::Int(4)])?,
                p_add(Num::Int(1), p_div(i(self.padded_vocab_size), h)?)?,
            )?;
            a = p_add(a, out)?;
        }
        p_div(a, i(self.tensor_model_parallel_size)).map(Num::to_f64)
    }

    /// `compute_activation_memory_without_sp(args, num_microbatches)`: sbh(10 + 24/TP) per layer,
    /// the logits, then × 1.05; bytes.
    pub fn activation_bytes_without_sp(&self) -> Option<f64> {
        let (s, b, h) = (
            i(self.seq_length),
            i(self.micro_batch_size),
            i(self.hidden_size),
        );
        let tp = i(self.tensor_model_parallel_size);
        let per_layer = p_mul(
            prod(&[s, b, h])?,
            p_add(Num::Int(10), p_div(Num::Int(24), tp)?)?,
        )?;
        let mut a = self.pipeline_terms(p_mul(per_layer, i(self.num_layers))?)?;
        if self.pipeline_model_parallel_size == 1 {
            let logits = p_div(prod(&[s, b, i(self.padded_vocab_size)])?, tp)?;
            let final_norm = prod(&[s, b, h])?;
            a = p_add(a, p_mul(p_add(logits, final_norm)?, Num::Int(2))?)?;
        }
        p_mul(a, Num::Float(1.05)).map(Num::to_f64)
    }
}

/// Megatron-LM 0.19.2 `report_theoretical_memory(args, num_microbatches)`: weight and optimizer,
/// activation (SP + selective recompute: `compute_activation_memory`; otherwise
/// `compute_activation_memory_without_sp`) and their total, in MB = bytes / 2^20. It sees neither
/// context parallelism (the sequence is not divided, DP shrinks) nor full recompute, nor MoE/MLA
/// activations, and describes the first pipeline stage only.
pub fn megatron_theoretical_memory(args: &MegatronArgs) -> Option<MegatronMemory> {
    const MB: f64 = 1_048_576.0;
    let w = args.weight_and_optimizer_bytes()?;
    let with_sp = args.activation_bytes_with_sp()?;
    let without_sp = args.activation_bytes_without_sp()?;
    let uses_sp_branch = args.sequence_parallel && args.recompute_selective;
    let w_mb = w / MB;
    let a_mb = if uses_sp_branch { with_sp } else { without_sp } / MB;
    Some(MegatronMemory {
        weight_and_optimizer_bytes: w,
        activation_bytes_with_sp: with_sp,
        activation_bytes_without_sp: without_sp,
        uses_sp_branch,
        weight_and_optimizer_memory_mb: w_mb,
        activation_memory_mb: a_mb,
        total_memory_mb: w_mb + a_mb,
    })
}
