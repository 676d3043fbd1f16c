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
use crate::calc::plan::{
    GpuSettings, Overlap, Settings, Sharding, CALIBRATION_BOUNDS, CALIBRATION_PLAUSIBLE,
};
use crate::calc::spec::{Axis, Spec};
use crate::calc::{Field, Grid, Level, Num, Output, Param, Report};

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

/// What the estimate takes from the GPU, with the typed bandwidths over the GPU's defaults; the
/// attention kernel's rate at `seq`, the tokens of each of its calls (a context-parallel rank's
/// chunk).
pub(super) fn hardware(gpu: &GpuSettings, fused_attention: bool, seq: u64) -> Option<Hardware> {
    let g = gpu.gpu?;
    let f = crate::calc::gpu::figures(g)?;
    Some(Hardware {
        peak_flops: g.peak_tflops as f64 * 1e12,
        matmul_ceiling: f.mamf_permille as f64 / 1000.0,
        // the share a STREAM-like kernel reaches (the memory-bound kernels and the optimizer)
        memory_bytes_per_s: f.memory_gbps as f64 * 1e9 * f.stream_fraction(),
        attention_flops_per_s: g.peak_tflops as f64
            * 1e9
            * f.attention_permille(fused_attention, seq),
        fp8_flops_per_s: f
            .fp8_peak(g)
            .map_or(0.0, |p| p as f64 * 1e12 * time::FP8_MATMUL_CEILING),
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
            per_chunk: false,
        },
        _ => s.overlap,
    }
}

/// The ranks that reduce the gradients: the data-parallel ranks and those of context and
/// Ulysses parallelism, which hold the same parameters.
pub(super) fn grad_ranks(g: Grid) -> u64 {
    g.dp.saturating_mul(g.cp).saturating_mul(g.sp)
}

/// The step time's calibration factors (1: uncalibrated): `compute` multiplies the compute
/// (`calibration_compute_factor`), `comm` the communication (`calibration_comm_factor`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Factors {
    pub compute: f64,
    pub comm: f64,
}

impl Factors {
    pub const ONE: Factors = Factors {
        compute: 1.0,
        comm: 1.0,
    };
}

/// The hardware with its compute rates (matrix products, attention, memory-bound kernels)
/// divided by the compute factor and its links' bandwidths divided (their latencies multiplied)
/// by the communication factor: the estimate's compute and its communication are that many
/// times as long, and what follows from them follows (the pipeline's bubble is (p − 1)/v micro
/// batches of the calibrated compute and communication; the communication hidden behind a longer
/// backward is hidden more).
fn calibrated(hw: Hardware, f: Factors) -> Hardware {
    let (k, c) = (f.compute, f.comm);
    Hardware {
        matmul_ceiling: hw.matmul_ceiling / k,
        attention_flops_per_s: hw.attention_flops_per_s / k,
        fp8_flops_per_s: hw.fp8_flops_per_s / k,
        memory_bytes_per_s: hw.memory_bytes_per_s / k,
        intra_bytes_per_s: hw.intra_bytes_per_s / c,
        inter_bytes_per_s: hw.inter_bytes_per_s / c,
        intra_latency: hw.intra_latency * c,
        inter_latency: hw.inter_latency * c,
        ..hw
    }
}

/// The step time of the estimate's plan `plan` on grid `g` (the report's own, and the
/// explorer's and the planner's rows), calibrated by `factors` ([`Factors::ONE`]:
/// uncalibrated).
#[allow(clippy::too_many_arguments)]
pub(super) fn of_plan(
    order: &[Axis],
    s: &Settings,
    model: &Model,
    params: &Params,
    plan: &estimate::Setup,
    g: Grid,
    gpus_per_node: u64,
    factors: Factors,
) -> Option<StepTime> {
    let hw = calibrated(
        hardware(&s.gpu, s.fused_attention, plan.seq_len / plan.cp.max(1))?,
        factors,
    );
    let place = placement(order, g, gpus_per_node);
    time::step_time(model, params, plan, grad_ranks(g), &hw, &place, overlap(s))
}

