//! `dpcalc plan`: the planner's ranked rows for a config or a link, as the page's planner shows
//! them: the rows of `calc::view::plan_rows` (cells, `data-plan-row` attributes) with each
//! row's link as the page writes it (`state::plan_url`), as a table or as JSON. With
//! `--expect-within-best PCT` it fails (exit 1) when the input's own layout is more than PCT %
//! slower per step than the best plan, so CI can hold a config to the planner's best.
//!
//! The inputs are read exactly as `dpcalc check` reads them ([`read::read`]) and the exit
//! statuses are `check`'s: 2 when an input cannot be read, 1 when the framework refuses the
//! inputs or the expectation fails (the reasons on standard error), 0 otherwise. Nothing of a
//! row is computed here: the planner ranks, the view model shapes each row, this prints.

use std::io::Write;

use clap::Args;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::print::Printed;
use super::read::{self, Read};
use super::{json_escaped, printable, FAILED, PASSED, UNREADABLE};
use crate::calc::planner::{self, Planner};
use crate::calc::schedule::human;
use crate::calc::view::{self, PlanAttr, PlanRowView, PLAN_COLUMNS};
use crate::calc::{guide, num, Num, Output};
use crate::page;
use crate::state::{plan_url, url_with};

#[derive(Args, Debug, Default)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: super::InputArgs,
    /// Fail (exit 1) when the input's own layout's estimated step time is more than PCT % above
    /// the best plan's (10% or 10; 0: it must be as fast as the best).
    #[arg(long = "expect-within-best", value_name = "PCT", value_parser = percent)]
    pub expect_within_best: Option<f64>,
    /// Print JSON: the rows with every `data-plan-row` attribute (`_` for `-`) and their links.
    #[arg(long)]
    pub json: bool,
    /// The scaling view instead (`view=scale`): the best plan at 1, 2, 4, … nodes up to the
    /// input's (or `max_nodes`) with the global batch kept, each size's time and (with
    /// `gpu_hour_price`) cost, and the cheapest size within `deadline_hours`.
    #[arg(long, conflicts_with = "expect_within_best")]
    pub scale: bool,
    /// The page's address for the links (by default a link's own, else none: each link is
    /// printed as its query).
    #[arg(long, value_name = "URL", env = "DPCALC_BASE")]
    pub base: Option<String>,
}

impl PlanArgs {
    fn request(&self) -> read::Request {
        self.input.request(Vec::new(), self.base.clone())
    }
}

/// `--expect-within-best`'s value: `10%` or `10`, a finite percentage of 0 or more.
fn percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "{text} is not a percentage: write 10% or 10 (0 or more)"
        )),
    }
}

/// `dpcalc plan`: prints to `out`, the reasons for a status other than 0 to `err`.
pub fn plan(args: &PlanArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let read = match read::read(&args.request()) {
        Ok(r) => r,
        Err(reasons) => {
            for r in reasons {
                let _ = writeln!(err, "dpcalc: {}", printable(&r, false));
            }
            return UNREADABLE;
        }
    };
    if args.scale {
        return super::scale::scale(&read, args.json, out, err);
    }
    let planned = Planned::new(&read, args.expect_within_best);
    // as `dpcalc check` prints: a control character the input carried (a link's address, a
    // key) never reaches the terminal
    let text = if args.json {
        json_escaped(&planned.json())
    } else {
        printable(&planned.text(), true)
    };
    let _ = out.write_all(text.as_bytes());
    let reasons = planned.reasons();
    if reasons.is_empty() {
        return PASSED;
    }
    for r in reasons {
        let _ = writeln!(err, "dpcalc: {}", printable(&r, false));
    }
    FAILED
}

/// How the input's layout compares with the best plan (`--expect-within-best`).
#[derive(Clone, Debug, PartialEq)]
pub enum Within {
    /// Its step time is at most `limit` seconds: (1 + PCT/100) × the best row's.
    Holds { limit: f64 },
    /// Its step time is over `limit`.
    Slower { limit: f64 },
    /// The input's layout has no step time; what it needs.
    NoStep(String),
    /// The planner has no row; its note.
    NoPlan(String),
}

/// Everything `dpcalc plan` prints, computed once for both forms.
pub struct Planned<'a> {
    pub read: &'a Read,
    /// The input's own link.
    pub link: String,
    pub planner: Planner,
    /// The page's rows (`calc::view::plan_rows`), best first.
    pub rows: Vec<PlanRowView>,
    /// Each row's link, as the page writes it.
    pub links: Vec<String>,
    /// The estimated step time of the input's own layout (`step_time_seconds`).
    pub current: Option<f64>,
    /// `--expect-within-best`: the percentage and the verdict.
    pub within: Option<(f64, Within)>,
}

