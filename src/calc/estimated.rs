//! What the model stage estimated for the resolved plan, typed: the memory on the device, the
//! GPU's usable memory, the step time with its parts, the tokens per second per GPU and the
//! MFU. `fit/` publishes it in [`Report::estimated`](super::Report) beside the outputs that
//! show the same values; the planner and the explorer read it, never the outputs.
//!
//! This module is vocabulary: plain data.

/// The parts of a step, seconds (each what is exposed, after overlap).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTime {
    pub compute: f64,
    pub tp: f64,
    pub cp: f64,
    pub ep: f64,
    pub pp_bubble: f64,
    pub dp: f64,
}

impl StepTime {
    pub fn total(&self) -> f64 {
        self.compute + self.tp + self.cp + self.ep + self.pp_bubble + self.dp
    }
}

/// The model stage's estimates for the report's own plan. `None`: not estimated (no model, no
/// GPU, or the rules did not get that far).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimated {
    /// Bytes on one GPU: the largest pipeline stage's tensors plus the CUDA context and NCCL's
    /// buffers (`memory_on_device_bytes`).
    pub memory_on_device: Option<u128>,
    /// The GPU's memory the fit is judged against: what the driver gives PyTorch, bytes
    /// (`gpu_usable_memory_bytes`).
    pub gpu_memory: Option<u128>,
    /// The step time and its parts (`step_time_seconds`, `step_*_seconds`).
    pub step: Option<StepTime>,
    /// From the MFU when one is typed, else from the step time (`tokens_per_second_per_gpu`).
    pub tokens_per_second_per_gpu: Option<f64>,
    /// In the framework's FLOPs convention (`mfu_estimate`).
    pub mfu: Option<f64>,
    /// The compute factor the step time used (`calibration_compute_factor`): typed, or fitted
    /// from the measured speed of the link's own layout. `None`: uncalibrated.
    pub compute_factor: Option<f64>,
    /// The communication factor the step time used (`calibration_comm_factor`): typed, or
    /// fitted from two measured runs at two node counts. `None`: uncalibrated.
    pub comm_factor: Option<f64>,
}
