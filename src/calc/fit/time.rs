//! The step time, estimated (`estimate/time.rs`) for the plan the rules resolved: its parts as
//! outputs, the MFU it implies in the framework's FLOPs convention, and the tokens per second
//! the time outputs use when no throughput or MFU is given.

use super::setup::{current_shard, setup, trainable_of, Shape};
use crate::calc::estimate::time::{self, Hardware, Placement};
use crate::calc::estimate::{self, Params};
use crate::calc::estimated::StepTime;
use crate::calc::gpu::HARDWARE_SOURCES;
use crate::calc::model::Model;
use crate::calc::num::float_repr as fmt_f;
use crate::calc::plan::{GpuSettings, Overlap, Settings, Sharding};
use crate::calc::spec::{Axis, Spec};
use crate::calc::{Grid, Num, Output, Report};

/// The latency of one ring step inside a node: the 8-GPU H200 all-reduce curve of
/// stas00/ml-engineering (network/benchmarks, nccl-tests: 1, 16 and 64 MiB) less its bandwidth
/// term leaves 3–7 µs per step.
const INTRA_LATENCY: f64 = 5e-6;
/// Across nodes: Calculon's InfiniBand latency (systems/a100_80g.json, 20 µs).
const INTER_LATENCY: f64 = 20e-6;
/// The share of a link's rate nccl-tests reaches: 367.6 of 450 GB/s for an 8-GPU NVLink 4
/// all-reduce without NVLS (stas00/ml-engineering network/benchmarks), 381.8 of 400 GB/s for a
/// 4-node 8×50 GB/s EFA all-reduce at 16 GiB (the same file).
const INTRA_SHARE: f64 = 0.82;
const INTER_SHARE: f64 = 0.95;

/// What the estimate takes from the GPU, with the typed bandwidths over the GPU's defaults.
pub(super) fn hardware(gpu: &GpuSettings, fused_attention: bool) -> Option<Hardware> {
    let g = gpu.gpu?;
    let f = crate::calc::gpu::figures(g)?;
    Some(Hardware {
        peak_flops: g.peak_tflops as f64 * 1e12,
        matmul_ceiling: f.mamf_permille as f64 / 1000.0,
        memory_bytes_per_s: f.memory_gbps as f64 * 1e9,
        attention_flops_per_s: g.peak_tflops as f64
            * 1e9
            * if fused_attention {
                f.fused_attention_permille
            } else {
                f.fa2_permille
            } as f64,
        intra_bytes_per_s: gpu.intra_gbps.unwrap_or(f.link_gbps as f64 * INTRA_SHARE) * 1e9,
        inter_bytes_per_s: gpu.inter_gbps.unwrap_or(f.nic_gbps as f64 * INTER_SHARE) * 1e9,
        intra_latency: INTRA_LATENCY,
        inter_latency: INTER_LATENCY,
    })
}

/// Where each dimension's ranks sit: their stride in the framework's mesh (`order`, slowest
/// first) on grid `g`. Expert parallelism without an axis of its own is carved out of the
/// data-parallel ranks next to each other.
pub(super) fn placement(order: &[Axis], g: Grid, gpus_per_node: u64) -> Placement {
    let has_ep = order.contains(&Axis::Ep);
    let size = |a: Axis| match a {
        Axis::Pp => g.pp,
        Axis::Dp if has_ep => g.dp / g.ep.max(1),
        Axis::Dp => g.dp,
        Axis::Cp => g.cp,
        Axis::Sp => g.sp,
        Axis::Tp => g.tp,
        Axis::Ep => g.ep,
    };
    let stride = |a: Axis| -> u64 {
        match order.iter().position(|&x| x == a) {
            Some(i) => order[i + 1..]
                .iter()
                .fold(1u64, |p, &x| p.saturating_mul(size(x).max(1))),
            None => 1,
        }
    };
    let dp_stride = [(Axis::Dp, g.dp), (Axis::Cp, g.cp), (Axis::Sp, g.sp)]
        .iter()
        .filter(|(_, n)| *n > 1)
        .map(|&(a, _)| stride(a))
        .min()
        .unwrap_or(1);
    Placement {
        gpus_per_node,
        tp_stride: stride(Axis::Tp),
        cp_stride: stride(Axis::Cp).min(stride(Axis::Sp)),
        dp_stride,
        pp_stride: stride(Axis::Pp),
        ep_stride: if has_ep {
            stride(Axis::Ep)
        } else {
            stride(Axis::Dp)
        },
    }
}