/// The measured step of the link's own layout, seconds: `seconds_per_step`, or the step's
/// tokens at `tokens_per_second_per_gpu` on every GPU. `None` when neither is given (or usable).
fn measured(s: &Settings, tokens: f64, world: u64) -> Option<(f64, Field)> {
    match (s.seconds_per_step, s.tokens_per_second_per_gpu) {
        (Param::Given(x), Param::Absent) if x > 0.0 => Some((x, Field::SecondsPerStep)),
        (Param::Absent, Param::Given(x)) if x > 0.0 => {
            let t = tokens / (x * world.max(1) as f64);
            (t.is_finite() && t > 0.0).then_some((t, Field::TokensPerSecondPerGpu))
        }
        _ => None,
    }
}

/// The factor within [`CALIBRATION_BOUNDS`] at which `total(k)` (a step time that grows with
/// `k`) takes `measured` seconds, by bisection on log k. `Err` with the totals at the two bounds
/// when the measured time lies outside them.
fn solve(total: impl Fn(f64) -> Option<f64>, measured: f64) -> Result<f64, (f64, f64)> {
    let (lo, hi) = CALIBRATION_BOUNDS;
    let (t_lo, t_hi) = (total(lo).ok_or((0.0, 0.0))?, total(hi).ok_or((0.0, 0.0))?);
    if !(t_lo..=t_hi).contains(&measured) {
        return Err((t_lo, t_hi));
    }
    let (mut a, mut b) = (lo.ln(), hi.ln());
    for _ in 0..48 {
        let mid = (a + b) / 2.0;
        match total(mid.exp()) {
            Some(t) if t < measured => a = mid,
            Some(_) => b = mid,
            None => return Err((t_lo, t_hi)),
        }
    }
    Ok(((a + b) / 2.0).exp())
}

/// Three decimals within the bounds: a link's factor reads as typed, within 0.05 % of the
/// measured step.
fn rounded(k: f64) -> f64 {
    ((k * 1000.0).round() / 1000.0).clamp(CALIBRATION_BOUNDS.0, CALIBRATION_BOUNDS.1)
}

/// The compute factor at which `total(k)` takes `measured` seconds ([`solve`]), rounded.
fn fit_factor(total: impl Fn(f64) -> Option<f64>, measured: f64) -> Result<f64, (f64, f64)> {
    solve(total, measured).map(rounded)
}

/// A second measured run of the link's inputs at another node count, for the communication
/// factor: its step time at given factors, its measured step, its nodes.
struct SecondRun<'a> {
    total: Box<dyn Fn(Factors) -> Option<f64> + 'a>,
    measured: f64,
    nodes: u64,
}