impl<'a> Planned<'a> {
    /// Ranks the plans for what was read, as the page ranks them for the same link.
    pub fn new(read: &'a Read, within_best: Option<f64>) -> Self {
        let state = &read.state;
        let link = &state.link;
        let planner = planner::rank(link.framework, link.release().id, &link.inputs);
        let rows = view::plan_rows(&planner);
        let links = (planner.rows.iter())
            .map(|p| plan_url(&read.base, link, &p.assignments))
            .collect();
        let current = state.report.value(Output::StepTimeSeconds).map(Num::to_f64);
        let within = within_best.map(|pct| {
            let verdict = match (current, rows.first()) {
                (None, _) => Within::NoStep(
                    guide::needs(
                        link.framework,
                        &link.inputs,
                        &state.report,
                        Output::StepTimeSeconds,
                    )
                    .map_or_else(
                        || "needs a model and the GPU".into(),
                        |m| m.text(link.framework),
                    ),
                ),
                (Some(_), None) => Within::NoPlan(
                    (planner.note.clone()).unwrap_or_else(|| "the planner has no row".into()),
                ),
                (Some(step), Some(best)) => {
                    let limit = best.step_seconds * (1.0 + pct / 100.0);
                    if step <= limit {
                        Within::Holds { limit }
                    } else {
                        Within::Slower { limit }
                    }
                }
            };
            (pct, verdict)
        });
        Planned {
            read,
            link: url_with(&read.base, &state.query),
            planner,
            rows,
            links,
            current,
            within,
        }
    }

    /// The framework accepts the inputs.
    fn accepted(&self) -> bool {
        !self.read.state.report.has_errors()
    }

    /// Accepted, and `--expect-within-best` (when given) holds: exit status 0.
    pub fn passed(&self) -> bool {
        self.accepted() && matches!(self.within, None | Some((_, Within::Holds { .. })))
    }

    /// Why the plan fails, a line each (for standard error): `check`'s refusals, then the
    /// expectation's.
    pub fn reasons(&self) -> Vec<String> {
        let mut out = if self.accepted() {
            Vec::new()
        } else {
            Printed::new(self.read).reasons()
        };
        if let Some((pct, verdict)) = &self.within {
            let flag = format!("--expect-within-best {pct}%");
            match verdict {
                Within::Holds { .. } => {}
                Within::Slower { limit } => {
                    let (step, best) = (self.current.unwrap_or(f64::NAN), &self.rows[0]);
                    out.push(format!(
                        "{flag}: the input's layout takes {} s per step and the best plan {} s, {:.1} % slower (at most {} s is within {pct} %); the best plan: {}",
                        num::float_repr(step),
                        num::float_repr(best.step_seconds),
                        (step / best.step_seconds - 1.0) * 100.0,
                        num::float_repr(*limit),
                        self.links[0],
                    ));
                }
                Within::NoStep(needs) => out.push(format!(
                    "{flag}: the input's layout has no estimated step time to compare ({needs})"
                )),
                Within::NoPlan(note) => {
                    out.push(format!("{flag}: no plan to compare with: {note}"))
                }
            }
        }
        out
    }

    /// The rows as a table, as the page shows them, each with its link.
    pub fn text(&self) -> String {
        let state = &self.read.state;
        let fw = state.link.framework;
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        line(format!(
            "dpcalc plan: {}",
            page::lede(fw, state.link.release().id)
        ));
        for s in &self.read.sources {
            line(format!("  {} ({}): {}", s.name, s.read_as, s.summary));
        }
        line(match self.current {
            Some(step) => format!("  the input's layout: step {}", seconds(step)),
            None => format!(
                "  the input's layout: no estimated step time ({})",
                guide::needs(
                    fw,
                    &state.link.inputs,
                    &state.report,
                    Output::StepTimeSeconds
                )
                .map_or_else(|| "needs a model and the GPU".into(), |m| m.text(fw))
            ),
        });
        line(String::new());
        if let Some(note) = &self.planner.note {
            line(note.clone());
        }
        if let Some(summary) = view::plan_summary(&self.planner) {
            line(summary);
        }
        if !self.rows.is_empty() {
            line(String::new());
            let mut cells: Vec<Vec<String>> = vec![PLAN_COLUMNS
                .iter()
                .map(|c| c.to_string())
                .chain(["Link".to_string()])
                .collect()];
            for (row, link) in self.rows.iter().zip(&self.links) {
                cells.push(row.cells().into_iter().chain([link.clone()]).collect());
            }
            for l in columns(&cells) {
                line(l);
            }
        }
        if let Some((pct, verdict)) = &self.within {
            line(String::new());
            line(match verdict {
                Within::Holds { limit } => format!(
                    "ok: within {pct}% of the best plan ({} ≤ {})",
                    seconds(self.current.unwrap_or(f64::NAN)),
                    seconds(*limit)
                ),
                _ => format!(
                    "FAILED: not within {pct}% of the best plan (the reason on standard error)"
                ),
            });
        }
        line(String::new());
        line(format!("link: {}", self.link));
        out
    }

