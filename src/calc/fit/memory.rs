//! The model's memory: DeepSpeed's own ZeRO estimators where the framework reads DeepSpeed's
//! keys, and the memory per GPU by published formulas (`estimate/`) as the framework shards it,
//! with the fit warning and the nearest single change that fits; [`MemoryContext`] gives each of
//! the explorer's layouts its memory by the same plan builder ([`plan`]).

use std::borrow::Cow;

use super::{gib, set_int};
use crate::calc::estimate::device::{self, Groups, Runtime};
use crate::calc::estimate::{self, Change, Recompute};
use crate::calc::estimated::StepTime;
use crate::calc::model::Model;
use crate::calc::plan::{FsdpRows, Pipeline, Settings, Sharding, Zero};
use crate::calc::spec::Axis;
use crate::calc::{memory, Field, Grid, Level, Output, Report};

/// DeepSpeed's ZeRO estimators, where the framework reads DeepSpeed's keys and stage 2 or 3 is set.
pub(super) fn zero(report: &mut Report, m: &Model, total: Option<u128>, s: &Zero) {
    let (Some(total), Some(largest)) = (total, m.largest_layer_params()) else {
        return;
    };
    // DeepSpeed's num_nodes and num_gpus_per_node: the one node shape
    let Some(shape) = report.plan.node_shape else {
        return;
    };
    let (nodes, gpn) = (shape.nodes, shape.gpus_per_node);
    let states = match s.stage {
        2 => memory::zero2_model_states(
            total,
            gpn,
            nodes,
            s.offload_optimizer,
            memory::ADDITIONAL_BUFFER_FACTOR,
        ),
        3 => memory::zero3_model_states(
            total,
            largest,
            gpn,
            nodes,
            s.offload_optimizer,
            s.offload_param,
            s.zero_init,
            memory::ADDITIONAL_BUFFER_FACTOR,
        ),
        _ => return,
    };
    let Some(st) = states else { return };
    let (Some(g), Some(c)) = (
        set_int(report, Output::ZeroModelStatesGpuBytes, st.gpu_mem),
        set_int(report, Output::ZeroModelStatesCpuBytes, st.cpu_mem),
    ) else {
        return;
    };
    let function = if s.stage == 2 {
        format!("estimate_zero2_model_states_mem_needs(total_params={total}, num_gpus_per_node={gpn}, num_nodes={nodes}, cpu_offload={})", py(s.offload_optimizer))
    } else {
        format!(
            "estimate_zero3_model_states_mem_needs(total_params={total}, largest_layer_params={largest}, num_gpus_per_node={gpn}, num_nodes={nodes}, cpu_offload={}, cpu_offload_params={}, zero_init={})",
            py(s.offload_optimizer),
            py(s.offload_param),
            py(s.zero_init)
        )
    };
    report.explain(
        Output::ZeroModelStatesGpuBytes,
        "DeepSpeed 0.19.8's own estimator (model states only: no activations, buffer factor 1.5)",
        format!("{function} → gpu {g} B, cpu {c} B per node"),
    );
}

fn py(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// LoRA's trainable parameters as the report counted them: `Some(None)` for a full fine-tune,
/// `None` when LoRA is set but its count is not known (no estimate then).
pub(super) fn trainable_of(report: &Report) -> Option<Option<u128>> {
    match &report.plan.settings.lora {
        None => Some(None),
        Some(_) => report
            .count(Output::TrainableParameters)
            .map(|n| Some(u128::from(n))),
    }
}

/// The data-parallel shard size of the current inputs (`None`: all of dp).
pub(super) fn current_shard(s: &Settings) -> Option<u64> {
    match s.sharding {
        Sharding::Fsdp { dp_shard, .. } => dp_shard,
        _ => None,
    }
}

/// The process groups of grid `g` whose model states are sharded over `shard` GPUs (the data
/// parallel communicator is the sharding group's when it is larger: dp × cp for Megatron's
/// distributed optimizer and FSDP over dp_shard × cp).
fn groups(g: Grid, shard: u64) -> Groups {
    Groups {
        dp: g.dp.max(shard),
        tp: g.tp,
        cp: g.cp,
        sp: g.sp,
        ep: g.ep,
        pp: g.pp,
    }
}

/// What the estimate reads beside the settings: the pipeline the rules published, the micro
/// batches per step and whether the MLP is gated.
pub(super) struct Shape<'a> {
    pub pipeline: Option<&'a Pipeline>,
    pub micro_batches: u64,
    pub gated: bool,
}

