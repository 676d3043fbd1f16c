//! A pasted excerpt of a training log ([`TrainingLog`], the framework's `Spec::import.log`): the
//! measured speed it prints becomes `seconds_per_step` or `tokens_per_second_per_gpu`
//! ([`Scope::Measured`](super::Scope)), which calibrates the step-time estimate, and what the
//! log says of the run's layout (the global batch, the step) is kept in [`LogFacts`] for
//! [`Imported::settle`](super::Imported::settle) to hold against the link's before anything is
//! applied. Each format is read as its framework prints it:
//!
//! - Megatron-LM (`megatron/training/training.py`, `training_log`): `elapsed time per iteration
//!   (ms)` (the average over the log interval) and `global batch size`; the median of the lines
//!   is the step, in seconds;
//! - torchtitan (`torchtitan/components/metrics.py`, `MetricsProcessor.log`): `tps`, tokens per
//!   second per device (`ntokens_since_last_log / (time_delta × non_data_parallel_size)`), the
//!   median of the lines after step 1 (which holds the warm-up and compilation); the largest
//!   `step`;
//! - the Hugging Face Trainer (`trainer_utils.speed_metrics`, rounded to 3 decimals): with
//!   `TrainOutput(global_step=N, …)` the step is `train_runtime ÷ N`, else `1 ÷
//!   train_steps_per_second`; `train_samples_per_second ÷ train_steps_per_second` is the global
//!   batch (to their rounding);
//! - nanotron (`nanotron/trainer.py`, `train_step_logs`, numbers in `logging.human_format`, three
//!   significant digits with K, M, G, T): `tokens_per_sec_per_gpu` (the median) and
//!   `global_batch_size`.
//!
//! A median of the lines, so one slow step (the first, a checkpoint) does not move it.

use super::Imported;
use crate::calc::num::float_repr;
use crate::calc::spec::TrainingLog;
use crate::calc::Field;

/// What a log says of its run's layout, to be held against the link's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogFacts {
    /// The global batches, samples, the printed figure allows (from, to: its rounding).
    pub global_batch: Option<(u64, u64)>,
    /// The largest step or iteration the excerpt shows.
    pub last_step: Option<u64>,
    /// How the measured figure was read (for the summary).
    pub read: String,
}

/// The log format of `text`, if it is an excerpt of one: the lines of one format decide.
pub fn kind(text: &str) -> Option<TrainingLog> {
    let has = |needles: &[&str]| text.lines().any(|l| needles.iter().all(|n| l.contains(n)));
    if has(&["elapsed time per iteration (ms):"]) {
        Some(TrainingLog::ElapsedPerIteration)
    } else if has(&["tokens_per_sec_per_gpu:"]) {
        Some(TrainingLog::TokensPerSecPerGpu)
    } else if has(&["step:", "tps:"]) {
        Some(TrainingLog::StepTps)
    } else if has(&["'train_steps_per_second':"]) {
        Some(TrainingLog::TrainMetrics)
    } else {
        None
    }
}

/// Reads the excerpt `text` of format `log` into `out`: the measured field and the facts.
pub(super) fn read(log: TrainingLog, text: &str, out: &mut Imported) {
    let got = match log {
        TrainingLog::ElapsedPerIteration => megatron(text),
        TrainingLog::StepTps => steps(text),
        TrainingLog::TrainMetrics => trainer(text),
        TrainingLog::TokensPerSecPerGpu => nanotron(text),
    };
    match got {
        Ok((field, value, facts)) => {
            out.inputs.push((field, float_repr(value)));
            out.log = Some(facts);
        }
        Err(why) => out.error(why),
    }
}

type Read = Result<(Field, f64, LogFacts), String>;

/// The word after `key` in `line` (up to the next space or `|`, without a trailing `,`, `}`, `)`).
fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = &line[line.find(key)? + key.len()..];
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '|')
        .unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches([',', '}', ')']))
}

/// A positive, finite number.
fn number(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
}

/// The whole numbers within `x` ± `x × tolerance` (a printed batch and its rounding).
fn within(x: f64, tolerance: f64) -> Option<(u64, u64)> {
    let (lo, hi) = (
        (x * (1.0 - tolerance)).ceil(),
        (x * (1.0 + tolerance)).floor(),
    );
    // a batch printed exactly reads back exactly
    let (lo, hi) = if lo > hi {
        (x.round(), x.round())
    } else {
        (lo, hi)
    };
    (hi < u64::MAX as f64 && lo >= 1.0).then_some((lo as u64, hi as u64))
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(xs[n / 2]),
        _ => Some((xs[n / 2 - 1] + xs[n / 2]) / 2.0),
    }
}

