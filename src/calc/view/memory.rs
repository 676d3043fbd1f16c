//! "Model, memory and compute": the model panel's groups, each with the source of its values, and
//! the stacked bar of the estimated memory per GPU against the GPU's memory.

use super::ValueGroup;
use crate::calc::{Field, Level, Num, Output, Report};

pub const PARAMETERS: ValueGroup = ValueGroup {
    title: "Parameters",
    source:
        "transformers num_parameters() (for Megatron's own arguments, its GPTModel's); with a LoRA adapter, PEFT's count for axolotl's LoraConfig",
    outputs: &[
        Output::NumParameters,
        Output::NumParametersExcludeEmbeddings,
        Output::TrainableParameters,
    ],
};

pub const ZERO_MODEL_STATES: ValueGroup = ValueGroup {
    title: "DeepSpeed ZeRO model states",
    source: "DeepSpeed 0.19.8's own estimator (model states only, no activations)",
    outputs: &[
        Output::ZeroModelStatesGpuBytes,
        Output::ZeroModelStatesCpuBytes,
    ],
};

pub const MEGATRON_MEMORY: ValueGroup = ValueGroup {
    title: "Megatron-LM theoretical memory",
    source: "Megatron-LM 0.19.2 report_theoretical_memory (first pipeline stage; blind to CP, full recompute, MoE/MLA activations)",
    outputs: &[
        Output::WeightAndOptimizerMemoryMb,
        Output::ActivationMemoryMb,
        Output::TotalMemoryMb,
        Output::PaddedVocabSize,
    ],
};

pub const MEMORY_ESTIMATE: ValueGroup = ValueGroup {
    title: "Estimated memory per GPU",
    source: "Published formulas, not a measurement: ZeRO (Rajbhandari et al. 2019) for weights, gradients and optimizer states as this framework shards them; activations per tensor (Korthikanti et al. 2022) for the micro batches each pipeline stage holds in flight, the largest stage deciding. Reserved: what PyTorch's caching allocator reserves for these tensors, from its block and segment sizes (an estimate; fragmentation from the order of allocations is not counted). On the device: the reserved bytes plus the CUDA context and the NCCL communicators' buffers (their documented defaults); fits is judged on it against what the driver gives PyTorch on the GPU.",
    outputs: &[
        Output::MemoryPerGpuBytes,
        Output::MemoryReservedBytes,
        Output::MemoryOnDeviceBytes,
        Output::WeightsBytes,
        Output::GradientsBytes,
        Output::OptimizerBytes,
        Output::ActivationBytes,
        Output::GpuMemoryBytes,
        Output::GpuUsableMemoryBytes,
    ],
};

pub const FLOPS: ValueGroup = ValueGroup {
    title: "FLOPs per token",
    source: "each framework's own counter; they differ in how they count attention, experts and the vocabulary",
    outputs: &[
        Output::FlopsPerToken,
        Output::FlopsPerTokenHf,
        Output::FlopsPerTokenMegatron,
        Output::FlopsPerTokenTorchtitan,
        Output::FlopsPerTokenNanotron,
        Output::PeakTflops,
        Output::TokensPerSecondPerGpu,
    ],
};

pub const STEP_TIME: ValueGroup = ValueGroup {
    title: "Estimated step time",
    source: "A mechanism estimate, not a measurement (estimate/time.rs): the framework's FLOPs at the GPU's measured matmul and attention rates, the memory-bound kernels at its memory bandwidth, and the communication its layout does not hide, by NCCL's bus-bandwidth convention over NVLink or the NICs; the pipeline's bubble; with a calibration, its compute × calibration_compute_factor and its communication × calibration_comm_factor beside the uncalibrated step time. Two constants fitted on Narayanan et al. 2021 and Korthikanti et al. 2022 (A100); docs/estimates.md lists its error against published runs.",
    outputs: &[
        Output::StepTimeSeconds,
        Output::MfuEstimate,
        Output::StepComputeSeconds,
        Output::StepTpCommSeconds,
        Output::StepCpCommSeconds,
        Output::StepEpCommSeconds,
        Output::StepPpBubbleSeconds,
        Output::StepDpCommSeconds,
        Output::StepTimeUncalibratedSeconds,
        Output::CalibrationComputeFactor,
        Output::CalibrationCommFactor,
        Output::StepTimeUncalibratedError,
    ],
};

