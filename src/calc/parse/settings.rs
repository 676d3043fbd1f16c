//! The model stage's shared keys, read: the GPU group, DeepSpeed's `zero_optimization` keys,
//! `gradient_checkpointing`, an optimizer's name, the measured throughput. Each framework's
//! settings reader (`Spec::fit.settings`, in its folder) calls the ones its form has, reads its
//! own keys itself, and ends with [`publish`]: the plan's [`Settings`] then hold everything the
//! model stage and tokens-and-time read.

use super::{Param, Reader};
use crate::calc::field::Field;
use crate::calc::gpu::{gpu as find_gpu, GPUS};
use crate::calc::plan::{GpuSettings, Recompute, Settings, Zero, CALIBRATION_BOUNDS};
use crate::calc::report::{Diag, Level};
use crate::calc::spec::{PlannerChoices, Spec};
use crate::calc::{RawInputs, Report};

/// What the planner varies where the framework reads DeepSpeed's keys and
/// `gradient_checkpointing` (axolotl, the HF Trainer, DeepSpeed; `Spec::layout.planner`): gradient
/// checkpointing off or on, ZeRO stage 0 to 3.
pub const DEEPSPEED_CHOICES: PlannerChoices = PlannerChoices {
    recompute: &[
        ("none", &[(Field::GradientCheckpointing, "false")]),
        ("full", &[(Field::GradientCheckpointing, "true")]),
    ],
    sharding: &[
        ("replicated", &[(Field::ZeroStage, "0")]),
        ("zero1", &[(Field::ZeroStage, "1")]),
        ("zero2", &[(Field::ZeroStage, "2")]),
        ("zero3", &[(Field::ZeroStage, "3")]),
    ],
    virtual_stages: None,
};

/// The GPU group (read first: the page lists it first): the GPU, its memory (the GPU's, or
/// `gpu_memory_gib`) and the MFU.
pub fn gpu(raw: &RawInputs, diags: &mut Vec<Diag>) -> GpuSettings {
    let mut rd = Reader { raw, diags };
    let g = match rd.text(Field::Gpu) {
        Param::Given(id) => match find_gpu(&id) {
            Some(g) => Some(g),
            None => {
                rd.diags.push(Diag::new(
                    Field::Gpu,
                    Level::Error,
                    format!(
                        "dpcalc does not know the GPU “{}”: pick one of {}",
                        super::shorten(&id),
                        GPUS.iter().map(|g| g.id).collect::<Vec<_>>().join(", ")
                    ),
                ));
                None
            }
        },
        _ => None,
    };
    let mem = rd.real(Field::GpuMemoryGib);
    let mfu = match rd.real(Field::Mfu) {
        Param::Given(x) if x > 0.0 && x <= 1.0 => Some(x),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::Mfu,
                Level::Error,
                "mfu is a fraction of the GPU's peak: more than 0, at most 1 (0.4 is a good run)",
            ));
            None
        }
        _ => None,
    };
    let memory_bytes = match mem {
        Param::Given(gib) if gib > 0.0 && gib < 1.0e9 => Some((gib * 1_073_741_824.0) as u128),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::GpuMemoryGib,
                Level::Error,
                "gpu_memory_gib must be more than 0 (and below a billion GiB)",
            ));
            None
        }
        _ => g.map(|g| u128::from(g.memory_gb) * 1_000_000_000),
    };
    if mfu.is_some() && g.is_none() {
        rd.diags.push(Diag::new(
            Field::Gpu,
            Level::Hint,
            "an MFU needs the GPU (its peak FLOPS) to estimate tokens per second",
        ));
    }
    let mut bandwidth = |field: Field| match rd.real(field) {
        Param::Given(x) if x > 0.0 && x < 1.0e6 => Some(x),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                field,
                Level::Error,
                "a bandwidth is in GB/s per GPU: more than 0 (50 is a 400 Gb/s NIC), below a million",
            ));
            None
        }
        _ => None,
    };
    let intra_gbps = bandwidth(Field::IntraNodeGbps);
    let inter_gbps = bandwidth(Field::InterNodeGbps);
    GpuSettings {
        gpu: g,
        intra_gbps,
        inter_gbps,
        peak: g.map(|g| (g.peak_tflops, g.name)),
        memory_bytes,
        memory_typed: matches!(mem, Param::Given(_)),
        mfu,
    }
}

