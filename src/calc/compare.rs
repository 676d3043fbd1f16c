//! The compare view: one cluster and one batch intent, every framework side by side.
//!
//! The intent is what the user typed for the selected framework, carried to each other
//! framework by [`Concept`] (see [`frameworks::carry`]), plus what a framework cannot express the
//! same way, taken from the selected framework's own result so the comparison is like for like:
//! - a framework without a gradient-accumulation key gets the global batch the selected
//!   framework computed;
//! - a framework with neither an epochs nor a rows key gets the run's length its own way
//!   (`Spec::compared`'s `run_length`), by default the selected framework's step count;
//! - an absent epochs key becomes the selected framework's own default (`Spec::default_epochs`),
//!   so every framework makes the same number of passes;
//! - a framework then completes what it has no default for from the selected framework's
//!   [`Intent`] (`Spec::compared`'s `complete`: sizes, a sequence length).
//!
//! Each framework then computes by its own rules at its newest release; a row whose values
//! differ is flagged, and each cell carries the rule that produced it (its one-line reason, found
//! under the framework's own output where its rules record it there: `Spec::compared`'s
//! `explained_as`).

use super::frameworks::{self, Concept, Framework, Release};
use super::num::{self, Num};
use super::parse;
use super::spec::Intent;
use super::{Level, Output, RawInputs, Report};

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
                inputs_for(from, raw, report, to)
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
            let cells: Vec<Cell> = columns
                .iter()
                .map(|c| cell(c.framework, &c.report, output))
                .collect();
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

fn cell(framework: Framework, report: &Report, output: Output) -> Cell {
    let value = report.value(output);
    // the rule, where the framework's rules record it under an output of their own
    let alias = (framework.spec().compared.explained_as.iter())
        .find(|(o, _)| *o == output)
        .map(|&(_, own)| own);
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
fn inputs_for(from: Framework, raw: &RawInputs, report: &Report, to: Framework) -> RawInputs {
    let mut inputs = frameworks::carry(from, raw, to);
    if let (Some(target), Some(source)) = (
        to.field_for(Concept::Epochs),
        from.field_for(Concept::Epochs),
    ) {
        if !raw.is_given(source) {
            inputs.set(target, default_epochs(from));
        }
    }
    let int = |o: Output| match report.value(o) {
        Some(Num::Int(v)) => u64::try_from(v).ok(),
        _ => None,
    };
    let fill = |inputs: &mut RawInputs, concept: Concept, value: Option<u64>| {
        if let (Some(field), Some(v)) = (to.field_for(concept), value) {
            if !inputs.is_given(field) {
                inputs.set(field, v.to_string());
            }
        }
    };
    if to.field_for(Concept::Accum).is_none() {
        fill(&mut inputs, Concept::Global, int(Output::GlobalBatchSize));
    }
    let intent = intent_of(from, raw, report);
    if to.field_for(Concept::Epochs).is_none() && to.field_for(Concept::Samples).is_none() {
        match to.spec().compared.run_length {
            Some(run_length) => run_length(&intent, &mut inputs),
            None => fill(&mut inputs, Concept::Steps, int(Output::MaxSteps)),
        }
    }
    (to.spec().compared.complete)(&intent, &mut inputs);
    inputs
}

/// What the compare view hands another framework's `Spec::compared` of `from`'s intent: the rows
/// given, the epochs (given, or `from`'s default), the world size `from` computed and `from`'s
/// default sequence length.
fn intent_of(from: Framework, raw: &RawInputs, report: &Report) -> Intent {
    // as the rules read them (their messages are the selected framework's, already shown)
    let epochs = match from.field_for(Concept::Epochs) {
        Some(f) if raw.is_given(f) => report.plan.epochs,
        _ => parse::number(default_epochs(from)),
    };
    Intent {
        rows: report.plan.rows,
        epochs,
        world: report.count(Output::WorldSize),
        default_sequence_len: from.spec().default_sequence_len,
    }
}