/// The one place an [`estimate::Plan`] is built: the settings `s` on grid `g` with `micro`
/// samples per GPU per micro step and the data-parallel shard size `dp_shard` (`None`: all of
/// dp). Returns the plan and how the model states are sharded, in words.
pub(super) fn plan(
    s: &Settings,
    shape: &Shape,
    trainable: Option<u128>,
    seq: u64,
    g: Grid,
    micro: u64,
    dp_shard: Option<u64>,
) -> (estimate::Plan, Cow<'static, str>) {
    let (sharding, shard, offload_optimizer, offload_param, how) = match s.sharding {
        Sharding::Zero(z) => (
            [
                estimate::Sharding::Replicated,
                estimate::Sharding::Zero1,
                estimate::Sharding::Zero2,
                estimate::Sharding::Zero3,
            ][z.stage.min(3) as usize],
            g.dp,
            z.offload_optimizer,
            z.offload_param,
            Cow::Borrowed("ZeRO over the data-parallel ranks"),
        ),
        // accelerate 1.15.0's mesh as axolotl 0.21.0 builds it (run), and torchtitan's FSDP2:
        // FSDP shards over the flattened `dp_shard_cp` dimension, dp_shard × cp (replicated
        // over dp_replicate)
        Sharding::Fsdp {
            name,
            reshard_after_forward,
            offload,
            ..
        } => (
            if reshard_after_forward {
                estimate::Sharding::Zero3
            } else {
                estimate::Sharding::Zero2
            },
            dp_shard.unwrap_or(g.dp).saturating_mul(g.cp),
            offload,
            offload,
            if offload {
                Cow::Owned(format!("{name} over dp_shard × cp, offloaded to the CPU"))
            } else {
                Cow::Owned(format!("{name} over dp_shard × cp"))
            },
        ),
        Sharding::DistributedOptimizer => (
            estimate::Sharding::DistributedOptimizer,
            g.dp.saturating_mul(g.cp),
            false,
            false,
            Cow::Borrowed("distributed optimizer over dp × cp"),
        ),
        Sharding::Replicated { words } => (
            estimate::Sharding::Replicated,
            g.dp,
            false,
            false,
            Cow::Borrowed(words),
        ),
    };
    let plan = estimate::Plan {
        tp: g.tp,
        pp: g.pp,
        cp: g.cp,
        sp: g.sp,
        ep: g.ep,
        etp: s.expert_tp.unwrap_or(0),
        shard: shard.max(1),
        sharding,
        offload_optimizer,
        offload_param,
        micro_batch: micro,
        seq_len: seq,
        recompute: s.recompute,
        flash_attention: s.flash_attention,
        sequence_parallel: s.sequence_parallel && g.tp > 1,
        weight_bits: if s.lora.as_ref().is_some_and(|l| l.qlora) {
            4
        } else {
            16
        },
        trainable,
        optimizer_bytes_per_param: s.optimizer_bytes_per_param,
        // the framework's pipeline holds for its own PP size; another layout's splits evenly
        pipeline: shape
            .pipeline
            .filter(|p| {
                p.layers.len() as u64 == g.pp.saturating_mul(p.virtual_stages.max(1))
                    || p.layers.is_empty()
            })
            .cloned(),
        micro_batches: shape.micro_batches,
        recompute_layers: s.recompute_layers,
        gated_mlp: shape.gated,
        selective_half_matmuls: s.selective_half_matmuls,
        ..estimate::Plan::default()
    }
    .with(s.memory);
    (plan, how)
}