/// `gradient_checkpointing` (axolotl, the Trainer, DeepSpeed's runs of HF models): full recompute
/// when true.
pub fn gradient_checkpointing(raw: &RawInputs, diags: &mut Vec<Diag>) -> Recompute {
    let mut rd = Reader { raw, diags };
    if rd.flag(Field::GradientCheckpointing).or(false) == Some(true) {
        Recompute::Full
    } else {
        Recompute::None
    }
}

/// A `torch.compile` flag (`field`, default false): the memory-bound kernels fused by Inductor,
/// else eager.
pub fn compiled(field: Field, raw: &RawInputs, diags: &mut Vec<Diag>) -> crate::calc::plan::Fusion {
    use crate::calc::plan::Fusion;
    let mut rd = Reader { raw, diags };
    if rd.flag(field).or(false) == Some(true) {
        Fusion::Compiled
    } else {
        Fusion::Eager
    }
}

fn device(rd: &mut Reader, field: Field) -> Option<bool> {
    match rd.text(field) {
        Param::Given(d) => match d.to_ascii_lowercase().as_str() {
            "cpu" | "nvme" => Some(true),
            "none" => Some(false),
            _ => {
                rd.diags.push(Diag::new(
                    field,
                    Level::Error,
                    format!("{} is cpu, nvme or none", field.key()),
                ));
                None
            }
        },
        Param::Invalid => None,
        Param::Absent => Some(false),
    }
}

/// DeepSpeed's `zero_optimization` keys. `None`: no stage given, or an invalid value (said at
/// its field).
pub fn zero(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<Zero> {
    let mut rd = Reader { raw, diags };
    let stage = rd.count(Field::ZeroStage);
    let offload_optimizer = device(&mut rd, Field::OffloadOptimizerDevice);
    let offload_param = device(&mut rd, Field::OffloadParamDevice);
    let zero_init = rd.flag(Field::ZeroInit).or(true);
    let stage = match stage {
        Param::Given(s) if s <= 3 => s,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::ZeroStage,
                Level::Error,
                "zero_optimization.stage is 0, 1, 2 or 3",
            ));
            return None;
        }
        _ => return None,
    };
    Some(Zero {
        stage,
        offload_optimizer: offload_optimizer?,
        offload_param: offload_param?,
        zero_init: zero_init?,
    })
}

/// Bytes of optimizer state per trained parameter for an optimizer name (transformers'
/// `OptimizerNames`): fp32 master weights plus the states; `None` for a name not recognised.
fn optimizer_bytes(name: &str) -> Option<u64> {
    let n = name.to_ascii_lowercase();
    Some(if n.contains("8bit") {
        6 // 4 B master + two 1-byte states
    } else if n.starts_with("adamw") || n.starts_with("adam") || n.contains("lamb") {
        12
    } else if n.contains("lion") || n.starts_with("sgd") || n.contains("rmsprop") {
        8
    } else if n.contains("adafactor") {
        4
    } else {
        return None;
    })
}

/// The optimizer's bytes per trained parameter when it runs on 16-bit parameters with no fp32
/// master copy (`k`: [`optimizer`]'s count with one): torch's AdamW, Lion and SGD allocate their
/// states `torch.zeros_like(p)` (torch/optim/adamw.py `_init_group`, adam.py, sgd.py: the
/// parameter's dtype), so the 4-byte master goes and each 4-byte state becomes 2; the 8-bit
/// optimizers keep their 1-byte states whatever the parameter's dtype (bitsandbytes
/// `Optimizer8bit.init_state`: `torch.uint8`), and Adafactor's factored states are left at 0.
pub fn states_in_param_dtype(k: u64) -> u64 {
    match k {
        6 => 2,
        _ => k.saturating_sub(4) / 2,
    }
}

/// Whether the optimizer named at `field` is one of bitsandbytes' 8-bit ones (`adamw_bnb_8bit`,
/// `adamw_8bit`, `paged_adamw_8bit`, …: the names the Trainer's `OptimizerNames` gives them).
pub fn optimizer_8bit(field: Field, raw: &RawInputs) -> bool {
    raw.get(field).to_ascii_lowercase().contains("8bit")
}

/// The optimizer named at `field` (axolotl's `optimizer`, the Trainer's `optim`): its state bytes
/// per trained parameter, AdamW's 12 when absent or unknown (a note says so).
pub fn optimizer(field: Field, raw: &RawInputs, diags: &mut Vec<Diag>) -> u64 {
    let mut rd = Reader { raw, diags };
    match rd.text(field) {
        Param::Given(name) => match optimizer_bytes(&name) {
            Some(b) => b,
            None => {
                rd.diags.push(Diag::new(
                    field,
                    Level::Note,
                    format!("dpcalc does not know the optimizer “{}”: the memory estimate assumes AdamW's 12 bytes per trained parameter", super::shorten(&name)),
                ));
                12
            }
        },
        _ => 12,
    }
}

