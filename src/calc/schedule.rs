//! Tokens and time, for every framework: what a framework module computed (global batch, steps
//! per epoch, the optimizer steps of the run, warmup, eval and save intervals) turned into token
//! counts, and, with a measured throughput, into time per step, wall-clock time and GPU-hours.
//!
//! This is dpcalc's own arithmetic, not a framework's: it runs after every framework's
//! `compute_release` ([`finish`], called from `Framework::compute`), reads only the report's
//! standard outputs and the throughput fields, and never changes a value the framework module
//! set. The formulas (no rounding anywhere in the stored values; the display rounds to three
//! significant digits, see [`human_count`] and [`human_duration`]):
//!
//! - `tokens_per_step = global_batch_size × sequence length` (only when the framework module did
//!   not set it: it knows its own default sequence length and token budget);
//! - `tokens_per_epoch = tokens_per_step × steps_per_epoch`, `total_tokens = tokens_per_step ×
//!   max_steps` (token *slots*: what the optimizer steps process, padding included);
//! - `time_per_step_seconds = tokens_per_step / (tokens_per_second_per_gpu × world_size)`, or
//!   `seconds_per_step` as given;
//! - `total_time_seconds = time_per_step_seconds × max_steps`;
//! - `gpu_hours = total_time_seconds × world_size / 3600`;
//! - `total_cost = gpu_hours × gpu_hour_price` (with `gpu_hour_price`).
//!
//! The integer products are exact (i128, checked); the time values are `f64` (IEEE division and
//! multiplication, correctly rounded, in the order written above).

use super::{Field, Level, Num, Output, Param, Report};