/// The memory per GPU by published formulas (`estimate/`), per pipeline stage, as this framework shards it, and
/// whether it fits the GPU.
pub(super) fn published(report: &mut Report, m: &Model, g: Grid, seq: u64) {
    let Some(micro) = report.plan.micro_batch else {
        return;
    };
    let Some(trainable) = trainable_of(report) else {
        return;
    };
    let s = &report.plan.settings;
    let shape = Shape {
        pipeline: report.plan.pipeline.as_ref(),
        micro_batches: report.plan.accumulation.unwrap_or(1),
        gated: m.gated_mlp,
    };
    let (plan, how) = plan(s, &shape, trainable, seq, g, micro, current_shard(s));
    let Some(stages) = estimate::Params::of(m).and_then(|p| estimate::stages(m, &p, &plan)) else {
        return;
    };
    // the stage with the largest figure (the first such) decides
    let Some((largest, total)) = estimate::largest(&stages) else {
        return;
    };
    let totals: Vec<u128> = stages
        .iter()
        .filter_map(estimate::Estimate::total)
        .collect();
    let e = &stages[largest];
    for (o, v) in [
        (Output::MemoryPerGpuBytes, total),
        (Output::WeightsBytes, e.weights),
        (Output::GradientsBytes, e.gradients),
        (Output::OptimizerBytes, e.optimizer),
        (Output::ActivationBytes, e.activations),
    ] {
        if set_int(report, o, v).is_none() {
            return;
        }
    }
    if totals.len() > 1 {
        report.memory_by_stage.clone_from(&totals);
    }
    report.explain(
        Output::MemoryPerGpuBytes,
        "memory_per_gpu = weights + gradients + optimizer states (Rajbhandari et al. 2019, ZeRO) + activations (Korthikanti et al. 2022, per tensor) of the micro batches in flight: a published-formula estimate, not a measurement; CUDA context, fragmentation and communication buffers are not counted",
        format!(
            "{how}, shard {}, micro batch {micro} × {seq} tokens, recompute {:?}, {} attention: {} + {} + {} + {} = {total} B",
            plan.shard,
            plan.recompute,
            if plan.flash_attention { "flash/sdpa" } else { "eager" },
            e.weights,
            e.gradients,
            e.optimizer,
            e.activations
        ),
    );
    if totals.len() > 1 {
        report.explain(
            Output::MemoryPerGpuBytes,
            "the largest pipeline stage decides: 1F1B keeps min(p − r, micro batches) in flight on rank r (Narayanan et al. 2021), interleaved 1F1B its warm-up (Megatron-LM's schedule table); the first stage holds the embedding, the last the output layer and the loss",
            format!(
                "stage {} of {}: {}",
                largest + 1,
                totals.len(),
                totals
                    .iter()
                    .map(|t| gib(*t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    let runtime = Runtime::of(&groups(g, plan.shard));
    let Some(device) = runtime.on_device(total) else {
        return;
    };
    if set_int(report, Output::MemoryOnDeviceBytes, device).is_none() {
        return;
    }
    report.estimated.memory_on_device = Some(device);
    report.explain(
        Output::MemoryOnDeviceBytes,
        "memory_on_device = memory_per_gpu + the CUDA context (0.5 GiB taken; 0.3–2 GiB reported, lazy loading as in CUDA ≥ 12.2) + 128 MiB per NCCL communicator (NCCL_BUFFSIZE 4 MiB default × 16 channels × the Simple and LL128 protocols): an estimate; the allocator's fragmentation is not counted",
        format!(
            "{total} + {} + {} × {} ({}) = {device} B",
            runtime.context,
            runtime.communicators.len(),
            device::COMMUNICATOR_BYTES,
            if runtime.communicators.is_empty() {
                "no process group of more than one GPU".to_string()
            } else {
                runtime.communicators.join(", ")
            }
        ),
    );
    let Some(cap) = report.estimated.gpu_memory else {
        return;
    };
    if device <= cap {
        return;
    }
    let over = device - cap;
    // the tensors must fit in what the runtime leaves
    let fix = match cap
        .checked_sub(runtime.total())
        .and_then(|room| estimate::nearest_fit(m, &plan, room))
    {
        Some((c, new_total)) => {
            let what = match c {
                Change::Zero3 => "ZeRO-3 / FSDP full shard".to_string(),
                Change::Recompute(Recompute::Full) => {
                    "full recompute (gradient checkpointing)".to_string()
                }
                Change::Recompute(_) => "selective recompute".to_string(),
                Change::MicroBatch(b) => format!("micro batch {b}"),
                Change::MoreTp(tp) => format!("tensor parallel size {tp}"),
            };
            format!(
                "The nearest change that fits: {what} (estimated {} on the device).",
                gib(new_total + runtime.total())
            )
        }
        None => "No single change fits: add GPUs, offload to CPU, or use LoRA.".to_string(),
    };
    report.diag(
        Field::Gpu,
        Level::Warning,
        format!(
            "does not fit: the estimate is {} on the device per GPU, {} more than the GPU's {}. {fix}",
            gib(device),
            gib(over),
            gib(cap)
        ),
    );
}

/// The published estimate for the layouts the explorer lists: what [`published`] reads for the
/// current inputs (the model and the settings from the plan, LoRA's count, the sequence, the
/// micro batch per GPU), held so that a layout's memory is arithmetic on its grid alone.
pub struct MemoryContext {
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
}

impl MemoryContext {
    /// From the current inputs' report (`Framework::compute`); `None` when the report has no
    /// estimate to share (no model, no grid, no sequence or micro batch, LoRA without its count).
    pub fn new(base: &Report, order: &'static [Axis]) -> Option<MemoryContext> {
        let g = base.grid?;
        let micro = base.plan.micro_batch?;
        let seq = base.plan.seq_len?;
        let settings = base.plan.settings.clone();
        let trainable = trainable_of(base)?;
        let named = settings.model.clone()?;
        let replicate = match settings.sharding {
            Sharding::Fsdp {
                rows: FsdpRows::KeepReplicas,
                dp_shard: Some(s),
                ..
            } if s > 0 && g.dp % s == 0 => g.dp / s,
            _ => 1,
        };
        Some(MemoryContext {
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
    /// [`MemoryContext::row_memory`]); no time when the memory is over `capacity`.
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
        let (plan, _) = plan(
            &self.settings,
            &shape,
            self.trainable,
            self.seq,
            grid,
            micro,
            dp_shard,
        );
        let memory = estimate::estimate_with(&self.model, &self.params, &plan)
            .and_then(|e| e.total())
            .and_then(|total| Runtime::of(&groups(grid, plan.shard)).on_device(total));
        let time = if timed && memory.is_some_and(|m| m <= capacity) {
            super::time::of_plan(
                self.order,
                &self.settings,
                &self.model,
                &self.params,
                &plan,
                grid,
                self.gpus_per_node,
            )
        } else {
            None
        };
        (memory, time)
    }
}