/// The step numbers of lines reading `iteration N/ M` or `iteration: N / M`.
fn iteration(line: &str) -> Option<u64> {
    let rest = &line[line.find("iteration")? + "iteration".len()..];
    let rest = rest.trim_start_matches(':').trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Megatron-LM's `training_log` lines.
fn megatron(text: &str) -> Read {
    let key = "elapsed time per iteration (ms):";
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(key)).collect();
    let ms: Vec<f64> = lines
        .iter()
        .filter_map(|l| number(after(l, key)?))
        .collect();
    let step =
        median(ms.clone()).ok_or("no `elapsed time per iteration (ms)` could be read")? / 1000.0;
    let batches: Vec<f64> = (lines.iter())
        .filter_map(|l| number(after(l, "global batch size:")?))
        .collect();
    if batches.windows(2).any(|w| w[0] != w[1]) {
        return Err("the excerpt's global batch size changes (a batch-size ramp-up): paste lines after the ramp-up".into());
    }
    Ok((
        Field::SecondsPerStep,
        step,
        LogFacts {
            global_batch: batches.first().and_then(|&b| within(b, 0.0)),
            last_step: lines.iter().filter_map(|l| iteration(l)).max(),
            read: format!(
                "seconds_per_step {} s, the median `elapsed time per iteration (ms)` of {} line(s)",
                float_repr(step),
                ms.len()
            ),
        },
    ))
}

/// torchtitan's metrics lines.
fn steps(text: &str) -> Read {
    let lines: Vec<(u64, f64)> = text
        .lines()
        .filter_map(|l| {
            let step: u64 = after(l, "step:")?.parse().ok()?;
            let tps = number(&after(l, "tps:")?.replace(',', ""))?;
            Some((step, tps))
        })
        .collect();
    let steady: Vec<f64> = lines
        .iter()
        .filter(|(s, _)| *s > 1)
        .map(|&(_, t)| t)
        .collect();
    let tps = median(steady.clone()).ok_or(
        "no `step: … tps: …` line after step 1 could be read (step 1 holds the warm-up and compilation)",
    )?;
    Ok((
        Field::TokensPerSecondPerGpu,
        tps,
        LogFacts {
            global_batch: None,
            last_step: lines.iter().map(|&(s, _)| s).max(),
            read: format!(
                "tokens_per_second_per_gpu {}, the median `tps` of {} line(s) after step 1",
                float_repr(tps),
                steady.len()
            ),
        },
    ))
}

/// How far the Trainer's samples per step may be from the global batch in a run of epochs.
const EPOCH_SLACK: f64 = 0.05;

/// The Hugging Face Trainer's end-of-training metrics.
fn trainer(text: &str) -> Read {
    let value = |key: &str| text.lines().rev().find_map(|l| number(after(l, key)?));
    let rate =
        value("'train_steps_per_second':").ok_or("no `train_steps_per_second` could be read")?;
    let runtime = value("'train_runtime':");
    let global_step = text
        .lines()
        .rev()
        .find_map(|l| after(l, "global_step=")?.parse::<u64>().ok())
        .filter(|&n| n > 0);
    let (step, how) = match (runtime, global_step) {
        (Some(r), Some(n)) => (
            r / n as f64,
            format!("`train_runtime` {} s ÷ `global_step` {n}", float_repr(r)),
        ),
        _ => (
            1.0 / rate,
            format!("1 ÷ `train_steps_per_second` {}", float_repr(rate)),
        ),
    };
    // both rates are rounded to 3 decimals; and a run of epochs counts the dataset's samples
    // over whole steps (`num_train_samples = num_examples × num_train_epochs`), a few percent
    // off the batch
    let global_batch = value("'train_samples_per_second':")
        .and_then(|s| within(s / rate, 0.0005 / s + 0.0005 / rate + EPOCH_SLACK));
    Ok((
        Field::SecondsPerStep,
        step,
        LogFacts {
            global_batch,
            last_step: global_step,
            read: format!(
                "seconds_per_step {} s, {how} (the whole run's average, its first steps included)",
                float_repr(step)
            ),
        },
    ))
}

/// A number in nanotron's `human_format`: `11.4K`, `1.02K`, `85.8G`.
fn human(text: &str) -> Option<f64> {
    let (digits, scale) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1e3),
        'M' => (&text[..text.len() - 1], 1e6),
        'G' => (&text[..text.len() - 1], 1e9),
        'T' => (&text[..text.len() - 1], 1e12),
        _ => (text, 1.0),
    };
    number(digits).map(|x| x * scale)
}

/// nanotron's `train_step_logs` lines.
fn nanotron(text: &str) -> Read {
    let key = "tokens_per_sec_per_gpu:";
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(key)).collect();
    let tps: Vec<f64> = lines.iter().filter_map(|l| human(after(l, key)?)).collect();
    let value = median(tps.clone()).ok_or("no `tokens_per_sec_per_gpu` could be read")?;
    let batches: Vec<f64> = (lines.iter())
        .filter_map(|l| human(after(l, "global_batch_size:")?))
        .collect();
    Ok((
        Field::TokensPerSecondPerGpu,
        value,
        LogFacts {
            // three significant digits
            global_batch: batches
                .first()
                .and_then(|&b| within(b, if b >= 1000.0 { 0.005 } else { 0.0 })),
            last_step: lines.iter().filter_map(|l| iteration(l)).max(),
            read: format!(
                "tokens_per_second_per_gpu {}, the median `tokens_per_sec_per_gpu` of {} line(s) (three significant digits)",
                float_repr(value),
                tps.len()
            ),
        },
    ))
}