/// The model panel's groups, in page order.
pub const MODEL_GROUPS: [ValueGroup; 6] = [
    PARAMETERS,
    ZERO_MODEL_STATES,
    MEGATRON_MEMORY,
    MEMORY_ESTIMATE,
    FLOPS,
    STEP_TIME,
];

/// One part of the memory bar.
#[derive(Clone, Debug, PartialEq)]
pub struct BarPart {
    pub output: Output,
    pub label: &'static str,
    pub bytes: u128,
    /// Left edge and width, in percent of the bar (the larger of the total and the GPU).
    pub x: f64,
    pub width: f64,
    /// `12.3 GiB (45 %)` of the total.
    pub text: String,
}

/// The stacked bar of the estimated memory per GPU against the GPU's memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryBar {
    pub parts: Vec<BarPart>,
    pub total: u128,
    pub total_text: String,
    /// Where the GPU's memory ends, in percent of the bar, and its size.
    pub capacity: Option<(f64, String)>,
    /// Whether the total fits the GPU (`None` without a GPU).
    pub fits: Option<bool>,
}

fn bytes_of(report: &Report, output: Output) -> Option<u128> {
    match report.value(output)? {
        Num::Int(v) => u128::try_from(v).ok(),
        Num::Float(_) => None,
    }
}

/// The bar, when the report has the estimate: the four parts of the tensors PyTorch allocates,
/// then what the runtime holds beside them (the difference to `memory_on_device_bytes`).
pub fn memory_bar(report: &Report) -> Option<MemoryBar> {
    let allocated = bytes_of(report, Output::MemoryPerGpuBytes)?;
    let total = bytes_of(report, Output::MemoryOnDeviceBytes).unwrap_or(allocated);
    let reserved = bytes_of(report, Output::MemoryReservedBytes)
        .unwrap_or(allocated)
        .clamp(allocated, total.max(allocated));
    // what the driver gives PyTorch, the figure "fits" is judged on
    let capacity = bytes_of(report, Output::GpuUsableMemoryBytes)
        .or_else(|| bytes_of(report, Output::GpuMemoryBytes));
    let scale = capacity.map_or(total, |c| c.max(total)).max(1) as f64;
    let pct = |b: u128| b as f64 * 100.0 / scale;
    let mut x = 0.0;
    let mut parts = Vec::new();
    for (output, label) in [
        (Output::WeightsBytes, "Weights"),
        (Output::GradientsBytes, "Gradients"),
        (Output::OptimizerBytes, "Optimizer states"),
        (Output::ActivationBytes, "Activations"),
        (
            Output::MemoryReservedBytes,
            "Allocator's rounding (reserved, not allocated)",
        ),
        (Output::MemoryOnDeviceBytes, "CUDA context and NCCL buffers"),
    ] {
        let extra = match output {
            Output::MemoryReservedBytes => Some(reserved - allocated),
            Output::MemoryOnDeviceBytes => total.checked_sub(reserved),
            _ => None,
        };
        let bytes = match (output, extra) {
            (Output::MemoryReservedBytes | Output::MemoryOnDeviceBytes, Some(0) | None) => continue,
            (_, Some(b)) => b,
            (_, None) => bytes_of(report, output)?,
        };
        let width = pct(bytes);
        let share = if total == 0 {
            0.0
        } else {
            bytes as f64 * 100.0 / total as f64
        };
        parts.push(BarPart {
            output,
            label,
            bytes,
            x,
            width,
            text: format!("{} ({share:.0} %)", crate::calc::num::gib(bytes)),
        });
        x += width;
    }
    Some(MemoryBar {
        parts,
        total,
        total_text: crate::calc::num::gib(total),
        capacity: capacity.map(|c| (pct(c), crate::calc::num::gib(c))),
        fits: capacity.map(|c| total <= c),
    })
}

/// The memory warning the model stage gave (at the GPU field), for the memory panel.
pub fn memory_warning(report: &Report) -> Option<&str> {
    report
        .diags
        .iter()
        .find(|d| d.field == Field::Gpu && d.level == Level::Warning)
        .map(|d| d.message.as_str())
}

/// Whether the page has anything to show in the model panel.
pub fn has_model(report: &Report) -> bool {
    report.value(Output::NumParameters).is_some()
        || report.value(Output::TotalMemoryMb).is_some()
        || report.value(Output::FlopsPerToken).is_some()
}
