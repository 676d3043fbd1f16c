//! The scaling view as the page shows it (`calc::scaling`): each size's cells and its
//! `data-scale-row` attributes (exact values), the sentence above the table, and the chart's
//! geometry (tokens/s per GPU and the run's total time against GPUs, an SVG of its own
//! coordinates: the component only writes the numbers here). The page's section
//! (`components/scale.rs`) and `dpcalc plan --scale` (`cli/scale.rs`) both print these.

use super::plan::PlanAttr;
use crate::calc::layout::Dim;
use crate::calc::scaling::{Scale, ScaleRow};
use crate::calc::schedule::{human, human_count, human_duration};
use crate::calc::{Num, Output};

/// The table's headings, one per cell of [`ScaleRowView::cells`] (the page adds the link).
pub const SCALE_COLUMNS: [&str; 9] = [
    "Nodes",
    "GPUs",
    "Best plan",
    "Step",
    "Tokens/s per GPU",
    "MFU",
    "Total time",
    "Cost",
    "Deadline",
];

/// One size as a table row.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleRowView {
    pub nodes: u64,
    pub gpus: u64,
    /// Exact values (`None`: no plan at this size, or no run length / price / deadline).
    pub step_seconds: Option<f64>,
    pub tokens_per_second_per_gpu: Option<f64>,
    pub mfu: Option<f64>,
    pub total_hours: Option<f64>,
    pub cost: Option<f64>,
    pub meets_deadline: Option<bool>,
    /// The cheapest size that meets the deadline.
    pub cheapest: bool,
    /// The plan in words (`TP 2 · PP 1 · DP 32 · micro 1 · selective · zero1`), or why there
    /// is none.
    pub layout: String,
    pub has_plan: bool,
}

/// The note above the rows while the sizes are planned again: the sizes so far, or the previous
/// inputs' (`stale`).
pub fn scale_interim(stale: bool) -> &'static str {
    if stale {
        "Planning each size for the new inputs; until then, the rows below are the previous inputs'."
    } else {
        "Planning each size: the sizes planned so far."
    }
}

/// The rows, smallest size first.
pub fn scale_rows(scale: &Scale) -> Vec<ScaleRowView> {
    (scale.rows.iter().enumerate())
        .map(|(i, r)| row(r, scale.cheapest == Some(i)))
        .collect()
}

fn row(r: &ScaleRow, cheapest: bool) -> ScaleRowView {
    let p = r.plan.as_ref();
    let layout = match p {
        Some(p) => {
            let cp = p.size(Dim::Cp).max(p.size(Dim::Sp));
            let mut parts = vec![format!("TP {}", p.size(Dim::Tp))];
            if cp > 1 {
                parts.push(format!("CP {cp}"));
            }
            parts.push(format!("PP {}", p.size(Dim::Pp)));
            if p.size(Dim::Ep) > 1 {
                parts.push(format!("EP {}", p.size(Dim::Ep)));
            }
            parts.push(format!("DP {}", p.dp));
            parts.push(format!("micro {}", p.micro_batch));
            parts.push(p.recompute.to_string());
            parts.push(p.sharding.to_string());
            if p.virtual_stages > 1 {
                parts.push(format!("{} virtual stages", p.virtual_stages));
            }
            parts.join(" · ")
        }
        None => r.note.clone().unwrap_or_else(|| "no plan".into()),
    };
    ScaleRowView {
        nodes: r.nodes,
        gpus: r.gpus,
        step_seconds: p.map(|p| p.step_seconds),
        tokens_per_second_per_gpu: p.map(|p| p.tokens_per_second_per_gpu),
        mfu: p.and_then(|p| p.mfu),
        total_hours: p.and_then(|p| p.total_seconds).map(|s| s / 3600.0),
        cost: p.and_then(|p| p.total_cost),
        meets_deadline: r.meets_deadline,
        cheapest,
        layout,
        has_plan: p.is_some(),
    }
}

impl ScaleRowView {
    /// The row's `data-scale-row` attributes (besides `data-scale-row` itself), by their names
    /// in the DOM contract (docs/outputs.md): those of a size without a plan are its size only;
    /// `data-cost` with a price, `data-meets-deadline` with a deadline.
    pub fn attributes(&self) -> Vec<(&'static str, PlanAttr)> {
        let float = |x: Option<f64>| x.map_or(PlanAttr::Absent, PlanAttr::Float);
        let mut out = vec![
            ("data-nodes", PlanAttr::Int(u128::from(self.nodes))),
            ("data-gpus", PlanAttr::Int(u128::from(self.gpus))),
        ];
        if !self.has_plan {
            return out;
        }
        out.extend([
            ("data-step-seconds", float(self.step_seconds)),
            (
                "data-tokens-per-second-per-gpu",
                float(self.tokens_per_second_per_gpu),
            ),
            ("data-mfu", float(self.mfu)),
            ("data-total-hours", float(self.total_hours)),
        ]);
        if let Some(c) = self.cost {
            out.push(("data-cost", PlanAttr::Float(c)));
        }
        if let Some(m) = self.meets_deadline {
            out.push((
                "data-meets-deadline",
                PlanAttr::Text(if m { "true" } else { "false" }),
            ));
        }
        out
    }

