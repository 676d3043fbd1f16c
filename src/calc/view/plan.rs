//! The planner's rows as the page shows them: each plan's cells and the stacked bar of its step
//! time's parts (on one scale for every row shown, the slowest row's step), and the sentence
//! above the table.

use crate::calc::layout::Dim;
use crate::calc::planner::{PlanRow, Planner};
use crate::calc::schedule::human;
use crate::calc::{Num, Output};

/// The step's parts in the bar's order: the output that holds each and its label.
pub const STEP_PARTS: [(Output, &str); 6] = [
    (Output::StepComputeSeconds, "compute"),
    (Output::StepTpCommSeconds, "TP communication"),
    (Output::StepCpCommSeconds, "CP communication"),
    (Output::StepEpCommSeconds, "EP communication"),
    (Output::StepPpBubbleSeconds, "pipeline bubble and sends"),
    (Output::StepDpCommSeconds, "DP communication"),
];

/// One part of a row's bar: its index in [`STEP_PARTS`], left edge and width in percent of the
/// bar, and its title (`compute 1.2 s`).
#[derive(Clone, Debug, PartialEq)]
pub struct BarSegment {
    pub part: usize,
    pub x: f64,
    pub width: f64,
    pub title: String,
}

/// A plan as one table row.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRowView {
    pub rank: usize,
    pub tp: u64,
    pub cp: u64,
    pub pp: u64,
    pub ep: u64,
    pub dp: u64,
    pub micro_batch: u64,
    pub recompute: &'static str,
    pub sharding: &'static str,
    pub virtual_stages: u64,
    /// Exact values for the `data-*` attributes.
    pub step_seconds: String,
    pub tokens_per_second_per_gpu: String,
    pub mfu: String,
    pub memory_bytes: String,
    /// What the cells show.
    pub step_text: String,
    pub tokens_text: String,
    pub mfu_text: String,
    pub memory_text: String,
    pub bar: Vec<BarSegment>,
    /// The assignments of the plan, as a query fragment.
    pub query: String,
}

fn seconds(x: f64) -> String {
    human(Output::StepTimeSeconds, Num::Float(x))
}

/// The rows, best first.
pub fn plan_rows(planner: &Planner) -> Vec<PlanRowView> {
    let scale = (planner.rows.iter())
        .map(|p| p.step_seconds)
        .fold(0.0, f64::max);
    (planner.rows.iter().enumerate())
        .map(|(i, p)| row(i + 1, p, scale))
        .collect()
}

fn row(rank: usize, p: &PlanRow, scale: f64) -> PlanRowView {
    let parts = [
        p.step.compute,
        p.step.tp,
        p.step.cp,
        p.step.ep,
        p.step.pp_bubble,
        p.step.dp,
    ];
    let mut x = 0.0;
    let mut bar = Vec::new();
    for (i, &secs) in parts.iter().enumerate() {
        if secs.is_nan() || secs <= 0.0 || scale <= 0.0 {
            continue;
        }
        let width = secs * 100.0 / scale;
        bar.push(BarSegment {
            part: i,
            x,
            width,
            title: format!("{} {}", STEP_PARTS[i].1, seconds(secs)),
        });
        x += width;
    }
    PlanRowView {
        rank,
        tp: p.size(Dim::Tp),
        cp: p.size(Dim::Cp).max(p.size(Dim::Sp)),
        pp: p.size(Dim::Pp),
        ep: p.size(Dim::Ep),
        dp: p.dp,
        micro_batch: p.micro_batch,
        recompute: p.recompute,
        sharding: p.sharding,
        virtual_stages: p.virtual_stages,
        step_seconds: crate::calc::num::float_repr(p.step_seconds),
        tokens_per_second_per_gpu: crate::calc::num::float_repr(p.tokens_per_second_per_gpu),
        mfu: p.mfu.map(crate::calc::num::float_repr).unwrap_or_default(),
        memory_bytes: p.memory_bytes.to_string(),
        step_text: seconds(p.step_seconds),
        tokens_text: human(
            Output::TokensPerSecondPerGpu,
            Num::Float(p.tokens_per_second_per_gpu),
        ),
        mfu_text: p
            .mfu
            .map_or_else(|| "—".into(), |m| human(Output::MfuEstimate, Num::Float(m))),
        memory_text: crate::calc::num::gib(p.memory_bytes),
        bar,
        query: p.query(),
    }
}

/// The sentence above the table.
pub fn plan_summary(planner: &Planner) -> Option<String> {
    if planner.rows.is_empty() {
        return None;
    }
    Some(format!(
        "{} plans evaluated, {} the framework accepts that fit the GPU; the {} fastest by estimated step time (an estimate, not a measurement: see docs/estimates.md, its table against published runs). Each row is a link; Apply sets it here.",
        planner.considered,
        planner.fitting,
        planner.rows.len()
    ))
}