/// Both factors from two runs at two node counts: the communication factor `c` by bisection
/// on log c, each `c` with the compute factor at which the link's own run takes its measured
/// `m1` seconds, until the second run takes its own. The second run's share of communication
/// differs from the first's (more nodes: more of it, exposed), so its error at the first run's
/// compute factor grows with `c` when it has more nodes and falls when it has fewer. `Err` with
/// the second run's estimates at the two bounds of `c` when no pair within the bounds
/// reproduces both runs (the two runs do not tell the communication apart, or are not the
/// link's setup).
fn fit_two(
    t1: &dyn Fn(Factors) -> Option<f64>,
    m1: f64,
    second: &SecondRun,
    more_nodes: bool,
) -> Result<Factors, (f64, f64)> {
    let at = |comm: f64| -> Option<(f64, f64)> {
        match solve(|compute| t1(Factors { compute, comm }), m1) {
            Ok(compute) => {
                let t2 = (second.total)(Factors { compute, comm })?;
                let miss = t2 - second.measured;
                Some((if more_nodes { miss } else { -miss }, t2))
            }
            // even the fastest compute is too slow: the communication is slower than the run's
            Err((t_lo, _)) if m1 < t_lo && t_lo > 0.0 => Some((f64::INFINITY, f64::NAN)),
            Err((_, t_hi)) if t_hi > 0.0 => Some((f64::NEG_INFINITY, f64::NAN)),
            Err(_) => None,
        }
    };
    let (lo, hi) = CALIBRATION_BOUNDS;
    let ((h_lo, t_lo), (h_hi, t_hi)) = (at(lo).ok_or((0.0, 0.0))?, at(hi).ok_or((0.0, 0.0))?);
    if !(h_lo <= 0.0 && h_hi >= 0.0) {
        return Err((t_lo, t_hi));
    }
    let (mut a, mut b) = (lo.ln(), hi.ln());
    for _ in 0..40 {
        let mid = (a + b) / 2.0;
        match at(mid.exp()) {
            Some((h, _)) if h < 0.0 => a = mid,
            Some(_) => b = mid,
            None => return Err((t_lo, t_hi)),
        }
    }
    let comm = rounded(((a + b) / 2.0).exp());
    let compute =
        fit_factor(|compute| t1(Factors { compute, comm }), m1).map_err(|_| (t_lo, t_hi))?;
    Ok(Factors { compute, comm })
}

/// Where the communication factor came from.
#[derive(Clone, Copy, PartialEq)]
enum Comm {
    /// 1: the network model's rates (no second run, or one that could not be used).
    Kept,
    Typed,
    /// Fitted with the compute factor from the link's run and a second one: its measured
    /// step, seconds, and its nodes.
    Fitted {
        measured: f64,
        nodes: u64,
    },
}

/// What calibration decided for the report's step time.
struct Calibration {
    /// The factors used (typed, else fitted); 1 when uncalibrated.
    f: Factors,
    /// The measured step, seconds, and the field it came from.
    measured: Option<(f64, Field)>,
    /// Where the compute factor came from: typed, or fitted from the measured field.
    typed: bool,
    comm: Comm,
}

/// The factors of the report's step time: the typed `calibration_compute_factor` and
/// `calibration_comm_factor`, else those that make the estimate take the measured step of the
/// link's own layout (and of the second run's, for the communication factor); with the messages
/// at the fields (a factor beyond ±25 %, a measurement no factor reproduces, a typed factor the
/// measurement does not fit).
fn calibration(
    report: &mut Report,
    total: impl Fn(Factors) -> Option<f64>,
    measured: Option<(f64, Field)>,
    second: Option<SecondRun>,
) -> Calibration {
    let typed = report.plan.settings.calibration_compute_factor;
    let (mut comm, mut c) = match report.plan.settings.calibration_comm_factor {
        Some(c) => (Comm::Typed, c),
        None => (Comm::Kept, 1.0),
    };
    let two = match (comm, &second) {
        (Comm::Kept, Some(run)) => two_runs(report, &total, typed, measured, run),
        _ => None,
    };
    if let (Some(f), Some(run)) = (two, &second) {
        comm = Comm::Fitted {
            measured: run.measured,
            nodes: run.nodes,
        };
        c = f.comm;
    }
    let k = match two {
        Some(f) => f.compute,
        None => compute_factor(
            report,
            |k| {
                total(Factors {
                    compute: k,
                    comm: c,
                })
            },
            measured,
        ),
    };
    if measured.is_some() && typed.is_none() && comm == Comm::Kept && second.is_none() {
        report.diag(
            Field::SecondRunNodes,
            Level::Note,
            "One measured run fits the compute factor only: the communication factor stays 1 (the network model's). A second run of these inputs at another node count (second_run_nodes with its speed) fits it too.",
        );
    }
    plausible(
        report,
        k,
        "compute",
        match (typed, measured) {
            (None, Some((_, field))) => field,
            _ => Field::CalibrationComputeFactor,
        },
    );
    plausible(
        report,
        c,
        "communication",
        match comm {
            Comm::Fitted { .. } => Field::SecondRunNodes,
            _ => Field::CalibrationCommFactor,
        },
    );
    Calibration {
        f: Factors {
            compute: k,
            comm: c,
        },
        measured,
        typed: typed.is_some(),
        comm,
    }
}