    /// What the cells show, under [`SCALE_COLUMNS`] (never a bare dash: `—` only where the
    /// layout cell says why).
    pub fn cells(&self) -> [String; 9] {
        let or = |x: Option<String>, none: &str| x.unwrap_or_else(|| none.to_string());
        let plan = |x: Option<String>, none: &str| {
            if self.has_plan {
                or(x, none)
            } else {
                "no plan".into()
            }
        };
        [
            self.nodes.to_string(),
            self.gpus.to_string(),
            self.layout.clone(),
            plan(self.step_seconds.map(human_duration), "none"),
            plan(
                (self.tokens_per_second_per_gpu)
                    .map(|t| human(Output::TokensPerSecondPerGpu, Num::Float(t))),
                "none",
            ),
            plan(
                self.mfu.map(|m| human(Output::MfuEstimate, Num::Float(m))),
                "needs the FLOPs convention",
            ),
            plan(
                self.total_hours.map(|h| human_duration(h * 3600.0)),
                "needs the run's length",
            ),
            plan(self.cost.map(human_count), "needs gpu_hour_price"),
            match (self.meets_deadline, self.cheapest) {
                (Some(true), true) => "meets it · cheapest".into(),
                (Some(true), false) => "meets it".into(),
                (Some(false), _) => "misses it".into(),
                (None, _) if self.has_plan => "needs deadline_hours".into(),
                (None, _) => "no plan".into(),
            },
        ]
    }
}

/// The sentence above the table.
pub fn scale_summary(scale: &Scale) -> Option<String> {
    let batch = scale.global_batch?;
    if scale.rows.is_empty() {
        return None;
    }
    let mut s = format!(
        "The planner's best plan at each size for the same model, a global batch of {batch} and the same sequence length (estimates, not measurements: see docs/estimates.md). Each row is a link to its plan."
    );
    match (scale.deadline_hours, scale.cheapest) {
        (Some(h), Some(i)) => s.push_str(&format!(
            " The cheapest size that ends within {}: {} GPUs.",
            human_duration(h * 3600.0),
            scale.rows[i].gpus
        )),
        (Some(h), None) => s.push_str(&format!(
            " No size ends within {}.",
            human_duration(h * 3600.0)
        )),
        _ => {}
    }
    Some(s)
}

/// The chart's size in its own units (the SVG's `viewBox`; it scales to its box, 375 px wide
/// included) and its plot area.
pub const CHART_WIDTH: f64 = 320.0;
pub const CHART_HEIGHT: f64 = 200.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 276.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 168.0;

/// One point of a series: where it is drawn, its row (for its link) and its title.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartPoint {
    pub row: usize,
    pub x: f64,
    pub y: f64,
    pub title: String,
}

/// A series: its polyline's `points` and its points.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSeries {
    pub label: &'static str,
    pub line: String,
    pub points: Vec<ChartPoint>,
    /// The top of its axis, as shown (its axis starts at 0).
    pub max_label: String,
}

/// The chart: GPUs on a log-2 axis (one tick per size), tokens/s per GPU on the left axis and
/// the run's total time on the right, both from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleChart {
    pub x_ticks: Vec<(f64, String)>,
    pub throughput: ChartSeries,
    pub hours: ChartSeries,
    /// The cheapest size meeting the deadline: its x.
    pub cheapest_x: Option<f64>,
    pub title: String,
}

/// The chart's geometry (`None` with fewer than one size with a plan).
pub fn scale_chart(scale: &Scale) -> Option<ScaleChart> {
    let rows = scale_rows(scale);
    if !rows.iter().any(|r| r.has_plan) {
        return None;
    }
    let lg = |g: u64| (g.max(1) as f64).log2();
    let (lo, hi) = (
        lg(rows.first()?.gpus),
        lg(rows.last()?.gpus).max(lg(rows.first()?.gpus) + 1.0),
    );
    let x = |g: u64| LEFT + (lg(g) - lo) / (hi - lo) * (RIGHT - LEFT);
    let series =
        |label, value: &dyn Fn(&ScaleRowView) -> Option<f64>, show: &dyn Fn(f64) -> String| {
            let max = rows.iter().filter_map(value).fold(0.0, f64::max);
            let points: Vec<ChartPoint> = (rows.iter().enumerate())
                .filter_map(|(i, r)| {
                    let v = value(r)?;
                    let y = if max > 0.0 {
                        BOTTOM - v / max * (BOTTOM - TOP)
                    } else {
                        BOTTOM
                    };
                    Some(ChartPoint {
                        row: i,
                        x: x(r.gpus),
                        y,
                        title: format!("{} GPUs: {}", r.gpus, show(v)),
                    })
                })
                .collect();
            ChartSeries {
                label,
                line: (points.iter())
                    .map(|p| format!("{:.1},{:.1}", p.x, p.y))
                    .collect::<Vec<_>>()
                    .join(" "),
                points,
                max_label: show(max),
            }
        };
    let tokens = |t: f64| {
        format!(
            "{} tokens/s",
            human(Output::TokensPerSecondPerGpu, Num::Float(t))
        )
    };
    Some(ScaleChart {
        x_ticks: rows
            .iter()
            .map(|r| (x(r.gpus), r.gpus.to_string()))
            .collect(),
        throughput: series(
            "tokens/s per GPU",
            &|r| r.tokens_per_second_per_gpu,
            &tokens,
        ),
        hours: series("total time", &|r| r.total_hours, &|h| {
            human_duration(h * 3600.0)
        }),
        cheapest_x: scale.cheapest.map(|i| x(rows[i].gpus)),
        title: "Tokens/s per GPU (left axis) and the run's total time (right axis) against GPUs"
            .into(),
    })
}

/// The chart's plot area, for the component's axes: left, right, top, bottom.
pub const CHART_PLOT: (f64, f64, f64, f64) = (LEFT, RIGHT, TOP, BOTTOM);
