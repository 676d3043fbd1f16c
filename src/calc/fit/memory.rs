//! The model's memory: DeepSpeed's own ZeRO estimators where the framework reads DeepSpeed's
//! keys, and the memory per GPU by published formulas (`estimate/`) as the framework shards it,
//! with the fit warning and the nearest single change that fits; [`LayoutEstimator`] gives each of
//! the explorer's layouts its memory by the same plan builder ([`plan`]).

use super::setup::{current_shard, groups, setup, trainable_of, Shape};
use crate::calc::estimate::device::{self, Runtime};
use crate::calc::estimate::{self, Change, Recompute};
use crate::calc::model::Model;
use crate::calc::num::gib;
use crate::calc::plan::Zero;
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
        report.set_int(Output::ZeroModelStatesGpuBytes, st.gpu_mem),
        report.set_int(Output::ZeroModelStatesCpuBytes, st.cpu_mem),
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
    let (plan, how) = setup(s, &shape, trainable, seq, g, micro, current_shard(s));
    let Some(ranked) = estimate::Params::of(m)
        .and_then(|p| estimate::reserved::reserved_stages(m, &p, &plan, false))
    else {
        return;
    };
    let (reserved, stages): (Vec<u128>, Vec<estimate::MemoryParts>) = ranked.into_iter().unzip();
    // the stage with the largest figure (the first such) decides
    let Some((largest, total)) = estimate::largest(&stages) else {
        return;
    };
    if stage_outputs(report, &stages, largest, total, &plan, &how).is_none() {
        return;
    }
    pipeline_fsdp_step(report, m, &plan, largest);
    output_kept_step(report, m, &plan, largest);
    let Some(most) = reserved_outputs(report, &reserved) else {
        return;
    };
    let runtime = Runtime::of(&groups(g, plan.shard));
    let Some(device) = on_device(report, &runtime, most) else {
        return;
    };
    // what the allocator adds to the tensors, kept by the nearest change that fits
    let slack = most.saturating_sub(total);
    fit_warning(report, m, &plan, &runtime, device, slack);
}

/// `memory_reserved_bytes` (the largest stage's) and `memory_reserved_by_stage_bytes`, labelled
/// as an estimate; returns the largest.
fn reserved_outputs(report: &mut Report, reserved: &[u128]) -> Option<u128> {
    use crate::calc::estimate::reserved as r;
    let (stage, &most) = reserved
        .iter()
        .enumerate()
        .max_by_key(|&(i, v)| (v, usize::MAX - i))?;
    report.set_int(Output::MemoryReservedBytes, most)?;
    if reserved.len() > 1 {
        report.memory_reserved_by_stage = reserved.to_vec();
    }
    report.explain(
        Output::MemoryReservedBytes,
        format!(
            "memory_reserved = what PyTorch's caching allocator reserves for the estimated tensors (c10/cuda/CUDACachingAllocator.cpp, torch 2.15): each rounded up to {} B, those of at most {} MiB packed in {} MiB segments, those below {} MiB in {} MiB segments, larger ones a segment each rounded up to {} MiB; model states as the framework allocates them (flat buffers when sharded, else per parameter tensor), activations in tensors of one hidden state. An estimate, not a measurement: fragmentation from the order of allocations is not counted; expandable_segments off (PyTorch's default)",
            r::MIN_BLOCK_SIZE,
            r::SMALL_SIZE >> 20,
            r::SMALL_BUFFER >> 20,
            r::MIN_LARGE_ALLOC >> 20,
            r::LARGE_BUFFER >> 20,
            r::ROUND_LARGE >> 20,
        ),
        if reserved.len() > 1 {
            format!(
                "stage {} of {} reserves the most: {}",
                stage + 1,
                reserved.len(),
                reserved.iter().map(|t| gib(*t)).collect::<Vec<_>>().join(", ")
            )
        } else {
            format!("{most} B ({})", gib(most))
        },
    );
    Some(most)
}