/// Both factors from the link's measured run and a second one ([`fit_two`]); `None` (said at
/// `second_run_nodes`) when the compute factor is typed, the link's own run is not measured, or
/// no pair reproduces both.
fn two_runs(
    report: &mut Report,
    total: &dyn Fn(Factors) -> Option<f64>,
    typed: Option<f64>,
    measured: Option<(f64, Field)>,
    run: &SecondRun,
) -> Option<Factors> {
    let shape = report.plan.node_shape?;
    let say =
        |report: &mut Report, level, text: String| report.diag(Field::SecondRunNodes, level, text);
    let Some((m1, field)) = measured else {
        say(report, Level::Warning, "A second run calibrates the communication beside the link's own measured run: give this layout's speed too (tokens_per_second_per_gpu or seconds_per_step).".into());
        return None;
    };
    if typed.is_some() {
        say(report, Level::Note, "With calibration_compute_factor typed the second run is not used: both factors are fitted together, or typed together.".into());
        return None;
    }
    if run.nodes == shape.nodes {
        say(report, Level::Warning, format!("The second run is on {} nodes, as the link's: the communication factor needs another node count.", run.nodes));
        return None;
    }
    match fit_two(total, m1, run, run.nodes > shape.nodes) {
        Ok(f) => Some(f),
        Err((lo, hi)) => {
            say(report, Level::Warning, format!(
                "No communication factor: no factor from {} to {} with the compute factor of this layout's measured {} s ({}) makes the run on {} nodes take its measured {} s (it takes {} to {} s). The two runs do not tell the communication apart or are not these inputs' setup; the communication stays uncalibrated.",
                CALIBRATION_BOUNDS.0, CALIBRATION_BOUNDS.1, fmt_sig(m1), field.key(), run.nodes, fmt_sig(run.measured), fmt_sig(lo), fmt_sig(hi)
            ));
            None
        }
    }
}

/// The compute factor with the communication's fixed (`total(k)`): typed, else fitted from the
/// measured step, with a hint when the two differ and a warning when none fits.
fn compute_factor(
    report: &mut Report,
    total: impl Fn(f64) -> Option<f64>,
    measured: Option<(f64, Field)>,
) -> f64 {
    let typed = report.plan.settings.calibration_compute_factor;
    let fitted = measured.map(|(m, field)| (fit_factor(&total, m), m, field));
    match (typed, fitted) {
        (Some(k), Some((Ok(f), _, _))) => {
            if (f / k - 1.0).abs() > 0.005 {
                report.diag(
                    Field::CalibrationComputeFactor,
                    Level::Hint,
                    format!("the measured speed of this layout fits a compute factor of {}; the typed {} is used", fmt_sig(f), fmt_f(k)),
                );
            }
            k
        }
        (Some(k), _) => k,
        (None, Some((Ok(f), _, _))) => f,
        (None, Some((Err((lo, hi)), m, field))) => {
            report.diag(
                field,
                Level::Warning,
                format!(
                    "No calibration: the measured step ({} s) is outside what a compute factor from {} to {} gives this layout ({} to {} s, the communication kept from the network model). The measured run is likely not this link's layout, GPU or network; the step time stays uncalibrated.",
                    fmt_sig(m), CALIBRATION_BOUNDS.0, CALIBRATION_BOUNDS.1, fmt_sig(lo), fmt_sig(hi)
                ),
            );
            1.0
        }
        (None, None) => 1.0,
    }
}

