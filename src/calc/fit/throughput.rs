//! The GPU's outputs (its memory and peak) and the throughput an MFU implies.

use crate::calc::gpu::usable;
use crate::calc::num::{float_repr as fmt_f, gib};
use crate::calc::{Field, Level, Num, Output, Report};

/// Sets `gpu_memory_bytes`, `gpu_usable_memory_bytes` and `peak_tflops` from the plan's GPU;
/// returns the peak, TFLOP/s.
pub(super) fn gpu_outputs(report: &mut Report) -> Option<f64> {
    let gpu = report.plan.settings.gpu;
    if let Some(b) = gpu.memory_bytes {
        report.set(Output::GpuMemoryBytes, Num::Int(b as i128));
        usable_memory(report, b);
    }
    gpu.peak.map(|(peak, name)| {
        report.set(Output::PeakTflops, Num::Int(i128::from(peak)));
        report.explain(
            Output::PeakTflops,
            "peak_tflops = the GPU's dense BF16 peak (torchtitan 0.3.0 get_peak_flops)",
            format!("peak_tflops = {peak} ({name})"),
        );
        peak as f64
    })
}

/// Tokens per second per GPU from the MFU: `mfu × peak ÷ FLOPs per token` in the framework's
/// convention (`per_token`), an estimate.
pub(super) fn estimate(
    report: &mut Report,
    peak: Option<f64>,
    per_token: Option<(f64, &'static str)>,
) -> Option<f64> {
    let mfu = report.plan.settings.gpu.mfu;
    let (Some(peak), Some(mfu), Some((fpt, convention))) = (peak, mfu, per_token) else {
        return None;
    };
    let tps = mfu * peak * 1e12 / fpt;
    if !tps.is_finite() || tps <= 0.0 {
        return None;
    }
    report.set(Output::TokensPerSecondPerGpu, Num::Float(tps));
    report.estimated.tokens_per_second_per_gpu = Some(tps);
    report.explain(
        Output::TokensPerSecondPerGpu,
        format!("tokens_per_second_per_gpu = mfu × peak ÷ FLOPs per token ({convention}) — an estimate, not a measurement"),
        format!(
            "tokens_per_second_per_gpu = {} × {}e12 ÷ {} = {}",
            fmt_f(mfu),
            fmt_f(peak),
            fmt_f(fpt),
            fmt_f(tps)
        ),
    );
    Some(tps)
}

/// Tokens per second per GPU from the step-time estimate (no MFU typed).
pub(super) fn from_step_time(report: &mut Report, tps: f64) {
    report.set(Output::TokensPerSecondPerGpu, Num::Float(tps));
    report.estimated.tokens_per_second_per_gpu = Some(tps);
    report.explain(
        Output::TokensPerSecondPerGpu,
        "tokens_per_second_per_gpu = tokens per step ÷ step_time_seconds ÷ GPUs — the step-time estimate, not a measurement",
        format!("tokens_per_second_per_gpu = {}", fmt_f(tps)),
    );
}

/// What the fit is judged against (`gpu_usable_memory_bytes`): the memory the driver gives
/// PyTorch on the GPU (`torch.cuda.get_device_properties(i).total_memory`, by GPU variant, with
/// its source), or `gpu_memory_gib` when typed; a GPU without a published figure keeps its
/// nominal memory, and the GPU field says so.
fn usable_memory(report: &mut Report, nominal: u128) {
    let gpu = report.plan.settings.gpu;
    let (bytes, rule, source) = match (gpu.memory_typed, gpu.gpu) {
        (true, _) | (false, None) => (
            nominal,
            "gpu_usable_memory_bytes = gpu_memory_gib × 2^30 (what you typed as usable)",
            format!("{nominal} B"),
        ),
        (false, Some(g)) => match usable(g) {
            Some(u) => (
                u.bytes,
                "gpu_usable_memory_bytes = what the driver gives PyTorch on this GPU (torch.cuda.get_device_properties(i).total_memory), a published figure",
                format!("{} B ({}, {}): {}", u.bytes, g.name, gib(u.bytes), u.source),
            ),
            None => {
                report.diag(
                    Field::Gpu,
                    Level::Note,
                    format!(
                        "the memory the driver gives PyTorch on the {} is not known to dpcalc: the fit is judged against its nominal {} GB (type gpu_memory_gib to set what your driver leaves)",
                        g.name, g.memory_gb
                    ),
                );
                (
                    nominal,
                    "gpu_usable_memory_bytes = the GPU's nominal memory (no published total_memory found for this GPU)",
                    format!("{nominal} B ({}, {} GB nominal)", g.name, g.memory_gb),
                )
            }
        },
    };
    if report
        .set_int(Output::GpuUsableMemoryBytes, bytes)
        .is_some()
    {
        report.estimated.gpu_memory = Some(bytes);
        report.explain(Output::GpuUsableMemoryBytes, rule, source);
    }
}
