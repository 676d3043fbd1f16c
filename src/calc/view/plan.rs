//! The planner's rows as the page shows them: each plan's cells under the table's headings, its
//! `data-plan-row` attributes (exact values), the stacked bar of its step time's parts (on one
//! scale for every row shown, the slowest row's step), and the sentence above the table. The
//! page's table (`components/planner.rs`) and `dpcalc plan` (`cli/plan.rs`) both print these.

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

/// The table's headings, one per cell of [`PlanRowView::cells`] (the page adds the step parts'
/// bar and the link after them).
/// The step (the rank's key) comes right after the rank, so a phone's first screen shows it
/// with the layout.
pub const PLAN_COLUMNS: [&str; 14] = [
    "#",
    "Step",
    "TP",
    "CP",
    "PP",
    "EP",
    "DP",
    "Micro batch",
    "Recompute",
    "Sharding",
    "Virtual stages",
    "Tokens/s per GPU",
    "MFU",
    "Memory",
];

/// The value of a `data-plan-row` attribute, typed: the page writes its text (`Display`: an
/// integer's digits, a float's Python repr, the word, or nothing), `dpcalc plan --json` the JSON
/// value of its type (`null` for nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlanAttr {
    Int(u128),
    Float(f64),
    Text(&'static str),
    /// No value (`data-mfu` without the framework's FLOPs per token).
    Absent,
}

impl std::fmt::Display for PlanAttr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanAttr::Int(i) => write!(f, "{i}"),
            PlanAttr::Float(x) => f.write_str(&crate::calc::num::float_repr(*x)),
            PlanAttr::Text(t) => f.write_str(t),
            PlanAttr::Absent => Ok(()),
        }
    }
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
    pub step_seconds: f64,
    pub tokens_per_second_per_gpu: f64,
    pub mfu: Option<f64>,
    pub memory_bytes: u128,
    /// The run's cost (`total_cost`, with `gpu_hour_price`).
    pub total_cost: Option<f64>,
    /// The compute factor of a calibrated step time (`calibration_compute_factor`).
    pub compute_factor: Option<f64>,
    /// Its communication factor (`calibration_comm_factor`).
    pub comm_factor: Option<f64>,
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
        step_seconds: p.step_seconds,
        tokens_per_second_per_gpu: p.tokens_per_second_per_gpu,
        mfu: p.mfu,
        memory_bytes: p.memory_bytes,
        total_cost: p.total_cost,
        compute_factor: p.compute_factor,
        comm_factor: p.comm_factor,
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

impl PlanRowView {
    /// The row's `data-plan-row` attributes (besides `data-plan-row` itself), by their names in
    /// the DOM contract (docs/outputs.md), in its order.
    /// `data-total-cost` only with a price (`gpu_hour_price`), `data-calibration-compute-factor`
    /// and `data-calibration-comm-factor` only with a calibration.
    pub fn attributes(&self) -> Vec<(&'static str, PlanAttr)> {
        let int = |n: u64| PlanAttr::Int(u128::from(n));
        let mut out = vec![
            ("data-rank", int(self.rank as u64)),
            ("data-tp", int(self.tp)),
            ("data-cp", int(self.cp)),
            ("data-pp", int(self.pp)),
            ("data-ep", int(self.ep)),
            ("data-dp", int(self.dp)),
            ("data-micro-batch", int(self.micro_batch)),
            ("data-recompute", PlanAttr::Text(self.recompute)),
            ("data-sharding", PlanAttr::Text(self.sharding)),
            ("data-virtual-stages", int(self.virtual_stages)),
            ("data-step-seconds", PlanAttr::Float(self.step_seconds)),
            (
                "data-tokens-per-second-per-gpu",
                PlanAttr::Float(self.tokens_per_second_per_gpu),
            ),
            (
                "data-mfu",
                self.mfu.map_or(PlanAttr::Absent, PlanAttr::Float),
            ),
            ("data-memory-bytes", PlanAttr::Int(self.memory_bytes)),
        ];
        if let Some(cost) = self.total_cost {
            out.push(("data-total-cost", PlanAttr::Float(cost)));
        }
        if let Some(k) = self.compute_factor {
            out.push(("data-calibration-compute-factor", PlanAttr::Float(k)));
        }
        if let Some(c) = self.comm_factor {
            out.push(("data-calibration-comm-factor", PlanAttr::Float(c)));
        }
        out
    }

    /// What the cells show, under [`PLAN_COLUMNS`].
    pub fn cells(&self) -> [String; 14] {
        [
            self.rank.to_string(),
            self.step_text.clone(),
            self.tp.to_string(),
            self.cp.to_string(),
            self.pp.to_string(),
            self.ep.to_string(),
            self.dp.to_string(),
            self.micro_batch.to_string(),
            self.recompute.to_string(),
            self.sharding.to_string(),
            self.virtual_stages.to_string(),
            self.tokens_text.clone(),
            self.mfu_text.clone(),
            self.memory_text.clone(),
        ]
    }
}

/// The note above the rows while the planner ranks the plans again: the rows so far, or the
/// previous inputs' (`stale`).
pub fn plan_interim(stale: bool) -> &'static str {
    if stale {
        "Ranking the plans for the new inputs; until then, the rows below are the previous inputs'."
    } else {
        "Ranking the plans: the fastest found so far; the list is not complete yet."
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes' text is what the page wrote before they were typed: an integer's digits,
    /// a float's Python repr, the word, nothing for no value.
    #[test]
    fn attributes_write_the_contracts_text() {
        assert_eq!(PlanAttr::Int(72_938_365_696).to_string(), "72938365696");
        assert_eq!(PlanAttr::Float(1.5).to_string(), "1.5");
        assert_eq!(PlanAttr::Float(2.0).to_string(), "2.0");
        assert_eq!(PlanAttr::Float(1e-5).to_string(), "1e-05");
        assert_eq!(PlanAttr::Text("zero1").to_string(), "zero1");
        assert_eq!(PlanAttr::Absent.to_string(), "");
    }
}