/// A factor beyond ±25 %, warned at `at`.
fn plausible(report: &mut Report, k: f64, what: &str, at: Field) {
    if (k - 1.0).abs() > CALIBRATION_PLAUSIBLE {
        report.diag(
            at,
            Level::Warning,
            format!(
                "The {what} factor {} is beyond ±25 %: that points to a setup the link misdescribes (another GPU variant, a power cap, another attention kernel or fusion, another network) more than to the cluster's efficiency.",
                fmt_sig(k)
            ),
        );
    }
}

/// Three significant figures, for messages.
fn fmt_sig(x: f64) -> String {
    let d = match x.abs() {
        a if a < 1.0 => 3,
        a if a < 10.0 => 2,
        a if a < 100.0 => 1,
        _ => 0,
    };
    format!("{x:.d$}")
}

/// The step time of a report's own plan at given factors, with the tokens of its step; `None`
/// when the rules did not get that far.
fn plan_time<'a>(
    order: &'static [Axis],
    report: &Report,
    m: &'a Model,
    params: &'a Params,
) -> Option<(impl Fn(Factors) -> Option<StepTime> + 'a, f64)> {
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
    let (plan, _) = setup(&s, &shape, trainable, seq, g, micro, current_shard(&s));
    let tokens = global as f64 * seq as f64;
    Some((
        move |f: Factors| of_plan(order, &s, m, params, &plan, g, gpn, f),
        tokens,
    ))
}

/// The second measured run (`Framework::compute` resolved its plan): its step time at given
/// factors and its measured step; `None`, said at `second_run_nodes`, when its rules refuse it
/// or it has no measured speed.
fn second_run<'a>(
    order: &'static [Axis],
    report: &mut Report,
    second: &Report,
    m: &'a Model,
    params: &'a Params,
) -> Option<SecondRun<'a>> {
    let nodes = second.plan.node_shape?.nodes;
    if let Some(d) = second.diags.iter().find(|d| d.level == Level::Error) {
        let text = format!(
            "The second run: these inputs on {nodes} nodes are refused at {}: {}",
            d.field.key(),
            d.message
        );
        report.diag(Field::SecondRunNodes, Level::Warning, text);
        return None;
    }
    let (at, tokens) = plan_time(order, second, m, params)?;
    let world = second.grid?.world;
    let Some((measured, _)) = measured(&second.plan.settings, tokens, world) else {
        report.diag(
            Field::SecondRunNodes,
            Level::Warning,
            "The second run needs its measured speed: second_run_tokens_per_second_per_gpu or second_run_seconds_per_step (one of them).",
        );
        return None;
    };
    Some(SecondRun {
        total: Box::new(move |f| at(f).map(|t| t.total())),
        measured,
        nodes,
    })
}