/// The framework's overlap, with DeepSpeed's rule for its ZeRO stages: `overlap_comm` is off
/// below stage 3 and on at stage 3 (DeepSpeed's `DeepSpeedZeroConfig`).
fn overlap(s: &Settings) -> Overlap {
    match s.sharding {
        Sharding::Zero(z) => Overlap {
            grad_reduce: z.stage >= 3,
            param_gather: z.stage >= 3,
            tp: s.overlap.tp,
        },
        _ => s.overlap,
    }
}

/// The ranks that reduce the gradients: the data-parallel ranks and those of context and
/// Ulysses parallelism, which hold the same parameters.
pub(super) fn grad_ranks(g: Grid) -> u64 {
    g.dp.saturating_mul(g.cp).saturating_mul(g.sp)
}

/// The step time of the estimate's plan `plan` on grid `g` (the report's own, and the
/// explorer's and the planner's rows).
pub(super) fn of_plan(
    order: &[Axis],
    s: &Settings,
    model: &Model,
    params: &Params,
    plan: &estimate::Setup,
    g: Grid,
    gpus_per_node: u64,
) -> Option<StepTime> {
    let hw = hardware(&s.gpu, s.fused_attention)?;
    let place = placement(order, g, gpus_per_node);
    time::step_time(model, params, plan, grad_ranks(g), &hw, &place, overlap(s))
}

/// The step-time outputs of the report; returns the tokens per second per GPU they imply.
pub(super) fn step(
    spec: &'static Spec,
    report: &mut Report,
    m: &Model,
    per_token: Option<(f64, &'static str)>,
) -> Option<f64> {
    let g = report.grid?;
    let seq = report.plan.seq_len?;
    let micro = report.plan.micro_batch?;
    let global = report.plan.global_batch?;
    let trainable = trainable_of(report)?;
    let s = report.plan.settings.clone();
    let shape = Shape {
        pipeline: report.plan.pipeline.as_ref(),
        micro_batches: report.plan.accumulation.unwrap_or(1),
        gated: m.gated_mlp,
    };
    let gpn = report.plan.node_shape?.gpus_per_node;
    let params = Params::of(m)?;
    let (plan, _) = setup(&s, &shape, trainable, seq, g, micro, current_shard(&s));
    let t = of_plan(spec.mesh.order, &s, m, &params, &plan, g, gpn)?;
    let total = t.total();
    if !total.is_finite() || total <= 0.0 {
        return None;
    }
    let hw = hardware(&s.gpu, s.fused_attention)?;
    for (o, v) in [
        (Output::StepTimeSeconds, total),
        (Output::StepComputeSeconds, t.compute),
        (Output::StepTpCommSeconds, t.tp),
        (Output::StepCpCommSeconds, t.cp),
        (Output::StepEpCommSeconds, t.ep),
        (Output::StepPpBubbleSeconds, t.pp_bubble),
        (Output::StepDpCommSeconds, t.dp),
    ] {
        report.set(o, Num::Float(v));
    }
    report.estimated.step = Some(t);
    report.explain_with(
        Output::StepTimeSeconds,
        "step_time = compute + exposed TP, CP, EP and DP communication + the pipeline's bubble and sends, for the slowest pipeline rank: a mechanism estimate (estimate/time.rs), not a measurement",
        || {
            format!(
                "{} = {} + {} + {} + {} + {} + {} s ({} GPUs per node; {} GB/s in a node, {} GB/s between nodes per GPU; {:.0} TFLOP/s peak × {} best matmul × {} fitted kernel efficiency). Hardware: {HARDWARE_SOURCES}",
                fmt_f(total),
                fmt_f(t.compute),
                fmt_f(t.tp),
                fmt_f(t.cp),
                fmt_f(t.ep),
                fmt_f(t.pp_bubble),
                fmt_f(t.dp),
                gpn,
                fmt_f(hw.intra_bytes_per_s / 1e9),
                fmt_f(hw.inter_bytes_per_s / 1e9),
                hw.peak_flops / 1e12,
                fmt_f(hw.matmul_ceiling),
                fmt_f(time::KERNEL_EFFICIENCY),
            )
        },
    );
    let tokens = global as f64 * seq as f64;
    let tps = tokens / total / g.world.max(1) as f64;
    if let Some((fpt, convention)) = per_token {
        let mfu = fpt * tps / hw.peak_flops;
        if mfu.is_finite() {
            report.set(Output::MfuEstimate, Num::Float(mfu));
            report.estimated.mfu = Some(mfu);
            report.explain_with(
                Output::MfuEstimate,
                format!("mfu_estimate = FLOPs per token ({convention}) × estimated tokens per second per GPU ÷ peak"),
                || format!("{} × {} ÷ {}e12 = {}", fmt_f(fpt), fmt_f(tps), hw.peak_flops / 1e12, fmt_f(mfu)),
            );
        }
    }
    (tps.is_finite() && tps > 0.0).then_some(tps)
}