    /// The rows as JSON: every `data-plan-row` attribute by its name with `_` for `-` (typed:
    /// integers, floats with their shortest round-trip digits, words, `null` for none) and the
    /// row's link.
    pub fn json(&self) -> String {
        let state = &self.read.state;
        let doc = Json {
            framework: state.link.framework.id(),
            version: state.link.release().id,
            accepted: self.accepted(),
            passed: self.passed(),
            link: &self.link,
            current: Current {
                step_time_seconds: self.current.filter(|x| x.is_finite()),
            },
            rows: (self.rows.iter())
                .zip(&self.links)
                .map(|(row, link)| JsonRow { row, link })
                .collect(),
            considered: self.planner.considered,
            fitting: self.planner.fitting,
            note: self.planner.note.as_deref(),
            expect_within_best: self.within.as_ref().map(|(pct, verdict)| JsonWithin {
                percent: *pct,
                limit_seconds: match verdict {
                    Within::Holds { limit } | Within::Slower { limit } => Some(*limit),
                    _ => None,
                },
                holds: matches!(verdict, Within::Holds { .. }),
            }),
        };
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Seconds as the page shows a step (`2.81 s`), with the exact value.
pub(super) fn seconds(x: f64) -> String {
    format!(
        "{} ({} s)",
        human(Output::StepTimeSeconds, Num::Float(x)),
        num::float_repr(x)
    )
}

/// Rows of cells in aligned columns: numbers to the right, words (Recompute, Sharding) and links
/// to the left.
fn columns(cells: &[Vec<String>]) -> Vec<String> {
    aligned(cells, &|i| i == 7 || i == 8)
}

/// Rows of cells in aligned columns: the columns `left` names and the last (the link) to the
/// left, the rest (figures) to the right.
pub(super) fn aligned(cells: &[Vec<String>], left: &dyn Fn(usize) -> bool) -> Vec<String> {
    let n = cells.first().map_or(0, Vec::len);
    let width: Vec<usize> = (0..n)
        .map(|i| {
            (cells.iter())
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let left = |i: usize| left(i) || i + 1 == n;
    cells
        .iter()
        .map(|row| {
            let mut l = String::from(" ");
            for (i, c) in row.iter().enumerate() {
                let pad = " ".repeat(width[i].saturating_sub(c.chars().count()));
                if i + 1 == n {
                    l.push_str(&format!(" {c}"));
                } else if left(i) {
                    l.push_str(&format!(" {c}{pad}"));
                } else {
                    l.push_str(&format!(" {pad}{c}"));
                }
            }
            l
        })
        .collect()
}

#[derive(Serialize)]
struct Json<'a> {
    framework: &'static str,
    version: &'static str,
    /// The framework accepts the inputs (no error).
    accepted: bool,
    /// Accepted, and `--expect-within-best` holds: exit status 0.
    passed: bool,
    link: &'a str,
    current: Current,
    rows: Vec<JsonRow<'a>>,
    considered: usize,
    fitting: usize,
    note: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect_within_best: Option<JsonWithin>,
}

/// The input's own layout.
#[derive(Serialize)]
struct Current {
    step_time_seconds: Option<f64>,
}

#[derive(Serialize)]
struct JsonWithin {
    percent: f64,
    /// (1 + percent/100) × the best row's step seconds; `null` without a step time or a row.
    limit_seconds: Option<f64>,
    holds: bool,
}

/// A row: its `data-plan-row` attributes in the contract's order, then its link.
struct JsonRow<'a> {
    row: &'a PlanRowView,
    link: &'a str,
}

impl Serialize for JsonRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (name, value) in self.row.attributes() {
            let key = name.trim_start_matches("data-").replace('-', "_");
            m.serialize_entry(&key, &Attr(value))?;
        }
        m.serialize_entry("link", self.link)?;
        m.end()
    }
}

/// An attribute's value as JSON.
pub(super) struct Attr(pub(super) PlanAttr);

impl Serialize for Attr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            PlanAttr::Int(i) => match u64::try_from(i) {
                Ok(i) => s.serialize_u64(i),
                Err(_) => s.serialize_u128(i),
            },
            PlanAttr::Float(x) if x.is_finite() => s.serialize_f64(x),
            PlanAttr::Float(_) => s.serialize_str(&self.0.to_string()),
            PlanAttr::Text(t) => s.serialize_str(t),
            PlanAttr::Absent => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentage_reads_with_or_without_its_sign() {
        assert_eq!(percent("10%"), Ok(10.0));
        assert_eq!(percent("10"), Ok(10.0));
        assert_eq!(percent(" 2.5 % "), Ok(2.5));
        assert_eq!(percent("0"), Ok(0.0));
        assert!(percent("-5%").is_err());
        assert!(percent("ten").is_err());
        assert!(percent("inf").is_err());
        assert!(percent("").is_err());
    }
}
