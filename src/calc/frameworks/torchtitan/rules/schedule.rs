//! torchtitan's schedule stage: `training.steps` and the scheduler's warmup
//! (`LRSchedulersContainer.Config.build`: default 200, clamped to the steps).

use super::*;

impl Calc<'_> {
    // ---- steps and warmup (`training.steps`, `lr_scheduler.warmup_steps`) ------------------

    pub(super) fn schedule(&mut self) {
        let steps = self.inputs.steps.or(DEFAULT_STEPS);
        if let Some(s) = steps {
            self.report.set(Output::MaxSteps, Num::Int(s.into()));
            self.report.explain_with(
                Output::MaxSteps,
                "training.steps (optimizer steps; default 10000; torchtitan has no epochs)",
                || format!("steps = {s}"),
            );
        }
        let warmup = match self.inputs.warmup_steps {
            Param::Given(w) if w.fract() != 0.0 || w >= 1.8e19 => {
                self.report.diag(
                    Field::WarmupSteps,
                    Level::Error,
                    format!(
                        "lr_scheduler.warmup_steps is an int in torchtitan: \u{201c}{w}\u{201d} is not a whole number of steps it accepts"
                    ),
                );
                None
            }
            Param::Given(w) => Some(w as u64),
            Param::Absent => Some(DEFAULT_WARMUP_STEPS),
            Param::Invalid => None,
        };
        let (Some(s), Some(w)) = (steps, warmup) else {
            return;
        };
        // lr_scheduler.py: warmup_steps > total_steps is clamped with a warning.
        let used = w.min(s);
        if w > s {
            self.report.diag(
                Field::WarmupSteps,
                Level::Warning,
                format!(
                    "torchtitan logs \u{201c}Warmup steps ({w}) exceed total steps ({s}). Adjusting warmup steps to {s}.\u{201d}{}",
                    if self.inputs.warmup_steps.is_given() { "" } else { " (the default warmup is 200 steps)" }
                ),
            );
        }
        if s == 0 {
            self.report.diag(
                Field::Steps,
                Level::Warning,
                "training.steps 0: the training loop runs while step < steps, so nothing trains",
            );
        }
        self.report.set(Output::WarmupSteps, Num::Int(used.into()));
        self.report.explain_with(
            Output::WarmupSteps,
            "warmup = min(lr_scheduler.warmup_steps (default 200), training.steps)",
            || format!("warmup = min({w}, {s}) = {used}"),
        );
    }
}