/// The largest stage's memory by part, each stage's total, and how they were computed.
fn stage_outputs(
    report: &mut Report,
    stages: &[estimate::MemoryParts],
    largest: usize,
    total: u128,
    plan: &estimate::Setup,
    how: &str,
) -> Option<()> {
    let (micro, seq) = (plan.micro_batch, plan.seq_len);
    let totals: Vec<u128> = stages
        .iter()
        .filter_map(estimate::MemoryParts::total)
        .collect();
    let e = &stages[largest];
    for (o, v) in [
        (Output::MemoryPerGpuBytes, total),
        (Output::WeightsBytes, e.weights),
        (Output::GradientsBytes, e.gradients),
        (Output::OptimizerBytes, e.optimizer),
        (Output::ActivationBytes, e.activations),
    ] {
        report.set_int(o, v)?;
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
    Some(())
}

/// The worked step of what FSDP2 keeps under pipeline parallelism on the largest stage
/// (`rank`), when the framework's conventions say it does and it is not nothing.
fn pipeline_fsdp_step(report: &mut Report, m: &Model, plan: &estimate::Setup, rank: usize) {
    let kept = estimate::Params::of(m)
        .and_then(|p| estimate::pipeline_fsdp_kept_at(m, &p, plan, rank as u64));
    let Some((gathered, unsharded)) = kept.filter(|&(g, u)| g > 0 || u > 0) else {
        return;
    };
    report.explain(
        Output::MemoryPerGpuBytes,
        "under pipeline parallelism FSDP2 keeps the stage's parameters gathered in 16 bits from its first forward until its gradients are reduced (torchtitan: reshard_after_forward=False when PP is on, parallelize_llama.py apply_fsdp at 9dec370, distributed/fsdp.py get_fsdp_reshard_after_forward_policy in 0.3.0) and their gradients unsharded, accumulated in the reduce dtype over the micro batches (torch.distributed.pipelining runs each backward but the last without gradient sync: stage.py backward_maybe_with_nosync, torch 2.15; pytorch/pytorch#125191); counted in the weights and the gradients, over TP and not over the sharding group",
        format!(
            "stage {}: {gathered} B gathered parameters + {unsharded} B unsharded {} gradients",
            rank + 1,
            if plan.memory.fp32_grads { "fp32" } else { "16-bit" }
        ),
    );
}

/// The worked step of what FSDP2 keeps gathered without pipeline parallelism on the largest
/// stage (`rank`): the final norm and the output layer, when the framework's conventions say so.
fn output_kept_step(report: &mut Report, m: &Model, plan: &estimate::Setup, rank: usize) {
    let Some([norm, output]) = estimate::fsdp_output_kept(m, plan, rank as u64) else {
        return;
    };
    if norm == 0 && output == 0 {
        return;
    }
    report.explain(
        Output::MemoryPerGpuBytes,
        "without pipeline parallelism FSDP2 keeps the final norm and the output layer (a tied embedding's weight when tied) gathered in 16 bits from their forward through the loss to their backward, beside the logits at the peak: torchtitan 0.3.0 shards them as one unit that reshards after forward only under fsdp_reshard_after_forward = \"always\" (distributed/fsdp.py apply_fsdp_to_decoder; the default is \"default\"), the blocks and an untied embedding resharding; counted in the weights, the output layer over TP, the norm whole",
        format!("{norm} B final norm + {output} B output layer gathered"),
    );
}

/// The memory on the device: the largest stage's reserved bytes and what the runtime takes.
fn on_device(report: &mut Report, runtime: &Runtime, total: u128) -> Option<u128> {
    let device = runtime.on_device(total)?;
    report.set_int(Output::MemoryOnDeviceBytes, device)?;
    report.estimated.memory_on_device = Some(device);
    report.explain(
        Output::MemoryOnDeviceBytes,
        "memory_on_device = memory_reserved (PyTorch's caching allocator, estimated from its block and segment sizes) + the CUDA context (0.5 GiB taken; 0.3–2 GiB reported, lazy loading as in CUDA ≥ 12.2: NVIDIA CUDA Programming Guide, \"Lazy Loading\") + 128 MiB per NCCL communicator (NCCL_BUFFSIZE 4 MiB default, NCCL's environment-variable documentation, × 16 channels × the Simple and LL128 protocols): an estimate; fragmentation from the order of allocations is not counted",
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
    Some(device)
}

/// The warning at the GPU when `device` bytes do not fit it, with the nearest single change
/// that fits.
fn fit_warning(
    report: &mut Report,
    m: &Model,
    plan: &estimate::Setup,
    runtime: &Runtime,
    device: u128,
    slack: u128,
) {
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
        .and_then(|room| room.checked_sub(slack))
        .and_then(|room| estimate::nearest_fit(m, plan, room))
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
                gib(new_total + slack + runtime.total())
            )
        }
        None => "No single change fits: add GPUs, offload to CPU, or use LoRA.".to_string(),
    };
    report.diag(
        Field::Gpu,
        Level::Warning,
        format!(
            "does not fit: the estimate is {} on the device per GPU, {} more than the {} the GPU gives PyTorch. {fix}",
            gib(device),
            gib(over),
            gib(cap)
        ),
    );
}