/// The step-time outputs of the report; returns the tokens per second per GPU they imply.
/// `second`: the plan of a second measured run at another node count.
pub(super) fn step(
    spec: &'static Spec,
    report: &mut Report,
    m: &Model,
    per_token: Option<(f64, &'static str)>,
    second: Option<&Report>,
) -> Option<f64> {
    let g = report.grid?;
    let seq = report.plan.seq_len?;
    let gpn = report.plan.node_shape?.gpus_per_node;
    let params = Params::of(m)?;
    let order = spec.mesh.order;
    let (at, tokens) = plan_time(order, report, m, &params)?;
    let uncalibrated = at(Factors::ONE)?;
    let total = uncalibrated.total();
    if !total.is_finite() || total <= 0.0 {
        return None;
    }
    let s = report.plan.settings.clone();
    let measured = measured(&s, tokens, g.world);
    let second = second.and_then(|r| second_run(order, report, r, m, &params));
    let c = calibration(report, |f| at(f).map(|t| t.total()), measured, second);
    let t = if c.f == Factors::ONE {
        uncalibrated
    } else {
        at(c.f)?
    };
    let total = t.total();
    let hw = hardware(&s.gpu, s.fused_attention, seq / g.cp.max(1))?;
    let note = s
        .gpu
        .gpu
        .and_then(crate::calc::gpu::figures)
        .map_or("", |f| f.note);
    step_outputs(report, t, (gpn, &hw), note);
    calibration_outputs(report, &c, uncalibrated.total());
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

/// The step time and its parts as outputs, with the worked step.
fn step_outputs(report: &mut Report, t: StepTime, (gpn, hw): (u64, &Hardware), note: &str) {
    let total = t.total();
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
                "{} = {} + {} + {} + {} + {} + {} s ({} GPUs per node; {} GB/s in a node, {} GB/s between nodes per GPU; {:.0} TFLOP/s peak × {} best matmul × {} fitted kernel efficiency). This GPU: {note} Hardware: {HARDWARE_SOURCES}",
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
}

/// The calibration's outputs: the factors, the uncalibrated step time beside the calibrated one,
/// and how far the uncalibrated estimate was from the measured step.
fn calibration_outputs(report: &mut Report, c: &Calibration, uncalibrated: f64) {
    if c.f == Factors::ONE && !c.typed && c.comm == Comm::Kept && c.measured.is_none() {
        return;
    }
    let (k, comm) = (c.f.compute, c.f.comm);
    report.estimated.compute_factor = (k != 1.0 || c.typed).then_some(k);
    report.estimated.comm_factor = (comm != 1.0 || c.comm != Comm::Kept).then_some(comm);
    report.set(
        Output::StepTimeUncalibratedSeconds,
        Num::Float(uncalibrated),
    );
    report.set(Output::CalibrationComputeFactor, Num::Float(k));
    report.set(Output::CalibrationCommFactor, Num::Float(comm));
    let from = match (c.typed, c.measured, c.comm) {
        (true, _, _) => "as typed".to_string(),
        (false, Some((m, field)), Comm::Fitted { measured, nodes }) => format!(
            "fitted with calibration_comm_factor: the factors at which this layout's estimate takes the measured {} s ({}) and the same inputs on {nodes} nodes the measured {} s",
            fmt_f(m),
            field.key(),
            fmt_f(measured)
        ),
        (false, Some((m, field)), _) => format!(
            "fitted: the factor at which this layout's estimate takes the measured {} s ({})",
            fmt_f(m),
            field.key()
        ),
        (false, None, _) => "uncalibrated".to_string(),
    };
    report.explain(
        Output::CalibrationComputeFactor,
        "calibration_compute_factor multiplies the estimate's compute (matrix products, attention, memory-bound kernels, the optimizer step); the pipeline's bubble follows the calibrated micro batch",
        format!("calibration_compute_factor = {} ({from})", fmt_f(k)),
    );
    let comm_from = match c.comm {
        Comm::Typed => "as typed",
        Comm::Fitted { .. } => "fitted with the compute factor from two runs at two node counts",
        Comm::Kept => "the network model's: it needs a second measured run at another node count",
    };
    report.explain(
        Output::CalibrationCommFactor,
        "calibration_comm_factor multiplies the estimate's communication (its links' bandwidths ÷ the factor, their latencies × the factor): what overlaps the compute is hidden as before, what is exposed is that many times as long",
        format!("calibration_comm_factor = {} ({comm_from})", fmt_f(comm)),
    );
    if let Some((m, _)) = c.measured {
        let error = (uncalibrated - m) / m;
        report.set(Output::StepTimeUncalibratedError, Num::Float(error));
        report.explain(
            Output::StepTimeUncalibratedError,
            "step_time_uncalibrated_error = (uncalibrated step time − measured step) ÷ measured step",
            format!(
                "({} − {}) ÷ {} = {}",
                fmt_f(uncalibrated),
                fmt_f(m),
                fmt_f(m),
                fmt_f(error)
            ),
        );
    }
}
