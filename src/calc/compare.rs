//! The compare view: one cluster and one batch intent, every framework side by side.
//!
//! The intent is what the user typed for the selected framework, carried to each other
//! framework by [`Concept`] (see [`frameworks::carry`]), plus what a framework cannot express the
//! same way, taken from the selected framework's own result so the comparison is like for like:
//! - a framework without a gradient-accumulation key (Megatron, torchtitan) gets the global
//!   batch the selected framework computed;
//! - a framework whose run length is a step count (torchtitan, nanotron) gets the selected
//!   framework's step count, and Megatron gets `train_samples = rows × epochs` when that is whole;
//! - an absent epochs key becomes the selected framework's own default (HF 3.0, the others 1),
//!   so every framework makes the same number of passes;
//! - nanotron, which takes the data-parallel size as an input, gets `world // (tp × pp)`, sizes
//!   of 1 where none is carried, and the selected framework's sequence length (or its default).
//!
//! Each framework then computes by its own rules at its newest release; a row whose values
//! differ is flagged, and each cell carries the rule that produced it (its one-line reason).

use super::frameworks::{self, Concept, Framework, Release};
use super::num::{self, Num};
use super::{Field, Level, Output, RawInputs, Report};

/// The values compared, in row order.
pub const ROWS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::MaxSteps,
    Output::WarmupSteps,
];

/// One framework's column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub framework: Framework,
    pub release: &'static Release,
    /// The inputs it was given (linkable: this framework's own keys).
    pub inputs: RawInputs,
    pub report: Report,
}

/// One compared value.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub value: Option<Num>,
    /// Why it is this value: the rule that produced it, or why there is none.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub output: Output,
    pub cells: Vec<Cell>,
    /// Not every computed value is the same.
    pub differs: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// Compares every framework for the intent `raw` expresses in `from`'s keys, where `report`
/// is `from`'s own result for it.
pub fn compare(from: Framework, raw: &RawInputs, report: &Report) -> Comparison {
    let columns: Vec<Column> = Framework::ALL
        .iter()
        .map(|&to| {
            let inputs = if to == from {
                raw.clone()
            } else {
                intent(from, raw, report, to)
            };
            let release = to.default_release();
            let report = to.compute(release.id, &inputs);
            Column {
                framework: to,
                release,
                inputs,
                report,
            }
        })
        .collect();
    let rows = ROWS
        .iter()
        .map(|&output| {
            let cells: Vec<Cell> = columns.iter().map(|c| cell(&c.report, output)).collect();
            let mut values = cells.iter().filter_map(|c| c.value);
            let differs = match values.next() {
                Some(first) => values.any(|v| num::cmp(v, first) != std::cmp::Ordering::Equal),
                None => false,
            };
            Row {
                output,
                cells,
                differs,
            }
        })
        .collect();
    Comparison { columns, rows }
}

fn cell(report: &Report, output: Output) -> Cell {
    let value = report.value(output);
    // Megatron explains its step count as train_iters and its accumulation as num_microbatches
    let alias = match output {
        Output::MaxSteps => Some(Output::TrainIters),
        Output::GradientAccumulationSteps => Some(Output::NumMicrobatches),
        _ => None,
    };
    let step = report
        .steps
        .iter()
        .find(|s| s.output == output)
        .or_else(|| report.steps.iter().find(|s| Some(s.output) == alias));
    let reason = match step {
        Some(step) if value.is_some() => step.rule.clone(),
        _ if value.is_some() => "as configured (given, or the framework's default)".to_string(),
        // no value: the refusal that stops it, else what is missing, else nothing to say
        _ => report
            .diags
            .iter()
            .find(|d| d.level == Level::Error)
            .or_else(|| report.diags.iter().find(|d| d.level == Level::Hint))
            .map_or_else(
                || "not computed by this framework for these inputs".to_string(),
                |d| d.message.clone(),
            ),
    };
    Cell { value, reason }
}

/// The epochs a framework trains when its epochs key is absent (its own default), so the
/// intent carries the same number of passes: the Trainer's `num_train_epochs` is 3.0, the
/// others' 1.
fn default_epochs(framework: Framework) -> &'static str {
    framework.spec().default_epochs
}

/// `from`'s intent in `to`'s keys.
fn intent(from: Framework, raw: &RawInputs, report: &Report, to: Framework) -> RawInputs {
    let mut inputs = frameworks::carry(from, raw, to);
    if let (Some(target), Some(source)) = (
        to.field_for(Concept::Epochs),
        from.field_for(Concept::Epochs),
    ) {
        if raw.get(source).trim().is_empty() {
            inputs.set(target, default_epochs(from));
        }
    }
    let int = |o: Output| match report.value(o) {
        Some(Num::Int(v)) => u64::try_from(v).ok(),
        _ => None,
    };
    let fill = |inputs: &mut RawInputs, concept: Concept, value: Option<u64>| {
        if let (Some(field), Some(v)) = (to.field_for(concept), value) {
            if inputs.get(field).trim().is_empty() {
                inputs.set(field, v.to_string());
            }
        }
    };
    if to.field_for(Concept::Accum).is_none() {
        fill(&mut inputs, Concept::Global, int(Output::GlobalBatchSize));
    }
    if to.field_for(Concept::Epochs).is_none() && to.field_for(Concept::Samples).is_none() {
        if to.has(Field::TrainSamples) {
            inputs.set(Field::TrainSamples, String::new());
            let samples = from
                .field_for(Concept::Samples)
                .and_then(|f| raw.get(f).trim().parse::<u64>().ok());
            let epochs = match from.field_for(Concept::Epochs).map(|f| raw.get(f).trim()) {
                None | Some("") => default_epochs(from).parse::<f64>().ok(),
                Some(t) => t.parse::<f64>().ok(),
            }
            .filter(|e| e.fract() == 0.0 && *e >= 0.0 && *e < 1e15)
            .map(|e| e as u64);
            if let Some(total) = samples.zip(epochs).and_then(|(s, e)| s.checked_mul(e)) {
                if inputs.get(Field::TrainIters).trim().is_empty() {
                    inputs.set(Field::TrainSamples, total.to_string());
                }
            }
        } else {
            fill(&mut inputs, Concept::Steps, int(Output::MaxSteps));
        }
    }
    // nanotron requires tokens.sequence_length: the selected framework's, or its default
    if to.has(Field::SequenceLength) && inputs.get(Field::SequenceLength).trim().is_empty() {
        if let Some(d) = from.spec().default_sequence_len {
            inputs.set(Field::SequenceLength, d);
        }
    }
    // nanotron has no defaults for its sizes: the intent's are 1 unless carried
    for f in [Field::Tp, Field::Pp] {
        if to.has(f) && inputs.get(f).trim().is_empty() {
            inputs.set(f, "1");
        }
    }
    if to.has(Field::Dp) && inputs.get(Field::Dp).trim().is_empty() {
        let world = int(Output::WorldSize);
        let size = |f: Field| inputs.get(f).trim().parse::<u64>().unwrap_or(1).max(1);
        let model = size(Field::Tp).checked_mul(size(Field::Pp));
        if let Some(dp) = world.zip(model).map(|(w, m)| w / m).filter(|&d| d > 0) {
            inputs.set(Field::Dp, dp.to_string());
        }
    }
    inputs
}