/// Adds reading messages, except at a field the framework's rules (or an earlier reading)
/// already spoke about: a key both read keeps one message.
pub fn merge(report: &mut Report, diags: Vec<Diag>) {
    for d in diags {
        if !report.diags.iter().any(|x| x.field == d.field) {
            report.diags.push(d);
        }
    }
}

/// The largest `max_nodes` the scaling view accepts (11 sizes: 1, 2, 4, …, 1,024 nodes).
pub const MAX_NODES: u64 = 1024;

/// Ends a framework's settings reader: its messages (see [`merge`]), the model the link names
/// (not in a first view, which leaves a link naming a model to the full app: see
/// [`super::model::names_model`]), whether it has experts, and the measured throughput; then
/// publishes them in the plan.
pub fn publish(
    spec: &'static Spec,
    raw: &RawInputs,
    report: &mut Report,
    mut settings: Settings,
    diags: Vec<Diag>,
) {
    merge(report, diags);
    if !cfg!(feature = "first") {
        settings.model = super::model::resolve(spec, raw, report);
        settings.has_experts = super::model::has_experts(spec, raw, settings.model.as_ref());
    }
    let mut diags = Vec::new();
    let mut rd = Reader {
        raw,
        diags: &mut diags,
    };
    settings.tokens_per_second_per_gpu = rd.real(Field::TokensPerSecondPerGpu);
    settings.seconds_per_step = rd.real(Field::SecondsPerStep);
    // the app's own inputs (`field::APP_ONLY`): a first view reads none of them
    if cfg!(feature = "first") {
        merge(report, diags);
        report.plan.settings = settings;
        return;
    }
    settings.calibration_compute_factor =
        factor(&mut rd, Field::CalibrationComputeFactor, "compute");
    settings.calibration_comm_factor =
        factor(&mut rd, Field::CalibrationCommFactor, "communication");
    settings.second_run_nodes = match rd.count(Field::SecondRunNodes) {
        Param::Given(0) => {
            rd.diags.push(Diag::new(
                Field::SecondRunNodes,
                Level::Error,
                "second_run_nodes must be at least 1",
            ));
            Param::Invalid
        }
        n => n,
    };
    // the second run's speeds are its own report's (`Framework::compute`): read here for their
    // messages at their own fields
    for f in [
        Field::SecondRunTokensPerSecondPerGpu,
        Field::SecondRunSecondsPerStep,
    ] {
        if rd.real(f).is_given() && !settings.second_run_nodes.is_given() {
            rd.diags.push(Diag::new(
                f,
                Level::Warning,
                "A second run's speed calibrates the communication with its node count: give second_run_nodes too.",
            ));
        }
    }
    settings.gpu_hour_price = rd.real(Field::GpuHourPrice);
    settings.deadline_hours = match rd.real(Field::DeadlineHours) {
        Param::Given(h) if h <= 0.0 => {
            rd.diags.push(Diag::new(
                Field::DeadlineHours,
                Level::Error,
                "deadline_hours must be more than 0",
            ));
            Param::Invalid
        }
        p => p,
    };
    settings.max_nodes = match rd.count(Field::MaxNodes) {
        Param::Given(n) if !(1..=MAX_NODES).contains(&n) => {
            rd.diags.push(Diag::new(
                Field::MaxNodes,
                Level::Error,
                format!("max_nodes must be from 1 to {MAX_NODES}"),
            ));
            Param::Invalid
        }
        p => p,
    };
    merge(report, diags);
    report.plan.settings = settings;
}

/// A calibration factor as typed (`calibration_compute_factor`, `calibration_comm_factor`):
/// within [`CALIBRATION_BOUNDS`], else an error at its field.
fn factor(rd: &mut Reader, field: Field, what: &str) -> Option<f64> {
    match rd.real(field) {
        Param::Given(k) if (CALIBRATION_BOUNDS.0..=CALIBRATION_BOUNDS.1).contains(&k) => Some(k),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                field,
                Level::Error,
                format!(
                    "{} multiplies the estimate's {what}: from {} to {} (1 is uncalibrated); beyond, the measured run is another setup than the link's",
                    field.key(), CALIBRATION_BOUNDS.0, CALIBRATION_BOUNDS.1
                ),
            ));
            None
        }
        _ => None,
    }
}
