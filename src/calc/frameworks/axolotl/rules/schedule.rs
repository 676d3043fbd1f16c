//! What the Trainer receives from axolotl: `max_steps`, the warmup and the save and eval
//! intervals.

use super::*;

impl Calc<'_> {
    /// Sets `total_num_steps` (after `min(·, max_steps)`) and returns the Trainer's `max_steps`.
    pub(super) fn max_steps(
        &mut self,
        steps: Option<StepCount>,
        batch: Option<&Batch>,
        epochs: Option<f64>,
    ) -> Option<Num> {
        let cap = match self.inputs.max_steps {
            Param::Given(0) => {
                self.report.diag(
                    Field::MaxSteps,
                    Level::Warning,
                    "max_steps 0 is read by axolotl as unset",
                );
                None
            }
            Param::Given(m) => Some(Num::Int(m.into())),
            Param::Absent => None,
            Param::Invalid => return None,
        };
        let computed = steps.map(|s| s.total);
        let logged = match (computed, cap) {
            (Some(c), Some(m)) => {
                let t = num::min(c, m);
                self.report.explain(
                    Output::TotalNumSteps,
                    "sft.py: total_num_steps = min(calculate_total_num_steps(...), max_steps)",
                    format!(
                        "total_num_steps = min({}, {}) = {}",
                        c.raw(),
                        m.raw(),
                        t.raw()
                    ),
                );
                Some(t)
            }
            (c, _) => c,
        };
        if let Some(t) = logged {
            self.report.set(Output::TotalNumSteps, t);
        }
        // core/builders/base.py: max_steps = cfg.max_steps or total_num_steps or -1
        let trainer = match (cap, logged) {
            (Some(m), _) => m,
            (None, Some(t)) if t.truthy() => t,
            (None, Some(_)) => Num::Int(-1),
            (None, None) => return None,
        };
        self.report.set(Output::MaxSteps, trainer);
        self.report.explain(
            Output::MaxSteps,
            "Trainer max_steps = cfg.max_steps or total_num_steps or -1",
            format!("max_steps = {}", trainer.raw()),
        );
        if let (Some(m), Some(s), Some(b), Some(e)) = (cap, steps, batch, epochs) {
            self.max_steps_effect(m, s, b, e);
        }
        Some(trainer)
    }

    pub(super) fn max_steps_effect(&mut self, m: Num, s: StepCount, b: &Batch, e: f64) {
        let epochs = match (
            self.inputs.sample_packing.or(false),
            self.inputs.num_samples.given(),
        ) {
            (Some(false), Some(n)) if n > 0 => Some(m.to_f64() * b.physical as f64 / n as f64),
            (Some(true), _) if s.per_epoch.to_f64() > 0.0 => {
                Some(m.to_f64() / s.per_epoch.to_f64())
            }
            _ => None,
        };
        let epochs = epochs
            .map(|x| format!(" ≈ {x:.2} epochs"))
            .unwrap_or_default();
        match num::cmp(m, s.total) {
            std::cmp::Ordering::Greater => self.report.diag(
                Field::MaxSteps,
                Level::Warning,
                format!(
                    "max_steps {} is more than the {} steps num_epochs {} gives: axolotl logs {} but the Trainer runs \
                     {} optimizer steps, repeating the data past num_epochs:{epochs} in all.",
                    m.pretty(),
                    s.total.pretty(),
                    num::float_repr(e),
                    s.total.pretty(),
                    m.pretty()
                ),
            ),
            std::cmp::Ordering::Less => self.report.diag(
                Field::MaxSteps,
                Level::Note,
                format!(
                    "max_steps {} stops the run before the {} steps of num_epochs {}:{epochs}.",
                    m.pretty(),
                    s.total.pretty(),
                    num::float_repr(e)
                ),
            ),
            std::cmp::Ordering::Equal => {}
        }
    }

    /// axolotl's `_configure_warmup_and_logging`, then transformers 5's `get_warmup_steps`.
    pub(super) fn warmup(&mut self, computed: Option<Num>, trainer_max: Option<Num>) {
        let i = self.inputs;
        if matches!(i.warmup_steps, Param::Invalid) || matches!(i.warmup_ratio, Param::Invalid) {
            return;
        }
        // `total_num_steps` here is the value after min(·, max_steps).
        let total = self.report.value(Output::TotalNumSteps).or(computed);
        let (Some(total), Some(trainer_max)) = (total, trainer_max) else {
            return;
        };
        let Some((mut w, rule, ratio)) = self.configured_warmup(total) else {
            return;
        };
        let mut rule = rule;
        if ratio > 0.0 && !w.truthy() {
            w = Num::Float(ratio);
        }
        if num::cmp(w, Num::Int(1)).is_eq() {
            w = Num::Int(2);
            rule.push_str(" → 1 becomes 2");
        }
        // transformers 5 get_warmup_steps: int(w) if w >= 1 else ceil(num_training_steps * w).
        let used = if num::cmp(w, Num::Int(1)).is_ge() {
            num::int_of(w.to_f64())
        } else if !w.truthy() {
            Ok(Num::Int(0)) // ceil(anything × 0), whatever max_steps the Trainer ends up with
        } else if trainer_max.to_f64() > 0.0 {
            num::mul(trainer_max, w).and_then(|p| num::ceil(p.to_f64()))
        } else {
            return;
        };
        let Ok(used) = used else { return };
        self.report.set(Output::WarmupSteps, used);
        self.report.explain(
            Output::WarmupSteps,
            "axolotl: warmup_steps, else int(warmup_ratio × total_num_steps), else min(int(0.03 × total_num_steps), 100); 1 → 2; \
             transformers: a value below 1 is a ratio of max_steps (ceil)",
            format!("warmup_steps = {rule}; the Trainer uses {}", used.raw()),
        );
    }

    /// axolotl's `_configure_warmup_and_logging`: the warmup it configures (`warmup_steps`, else
    /// a ratio of `total`, else 3 % capped at 100), its rule, and the ratio it passes on when
    /// there is no step count.
    fn configured_warmup(&mut self, total: Num) -> Option<(Num, String, f64)> {
        let i = self.inputs;
        let mut ratio = 0.0;
        let (w, rule) = if let Some(ws) = i.warmup_steps.given() {
            (
                Num::Int(ws.into()),
                format!("warmup_steps (as given) = {ws}"),
            )
        } else if let Some(r) = i.warmup_ratio.given() {
            if total.truthy() {
                let Ok(v) = num::mul(Num::Float(r), total).and_then(|p| num::int_of(p.to_f64()))
                else {
                    return None;
                };
                let v = if num::cmp(v, Num::Int(0)).is_lt() {
                    Num::Int(0)
                } else {
                    v
                };
                (
                    v,
                    format!(
                        "max(int({} × {}), 0) = {}",
                        num::float_repr(r),
                        total.raw(),
                        v.raw()
                    ),
                )
            } else {
                ratio = r;
                (
                    Num::Int(0),
                    format!("warmup_ratio {} passed through", num::float_repr(r)),
                )
            }
        } else if total.truthy() {
            let Ok(v) = num::int_of(0.03 * total.to_f64()) else {
                return None;
            };
            let v = num::min(v, Num::Int(100));
            (
                v,
                format!("min(int(0.03 × {}), 100) = {}", total.raw(), v.raw()),
            )
        } else {
            ratio = 0.03;
            (Num::Int(0), "warmup_ratio 0.03 passed through".to_string())
        };
        Some((w, rule, ratio))
    }

    /// normalize_config's `saves_per_epoch` / `evals_per_epoch` fractions, then transformers'
    /// `compute_steps`: `ceil(max_steps × fraction)`.
    pub(super) fn save_eval(&mut self, trainer_max: Option<Num>, epochs: Option<f64>) {
        let i = self.inputs;
        let val = i.val_set_size.or(0.0);
        let eval_dataset = val.map(|v| v != 0.0);
        if eval_dataset == Some(false) && i.evals_per_epoch.given().is_some_and(|n| n > 0) {
            self.report.diag(
                Field::EvalsPerEpoch,
                Level::Warning,
                "evals_per_epoch is ignored without val_set_size: axolotl evaluates only with an eval split (eval_strategy \"no\")",
            );
        }
        let Some(e) = epochs else { return };
        let plans = [
            (
                Field::SavesPerEpoch,
                Output::SaveSteps,
                i.saves_per_epoch,
                Some(true),
                "save_steps",
                "Saving at training end only.",
            ),
            (
                Field::EvalsPerEpoch,
                Output::EvalSteps,
                i.evals_per_epoch,
                eval_dataset,
                "eval_steps",
                "Skipping evaluations.",
            ),
        ];
        for (field, out, per_epoch, enabled, key, invalid_tail) in plans {
            let Some(n) = per_epoch.given().filter(|&n| n > 0) else {
                continue;
            };
            if enabled != Some(true) {
                continue;
            }
            let frac = 1.0 / (n as f64 * e);
            if frac > 1.0 {
                self.report.diag(
                    field,
                    Level::Warning,
                    format!(
                        "axolotl: \u{201c}Invalid value for {key} ({}) from {}s_per_epoch and/or num_epochs. {invalid_tail}\u{201d}",
                        num::float_repr(frac),
                        key.trim_end_matches("_steps"),
                    ),
                );
                continue;
            }
            if frac == 1.0 {
                self.report.diag(
                    field,
                    Level::Note,
                    format!("1 / ({n} × {}) is exactly 1: axolotl leaves {key} unset, so the default strategy applies", num::float_repr(e)),
                );
                continue;
            }
            let Some(m) = trainer_max.filter(|m| m.to_f64() > 0.0) else {
                continue;
            };
            let Ok(steps) = num::mul(m, Num::Float(frac)).and_then(|p| num::ceil(p.to_f64()))
            else {
                continue;
            };
            self.report.set(out, steps);
            self.report.explain(
                out,
                format!("{key} = 1 / ({}s_per_epoch × num_epochs), then the Trainer's ceil(max_steps × fraction)", key.trim_end_matches("_steps")),
                format!("{key} = ceil({} × {}) = {}", m.raw(), num::float_repr(frac), steps.raw()),
            );
        }
    }
}