/// Adds the token and time outputs to a framework's report (the hook in `Framework::compute`).
/// `estimated`: tokens per second per GPU the model stage estimated (from an MFU, else its
/// step-time estimate) with the time rule that names it, used when no
/// throughput is measured.
pub fn finish(mut report: Report, estimated: Option<(f64, &'static str)>) -> Report {
    report.enter(super::Stage::Tokens);
    post_process(&mut report, estimated);
    report
}

/// A positive whole value of an output (steps and batches are whole; a `-1` "unset" is not).
fn positive_int(report: &Report, output: Output) -> Option<i128> {
    match report.value(output)? {
        Num::Int(v) if v > 0 => Some(v),
        Num::Float(x) if x > 0.0 && x.fract() == 0.0 && x < 9.0e15 => Some(x as i128),
        _ => None,
    }
}

/// See the module documentation.
pub fn post_process(report: &mut Report, estimated: Option<(f64, &'static str)>) {
    tokens_per_step(report);
    let tokens = positive_int(report, Output::TokensPerStep);
    if let Some(t) = tokens {
        if let Some(spe) = positive_int(report, Output::StepsPerEpoch) {
            if report.value(Output::TokensPerEpoch).is_none() {
                if let Some(v) = t.checked_mul(spe) {
                    report.set(Output::TokensPerEpoch, Num::Int(v));
                    report.explain_with(
                        Output::TokensPerEpoch,
                        "tokens_per_epoch = tokens_per_step × steps_per_epoch (token slots)",
                        || format!("tokens_per_epoch = {t} × {spe} = {v}"),
                    );
                }
            }
        }
        if let Some(steps) = positive_int(report, Output::MaxSteps) {
            if report.value(Output::TotalTokens).is_none() {
                if let Some(v) = t.checked_mul(steps) {
                    report.set(Output::TotalTokens, Num::Int(v));
                    report.explain_with(
                        Output::TotalTokens,
                        "total_tokens = tokens_per_step × max_steps (token slots)",
                        || format!("total_tokens = {t} × {steps} = {v}"),
                    );
                }
            }
        }
    }
    time(report, tokens, estimated);
}

/// `global_batch_size × sequence length`, when the framework module left it out and the
/// sequence length is known (the plan's: its key, or the framework's default).
fn tokens_per_step(report: &mut Report) {
    if report.value(Output::TokensPerStep).is_some() {
        return;
    }
    let Some(len) = report.plan.seq_len else {
        return;
    };
    let Some(global) = positive_int(report, Output::GlobalBatchSize) else {
        return;
    };
    if let Some(t) = global.checked_mul(i128::from(len)) {
        report.set(Output::TokensPerStep, Num::Int(t));
        report.explain_with(
            Output::TokensPerStep,
            "tokens_per_step = global batch × sequence length",
            || format!("tokens_per_step = {global} × {len} = {t}"),
        );
    }
}

fn time(report: &mut Report, tokens: Option<i128>, estimated: Option<(f64, &'static str)>) {
    let tps = report.plan.settings.tokens_per_second_per_gpu;
    let sps = report.plan.settings.seconds_per_step;
    // a measured throughput wins over the MFU estimate
    let (tps, rule) = match (tps, sps, estimated) {
        (Param::Absent, Param::Absent, Some((x, from))) => (Param::Given(x), from),
        _ => (
            tps,
            "time_per_step = tokens_per_step / (tokens_per_second_per_gpu × world_size)",
        ),
    };
    if let (Param::Given(_), Param::Given(_)) = (tps, sps) {
        report.diag(
            Field::SecondsPerStep,
            Level::Error,
            "give either tokens_per_second_per_gpu or seconds_per_step, not both: they can disagree, and dpcalc does not pick one",
        );
        return;
    }
    let world = positive_int(report, Output::WorldSize);
    let Some(per_step) = per_step_time(report, (tps, sps, rule), tokens, world) else {
        return;
    };
    report.set(Output::TimePerStepSeconds, Num::Float(per_step));
    run_time(report, per_step, tps.is_given(), world);
}

/// The time of one step: the tokens of a step at the throughput (measured, or the model stage's
/// estimate), or `seconds_per_step` as given; `None` with the message when neither works.
fn per_step_time(
    report: &mut Report,
    (tps, sps, rule): (Param<f64>, Param<f64>, &str),
    tokens: Option<i128>,
    world: Option<i128>,
) -> Option<f64> {
    Some(match (tps, sps) {
        (Param::Given(x), _) if x <= 0.0 => {
            report.diag(
                Field::TokensPerSecondPerGpu,
                Level::Error,
                "tokens_per_second_per_gpu must be more than 0",
            );
            return None;
        }
        (_, Param::Given(x)) if x <= 0.0 => {
            report.diag(
                Field::SecondsPerStep,
                Level::Error,
                "seconds_per_step must be more than 0",
            );
            return None;
        }
        (Param::Given(x), _) => {
            let (Some(t), Some(w)) = (tokens, world) else {
                report.diag(
                    Field::TokensPerSecondPerGpu,
                    Level::Hint,
                    "the time per step needs the tokens per step (global batch and sequence length)",
                );
                return None;
            };
            let s = t as f64 / (x * w as f64);
            if !s.is_finite() || s <= 0.0 {
                report.diag(
                    Field::TokensPerSecondPerGpu,
                    Level::Error,
                    "the time per step is too large or too small to represent",
                );
                return None;
            }
            report.explain_with(Output::TimePerStepSeconds, rule, || {
                format!(
                    "time_per_step = {t} / ({} × {w}) = {} s",
                    super::num::float_repr(x),
                    super::num::float_repr(s)
                )
            });
            s
        }
        (_, Param::Given(x)) => {
            report.explain_with(
                Output::TimePerStepSeconds,
                "time_per_step = seconds_per_step (as given)",
                || format!("time_per_step = {} s", super::num::float_repr(x)),
            );
            x
        }
        _ => return None,
    })
}

/// The run's total time and GPU-hours, from the time of one step (`throughput`: it came from
/// `tokens_per_second_per_gpu`, whose field a too-large total is reported at).
fn run_time(report: &mut Report, per_step: f64, throughput: bool, world: Option<i128>) {
    let Some(steps) = positive_int(report, Output::MaxSteps) else {
        return;
    };
    let given = if throughput {
        Field::TokensPerSecondPerGpu
    } else {
        Field::SecondsPerStep
    };
    let total = per_step * steps as f64;
    if !total.is_finite() {
        report.diag(
            given,
            Level::Error,
            "the run's total time is too large to represent",
        );
        return;
    }
    report.set(Output::TotalTimeSeconds, Num::Float(total));
    report.explain_with(
        Output::TotalTimeSeconds,
        "total_time = time_per_step × max_steps",
        || {
            format!(
                "total_time = {} × {steps} = {} s ({})",
                super::num::float_repr(per_step),
                super::num::float_repr(total),
                human_duration(total)
            )
        },
    );
    let Some(w) = world else { return };
    let hours = total * w as f64 / 3600.0;
    if !hours.is_finite() {
        report.diag(
            given,
            Level::Error,
            "the GPU-hours are too large to represent",
        );
    } else {
        report.set(Output::GpuHours, Num::Float(hours));
        report.explain_with(
            Output::GpuHours,
            "gpu_hours = total_time × world_size / 3600",
            || {
                format!(
                    "gpu_hours = {} × {w} / 3600 = {}",
                    super::num::float_repr(total),
                    super::num::float_repr(hours)
                )
            },
        );
        cost(report, hours);
    }
}

/// The run's cost: `total_cost = gpu_hours × gpu_hour_price`, with a price given.
fn cost(report: &mut Report, hours: f64) {
    // the price is one of the app's own inputs (`field::APP_ONLY`): a first view has none
    if cfg!(feature = "first") {
        return;
    }
    let Param::Given(price) = report.plan.settings.gpu_hour_price else {
        return;
    };
    let total = hours * price;
    if !total.is_finite() {
        report.diag(
            Field::GpuHourPrice,
            Level::Error,
            "the run's cost is too large to represent",
        );
        return;
    }
    report.set(Output::TotalCost, Num::Float(total));
    report.explain_with(
        Output::TotalCost,
        "total_cost = gpu_hours × gpu_hour_price",
        || {
            format!(
                "total_cost = {} × {} = {}",
                super::num::float_repr(hours),
                super::num::float_repr(price),
                super::num::float_repr(total)
            )
        },
    );
}

/// Three significant digits, without a trailing `.0`.
fn sig3(x: f64) -> String {
    let decimals = if x < 10.0 {
        2
    } else if x < 100.0 {
        1
    } else {
        0
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A count in the units people read: `950`, `1.2 K`, `3.46 M`, `12.6 B`, `1.05 T` (three
/// significant digits, rounded half to even by `format!`; the exact value is in `data-value`).
pub fn human_count(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let neg = x < 0.0;
    let a = x.abs();
    const UNITS: [(f64, &str); 4] = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")];
    let mut out = None;
    for (i, &(scale, unit)) in UNITS.iter().enumerate() {
        if a >= scale {
            let v = a / scale;
            let shown = sig3(v);
            // 999.6 K rounds to 1000 K: say 1 M instead.
            out = Some(if shown == "1000" && i > 0 {
                format!("1 {}", UNITS[i - 1].1)
            } else {
                format!("{shown} {unit}")
            });
            break;
        }
    }
    let body = out.unwrap_or_else(|| {
        if a.fract() == 0.0 {
            format!("{a}")
        } else {
            let s = sig3(a);
            if s == "1000" {
                "1 K".into()
            } else {
                s
            }
        }
    });
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

/// A duration in the units people read: `850 ms`, `12.5 s`, `4.2 min`, `3.17 h`, `2.5 d`.
pub fn human_duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "—".into();
    }
    let (v, unit) = if seconds < 1.0 {
        (seconds * 1000.0, "ms")
    } else if seconds < 60.0 {
        (seconds, "s")
    } else if seconds < 3600.0 {
        (seconds / 60.0, "min")
    } else if seconds < 86_400.0 {
        (seconds / 3600.0, "h")
    } else {
        (seconds / 86_400.0, "d")
    };
    format!("{} {unit}", sig3(v))
}

/// How an output is shown next to its exact `data-value`.
pub fn human(output: Output, value: Num) -> String {
    let x = value.to_f64();
    match output {
        Output::TimePerStepSeconds
        | Output::TotalTimeSeconds
        | Output::StepTimeSeconds
        | Output::StepComputeSeconds
        | Output::StepTpCommSeconds
        | Output::StepCpCommSeconds
        | Output::StepEpCommSeconds
        | Output::StepPpBubbleSeconds
        | Output::StepDpCommSeconds
        | Output::StepTimeUncalibratedSeconds => human_duration(x),
        Output::MfuEstimate => format!("{} %", sig3(x * 100.0)),
        Output::StepTimeUncalibratedError => format!("{:+.1} %", x * 100.0),
        Output::CalibrationComputeFactor | Output::CalibrationCommFactor => {
            format!("× {}", crate::calc::num::float_repr(x))
        }
        Output::GpuHours => format!("{} GPU-hours", human_count(x)),
        _ => human_count(x),
    }
}

/// Marks that repeat every `every` steps along a run; at most [`Marks::LIMIT`] are listed.
#[derive(Clone, Debug, PartialEq)]
pub struct Marks {
    pub every: f64,
    /// How many fall within the run (the last step included).
    pub count: u64,
    /// The first marks, in steps (all of them when `count ≤ LIMIT`).
    pub at: Vec<f64>,
}

impl Marks {
    pub const LIMIT: usize = 200;

    fn new(every: f64, total: f64) -> Option<Marks> {
        if !(every > 0.0 && every.is_finite()) {
            return None;
        }
        let count = (total / every).floor();
        if count < 1.0 {
            return Some(Marks {
                every,
                count: 0,
                at: Vec::new(),
            });
        }
        let count = count.min(u64::MAX as f64) as u64;
        let shown = count.min(Self::LIMIT as u64);
        let at = (1..=shown).map(|k| k as f64 * every).collect();
        Some(Marks { every, count, at })
    }

    /// Whether every mark is listed.
    pub fn complete(&self) -> bool {
        self.count as usize == self.at.len()
    }
}

/// The run along its optimizer steps: where warmup ends, each epoch boundary, each evaluation
/// and save. Positions are in optimizer steps from 0 to `total`.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub total: u64,
    pub warmup: Option<u64>,
    pub epochs: Option<Marks>,
    pub evals: Option<Marks>,
    pub saves: Option<Marks>,
    /// Wall-clock time of the run, when a throughput is given.
    pub seconds: Option<f64>,
}

/// The timeline of a report, when it knows the optimizer steps of the run.
pub fn timeline(report: &Report) -> Option<Timeline> {
    let total = positive_int(report, Output::MaxSteps)?;
    let total = u64::try_from(total).ok()?;
    let tf = total as f64;
    let every = |o: Output| positive_int(report, o).and_then(|e| Marks::new(e as f64, tf));
    Some(Timeline {
        total,
        warmup: positive_int(report, Output::WarmupSteps).and_then(|w| u64::try_from(w).ok()),
        epochs: every(Output::StepsPerEpoch),
        evals: every(Output::EvalSteps),
        saves: every(Output::SaveSteps),
        seconds: report
            .value(Output::TotalTimeSeconds)
            .map(Num::to_f64)
            .filter(|s| s.is_finite()),
    })
}
