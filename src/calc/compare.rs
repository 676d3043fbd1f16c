//! The compare view: one cluster and one batch intent, every framework side by side.
//!
//! The intent is what the user typed for the selected framework, carried to each other
//! framework by [`Concept`] (see [`framework::carry`]), plus what a framework cannot express the
//! same way, taken from the selected framework's own result so the comparison is like for like:
//! - a framework without a gradient-accumulation key (Megatron, torchtitan) gets the global
//!   batch the selected framework computed;
//! - a framework whose run length is a step count (torchtitan, nanotron) gets the selected
//!   framework's step count, and Megatron gets `train_samples = rows × epochs` when that is whole;
//! - nanotron, which takes the data-parallel size as an input, gets `world // (tp × pp)`.
//!
//! Each framework then computes by its own rules at its newest release; a row whose values
//! differ is flagged, and each cell carries the rule that produced it (its one-line reason).

use super::framework::{self, Concept, Framework, Release};
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
    let reason = match report.steps.iter().find(|s| s.output == output) {
        Some(step) if value.is_some() => step.rule.clone(),
        _ => match report.diags.iter().min_by_key(|d| d.level) {
            Some(d) if value.is_none() && d.level <= Level::Hint => d.message.clone(),
            _ => String::new(),
        },
    };
    Cell { value, reason }
}

/// `from`'s intent in `to`'s keys.
fn intent(from: Framework, raw: &RawInputs, report: &Report, to: Framework) -> RawInputs {
    let mut inputs = framework::carry(from, raw, to);
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
                None | Some("") => Some(1),
                Some(t) => t.parse::<u64>().ok(),
            };
            if let Some(total) = samples.zip(epochs).and_then(|(s, e)| s.checked_mul(e)) {
                if inputs.get(Field::TrainIters).trim().is_empty() {
                    inputs.set(Field::TrainSamples, total.to_string());
                }
            }
        } else {
            fill(&mut inputs, Concept::Steps, int(Output::MaxSteps));
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
