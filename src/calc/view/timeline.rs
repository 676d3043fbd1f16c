//! Tokens and time: the section's values ([`TOKENS_TIME`]) and the words of the run's
//! timeline (where the warmup bar ends, the legend, the label at the last step).

use super::ValueGroup;
use crate::calc::schedule::{human_count, human_duration, Marks, Timeline};
use crate::calc::Output;

/// The tokens-and-time section: dpcalc's own arithmetic over the framework's numbers
/// (`calc::schedule`); the time needs a throughput or the model stage's estimate.
pub const TOKENS_TIME: ValueGroup = ValueGroup {
    title: "Tokens and time",
    source: "dpcalc's arithmetic over the framework's numbers; time from the throughput given, or from the model stage's estimate",
    outputs: &[
        Output::TokensPerStep,
        Output::TokensPerEpoch,
        Output::TotalTokens,
        Output::TimePerStepSeconds,
        Output::TotalTimeSeconds,
        Output::GpuHours,
        Output::TotalCost,
    ],
};

/// The timeline's words: where the warmup bar ends, the legend (also the figure's caption and
/// label) and the label at the last step.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineText {
    /// Where the warmup bar ends (at most the last step) and whether warmup outlasts the run.
    pub warmup: Option<(u64, bool)>,
    pub legend: Vec<String>,
    /// `step 1000 · 2.5 h` (the time when a throughput is given).
    pub end: String,
}

/// How often a mark falls, for the legend: `epoch boundary every 250 steps (4 in the run)`.
fn every(m: &Option<Marks>, what: &str) -> Option<String> {
    let m = m.as_ref()?;
    let more = if m.complete() {
        String::new()
    } else {
        format!(", the first {} drawn", m.at.len())
    };
    Some(format!(
        "{what} every {} steps ({} in the run{more})",
        m.every, m.count
    ))
}

/// The words of a run's timeline.
pub fn timeline_text(t: &Timeline) -> TimelineText {
    let total = t.total;
    let warmup = t.warmup.map(|w| (w.min(total), w > total));
    let mut legend = vec![format!("{} optimizer steps", human_count(total as f64))];
    if let Some((w, over)) = warmup {
        legend.push(if over {
            format!(
                "warmup {} steps, longer than the run",
                t.warmup.unwrap_or(0)
            )
        } else {
            format!("warmup to step {w}")
        });
    }
    legend.extend(every(&t.epochs, "epoch boundary"));
    legend.extend(every(&t.evals, "evaluation (circle)"));
    legend.extend(every(&t.saves, "save (square)"));
    let end = t
        .seconds
        .map(|s| format!("step {total} · {}", human_duration(s)))
        .unwrap_or_else(|| format!("step {total}"));
    TimelineText {
        warmup,
        legend,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(every: f64, count: u64, at: &[f64]) -> Option<Marks> {
        Some(Marks {
            every,
            count,
            at: at.to_vec(),
        })
    }

    #[test]
    fn the_timeline_legend() {
        let t = Timeline {
            total: 1000,
            warmup: Some(100),
            epochs: marks(250.0, 4, &[250.0, 500.0, 750.0, 1000.0]),
            evals: None,
            saves: marks(2.0, 500, &[2.0, 4.0]),
            seconds: Some(9000.0),
        };
        let w = timeline_text(&t);
        assert_eq!(w.warmup, Some((100, false)));
        assert_eq!(
            w.legend,
            vec![
                "1 K optimizer steps",
                "warmup to step 100",
                "epoch boundary every 250 steps (4 in the run)",
                "save (square) every 2 steps (500 in the run, the first 2 drawn)",
            ]
        );
        assert_eq!(w.end, "step 1000 · 2.5 h");
        // warmup longer than the run: the bar stops at the end, the legend says so
        let long = Timeline {
            total: 50,
            warmup: Some(80),
            epochs: None,
            evals: marks(10.0, 5, &[10.0, 20.0, 30.0, 40.0, 50.0]),
            saves: None,
            seconds: None,
        };
        let w = timeline_text(&long);
        assert_eq!(w.warmup, Some((50, true)));
        assert_eq!(
            w.legend,
            vec![
                "50 optimizer steps",
                "warmup 80 steps, longer than the run",
                "evaluation (circle) every 10 steps (5 in the run)",
            ]
        );
        assert_eq!(w.end, "step 50");
    }
}
