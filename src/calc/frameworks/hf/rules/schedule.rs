//! The Trainer's schedule stage: `TrainingArguments.get_warmup_steps` and
//! `TrainerState.compute_steps` (logging, eval and save intervals as ratios of `max_steps`).

use super::*;

impl Calc<'_> {
    // ---- get_warmup_steps -----------------------------------------------------------------------

    pub(super) fn ratio_of(m: Num, x: f64) -> Option<Num> {
        num::ceil(m.to_f64() * x).ok()
    }

    pub(super) fn warmup(&mut self, m: Num) {
        let w = self.inputs.warmup_steps;
        let value = match self.version {
            Version::V5 => {
                let Some(w) = w.or(0.0) else { return };
                if w >= 1.0 {
                    let Ok(n) = num::int_of(w) else { return };
                    self.report.explain_with(
                        Output::WarmupSteps,
                        "warmup = int(warmup_steps) when ≥ 1, else ceil(max_steps × warmup_steps)",
                        || format!("warmup = int({}) = {}", float_repr(w), n.raw()),
                    );
                    n
                } else {
                    let Some(n) = Self::ratio_of(m, w) else {
                        return;
                    };
                    self.report.explain_with(
                        Output::WarmupSteps,
                        "warmup = int(warmup_steps) when ≥ 1, else ceil(max_steps × warmup_steps)",
                        || {
                            format!(
                                "warmup = ceil({} × {}) = {}",
                                m.raw(),
                                float_repr(w),
                                n.raw()
                            )
                        },
                    );
                    n
                }
            }
            _ => {
                let Some(w) = w.or(0.0) else { return };
                if w.fract() != 0.0 || w >= 9.2e18 {
                    return;
                }
                if w > 0.0 {
                    self.report.explain_with(
                        Output::WarmupSteps,
                        "warmup = warmup_steps if > 0 else ceil(max_steps × warmup_ratio)",
                        || format!("warmup = {}", w as u64),
                    );
                    Num::Int(i128::from(w as u64))
                } else {
                    let Some(r) = self.inputs.warmup_ratio.or(0.0) else {
                        return;
                    };
                    if r > 1.0 {
                        return;
                    }
                    let Some(n) = Self::ratio_of(m, r) else {
                        return;
                    };
                    self.report.explain_with(
                        Output::WarmupSteps,
                        "warmup = warmup_steps if > 0 else ceil(max_steps × warmup_ratio)",
                        || {
                            format!(
                                "warmup = ceil({} × {}) = {}",
                                m.raw(),
                                float_repr(r),
                                n.raw()
                            )
                        },
                    );
                    n
                }
            }
        };
        self.report.set(Output::WarmupSteps, value);
    }

    // ---- TrainerState.compute_steps ---------------------------------------------------------------

    pub(super) fn intervals(&mut self, m: Num) {
        let logging = self.inputs.logging_steps.or(DEFAULT_LOGGING_STEPS);
        let items = [
            (Field::LoggingSteps, Output::LoggingSteps, logging),
            (
                Field::EvalSteps,
                Output::EvalSteps,
                match self.inputs.eval_steps {
                    // eval_strategy "steps" with eval_steps unset or 0 takes logging_steps.
                    Param::Given(0.0) => {
                        self.report.diag(
                            Field::EvalSteps,
                            Level::Note,
                            "eval_steps 0 with eval_strategy \u{201c}steps\u{201d}: the Trainer uses logging_steps instead",
                        );
                        logging
                    }
                    Param::Given(x) => Some(x),
                    _ => None,
                },
            ),
            (
                Field::SaveSteps,
                Output::SaveSteps,
                self.inputs.save_steps.or(DEFAULT_SAVE_STEPS),
            ),
        ];
        for (field, out, x) in items {
            let Some(x) = x else { continue };
            if (x > 1.0 && x.fract() != 0.0) || (field == Field::LoggingSteps && x == 0.0) {
                continue; // refused in args_checks
            }
            let (value, worked) = if x < 1.0 {
                let Some(n) = Self::ratio_of(m, x) else {
                    continue;
                };
                (
                    n,
                    format!(
                        "{} = ceil({} × {}) = {}",
                        field.key(),
                        m.raw(),
                        float_repr(x),
                        n.raw()
                    ),
                )
            } else if x == 1.0 && self.inputs.float_written.contains(&field) {
                // __post_init__ makes a whole value int() only when it is above 1, and
                // compute_steps keeps a ratio of 1 as it is: a 1.0 given stays a float.
                let n = Num::Float(x);
                (n, format!("{} = {}", field.key(), n.raw()))
            } else {
                let Ok(n) = num::int_of(x) else { continue };
                (n, format!("{} = {}", field.key(), n.raw()))
            };
            if field == Field::SaveSteps && value == Num::Int(0) {
                self.report.diag(
                    field,
                    Level::Warning,
                    "save_steps comes out 0: no step-based checkpoint is saved",
                );
            }
            self.report.set(out, value);
            self.report.explain(
                out,
                format!(
                    "{} (a ratio of max_steps when below 1: ceil(max_steps × x))",
                    field.key()
                ),
                worked,
            );
        }
        if self.inputs.eval_steps.is_given() {
            self.report.diag(
                Field::EvalSteps,
                Level::Note,
                "eval_steps is used with eval_strategy=\u{201c}steps\u{201d} (the default strategy \u{201c}no\u{201d} never evaluates)",
            );
        }
    }
}
