//! DeepSpeed's batch stage: `_set_batch_related_parameters` (the two-of-three rule),
//! `_batch_assertion` with its fix, and the samples a step consumes.

use super::*;

impl Calc<'_> {
    // ---- batch ---------------------------------------------------------------------------

    pub(super) fn batch(&mut self, c: &Cluster) -> Option<Batch> {
        let i = self.inputs;
        if [i.train, i.micro, i.ga].contains(&Param::Invalid) {
            return None;
        }
        let w = c.check;
        let wp = py(w);
        let int = |p: Param<u64>| p.given().map(|v| Num::Int(v.into()));
        let (t, m, g) = (int(i.train), int(i.micro), int(i.ga));
        let derived = match two_of_three(t, m, g, w) {
            Some(d) => d,
            None => {
                self.neither_batch_key(g);
                return None;
            }
        };
        let (t, m, g, rule, worked, out) = match derived {
            Ok(v) => v,
            Err(e) => {
                self.derive_error(e, m);
                return None;
            }
        };
        if !rule.is_empty() {
            self.report.explain(out, rule, worked);
        }
        self.assertion(c, t, m, g)?;
        self.report.set(Output::TrainBatchSize, t);
        self.report.set(Output::TrainMicroBatchSizePerGpu, m);
        self.report.set(Output::GradientAccumulationSteps, g);
        if let (Num::Int(micro), Num::Int(ga), Num::Int(train)) = (m, g, t) {
            self.report.plan.publish_batch(
                micro.unsigned_abs(),
                ga.unsigned_abs(),
                train.unsigned_abs(),
            );
        }
        if w.is_float() {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Note,
                format!(
                    "With the float world size {wp}, DeepSpeed's derived values are floats: train_batch_size {}, \
                     train_micro_batch_size_per_gpu {}, gradient_accumulation_steps {}.",
                    py(t),
                    py(m),
                    py(g)
                ),
            );
        }
        Some(Batch {
            train: t,
            micro: m,
            ga: g,
        })
    }

    /// Neither batch key given: DeepSpeed's assertion (a hint on an empty form).
    fn neither_batch_key(&mut self, g: Option<Num>) {
        const EITHER: &str =
            "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided";
        if g.is_some() {
            self.report.refuse(
                Field::TrainMicroBatchSizePerGpu,
                Refusal::new(STOPS, format!("AssertionError: {EITHER}")).fix(
                    "gradient_accumulation_steps alone is not enough. Set train_micro_batch_size_per_gpu \
                     (DeepSpeed then derives train_batch_size).",
                ),
            );
        } else if self.anything {
            self.report.refuse(
                Field::TrainBatchSize,
                Refusal::new(STOPS, format!("AssertionError: {EITHER}")).fix(
                    "Set train_micro_batch_size_per_gpu (and gradient_accumulation_steps), or train_batch_size.",
                ),
            );
        } else {
            self.report.diag(
                Field::TrainBatchSize,
                Level::Hint,
                format!("{EITHER} (DeepSpeed stops with this AssertionError otherwise)."),
            );
        }
    }

    /// A derived value DeepSpeed cannot compute: its division by zero, or too large for dpcalc.
    fn derive_error(&mut self, e: NumError, m: Option<Num>) {
        let at = if m == Some(Num::Int(0)) {
            Field::TrainMicroBatchSizePerGpu
        } else {
            Field::GradientAccumulationSteps
        };
        match e {
            NumError::ZeroDivision(_) => self.report.refuse(
                at,
                Refusal::new(
                    "DeepSpeedConfig stops in _set_batch_related_parameters",
                    e.to_string(),
                )
                .fix(format!("{} must be at least 1.", at.key())),
            ),
            _ => self.report.diag(
                at,
                Level::Error,
                "the batch is too large for dpcalc to compute exactly",
            ),
        }
    }

    /// `_batch_assertion` (runtime/config.py), with the exact messages and a fix. Its `assert`s
    /// stop DeepSpeed with an AssertionError carrying the text (the refusals' `says`).
    pub(super) fn assertion(&mut self, c: &Cluster, t: Num, m: Num, g: Num) -> Option<()> {
        let positive = |n: Num| num::cmp(n, Num::Int(0)) == Ordering::Greater;
        let w = c.check;
        if !positive(t) {
            self.train_not_positive(t, m);
            return None;
        }
        if !positive(m) {
            self.micro_not_positive(w, m, g);
            return None;
        }
        if !positive(g) {
            self.ga_not_positive(w, m, g);
            return None;
        }
        let product = match num::mul(m, g).and_then(|p| num::mul(p, w)) {
            Ok(p) => p,
            Err(_) => {
                self.report.diag(
                    Field::TrainBatchSize,
                    Level::Error,
                    "train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size is too large for dpcalc to compute exactly",
                );
                return None;
            }
        };
        if num::cmp(t, product) == Ordering::Equal {
            return Some(());
        }
        let text = format!(
            "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {} != {} * {} * {}",
            py(t),
            py(m),
            py(g),
            py(w)
        );
        let fix = self.mismatch_fix(c, t, m, g, product);
        self.report
            .refuse(Field::TrainBatchSize, Refusal::new(STOPS, text).fix(fix));
        None
    }

    /// `_batch_assertion`: `train_batch_size` not above 0.
    fn train_not_positive(&mut self, t: Num, m: Num) {
        let i = self.inputs;
        let fix = if i.train.is_given() {
            "Set train_batch_size to at least 1.".to_string()
        } else {
            "train_micro_batch_size_per_gpu and gradient_accumulation_steps must be at least 1."
                .to_string()
        };
        let at = if i.train.is_given() {
            Field::TrainBatchSize
        } else if m == Num::Int(0) {
            Field::TrainMicroBatchSizePerGpu
        } else {
            Field::GradientAccumulationSteps
        };
        self.report.refuse(
            at,
            Refusal::new(
                STOPS,
                format!(
                    "AssertionError: Train batch size: {} has to be greater than 0",
                    py(t)
                ),
            )
            .fix(fix),
        );
    }

    /// `_batch_assertion`: `train_micro_batch_size_per_gpu` not above 0.
    fn micro_not_positive(&mut self, w: Num, m: Num, g: Num) {
        let i = self.inputs;
        let fix = if i.micro.is_given() {
            "Set train_micro_batch_size_per_gpu to at least 1.".to_string()
        } else {
            let per = num::mul(w, g).map(py).unwrap_or_default();
            format!(
                "train_batch_size // world_size // gradient_accumulation_steps is 0: train_batch_size must be at least \
                 world_size × gradient_accumulation_steps = {} × {} = {per}.",
                py(w),
                py(g)
            )
        };
        self.report.refuse(
            if i.micro.is_given() {
                Field::TrainMicroBatchSizePerGpu
            } else {
                Field::TrainBatchSize
            },
            Refusal::new(
                STOPS,
                format!(
                    "AssertionError: Micro batch size per gpu: {} has to be greater than 0",
                    py(m)
                ),
            )
            .fix(fix),
        );
    }

    /// `_batch_assertion`: `gradient_accumulation_steps` not above 0.
    fn ga_not_positive(&mut self, w: Num, m: Num, g: Num) {
        let i = self.inputs;
        let fix = if i.ga.is_given() {
            "Set gradient_accumulation_steps to at least 1.".to_string()
        } else {
            let per = num::mul(m, w).map(py).unwrap_or_default();
            format!(
                "train_batch_size // train_micro_batch_size_per_gpu // world_size is 0: train_batch_size must be at least \
                 train_micro_batch_size_per_gpu × world_size = {} × {} = {per}.",
                py(m),
                py(w)
            )
        };
        self.report.refuse(
            if i.ga.is_given() {
                Field::GradientAccumulationSteps
            } else {
                Field::TrainBatchSize
            },
            Refusal::new(
                STOPS,
                format!(
                    "AssertionError: Gradient accumulation steps: {} has to be greater than 0",
                    py(g)
                ),
            )
            .fix(fix),
        );
    }

    /// The nearest values that pass the check.
    pub(super) fn mismatch_fix(&self, c: &Cluster, t: Num, m: Num, g: Num, product: Num) -> String {
        let i = self.inputs;
        let Num::Int(w) = c.check else {
            return format!(
                "The float world size {} comes from sequence_parallel_size not dividing world_size {}; with a \
                 divisor the check passes whenever train_batch_size = micro × GA × world_size.",
                py(c.check),
                c.world
            );
        };
        let (Num::Int(t), Num::Int(m), Num::Int(g)) = (t, m, g) else {
            return String::new();
        };
        // The unit train_batch_size must be a multiple of, for what the user gave.
        let (unit, by) = match (i.micro.is_given(), i.ga.is_given()) {
            (true, true) => {
                let mut s = format!(
                    "Nearest valid: train_batch_size {} (= {m} × {g} × {w})",
                    py(product)
                );
                if let Some(d) = g.checked_mul(w).filter(|&d| d > 0 && t % d == 0) {
                    s.push_str(&format!(
                        ", or train_micro_batch_size_per_gpu {} with train_batch_size {t}",
                        t / d
                    ));
                }
                if let Some(d) = m.checked_mul(w).filter(|&d| d > 0 && t % d == 0) {
                    s.push_str(&format!(
                        ", or gradient_accumulation_steps {} with train_batch_size {t}",
                        t / d
                    ));
                }
                s.push_str(", or leave one of the three out so DeepSpeed derives it.");
                return s;
            }
            (true, false) => (
                m.checked_mul(w),
                "train_micro_batch_size_per_gpu × world_size",
            ),
            (false, true) => (g.checked_mul(w), "gradient_accumulation_steps × world_size"),
            (false, false) => (Some(w), "world_size"),
        };
        let Some(unit) = unit.filter(|&u| u > 0) else {
            return String::new();
        };
        let below = t / unit * unit;
        let above = (t / unit + 1).checked_mul(unit);
        let mut sizes: Vec<String> = Vec::new();
        if below >= unit {
            sizes.push(below.to_string());
        }
        if let Some(a) = above {
            sizes.push(a.to_string());
        }
        format!(
            "The floor divisions drop a remainder: train_batch_size must be a multiple of {by} = {unit}. Nearest valid: train_batch_size {}.",
            sizes.join(" or ")
        )
    }

    // ---- what a step consumes ------------------------------------------------------------

    pub(super) fn global(&mut self, c: &Cluster, b: &Batch) {
        let Some(dp) = c.replicas else { return };
        let Ok(global) = num::mul(b.micro, b.ga).and_then(|p| num::mul(p, Num::Int(dp.into())))
        else {
            return;
        };
        self.report.set(Output::GlobalBatchSize, global);
        self.report.explain(
            Output::GlobalBatchSize,
            "samples per optimizer step = train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel replicas",
            format!(
                "global_batch_size = {} × {} × {dp} = {}",
                py(b.micro),
                py(b.ga),
                py(global)
            ),
        );
        if num::cmp(global, b.train) != Ordering::Equal {
            let why = match c.source {
                Source::World if c.autotp > 1 => format!(
                    "With AutoTP and no mpu, DeepSpeed counts the batch per TP rank: it checks train_batch_size against \
                     world_size {} (the {} ranks of a TP group see the same samples), while the engine's dp_world_size is \
                     {} // {} = {dp}. Each optimizer step takes {} samples, not train_batch_size {} (HF's \"auto\" fills \
                     train_batch_size the same way).",
                    c.world, c.autotp, c.world, c.autotp, py(global), py(b.train)
                ),
                _ => format!(
                    "DeepSpeed checks the batch against world_size {}, but {dp} data-parallel replicas take distinct samples: \
                     each optimizer step takes {} samples, not train_batch_size {}.",
                    py(c.check),
                    py(global),
                    py(b.train)
                ),
            };
            let at = if c.autotp > 1 && c.source == Source::World {
                Field::AutotpSize
            } else {
                Field::TrainBatchSize
            };
            self.report.diag(at, Level::Warning, why);
        }
        if let Some(len) = self.inputs.max_length.given() {
            if let Ok(tokens) = num::mul(global, Num::Int(len.into())) {
                self.report.set(Output::TokensPerStep, tokens);
                self.report.explain(
                    Output::TokensPerStep,
                    "token slots per step = global batch × max_length",
                    format!("tokens_per_step = {} × {len} = {}", py(global), py(tokens)),
                );
            }
        }
    }
}

/// The batch after `_set_batch_related_parameters` (runtime/config.py): `(train, micro, ga, rule,
/// worked, the output the rule derives)`, with the rule empty when all three were given.
type Derived = (Num, Num, Num, &'static str, String, Output);

/// `_set_batch_related_parameters`' two-of-three rule on the batch keys given (0 counts as given,
/// "is not None") and the world size `w`; `None` when neither batch key is given.
fn two_of_three(
    t: Option<Num>,
    m: Option<Num>,
    g: Option<Num>,
    w: Num,
) -> Option<Result<Derived, NumError>> {
    let wp = py(w);
    Some(match (t, m, g) {
        (Some(t), Some(m), Some(g)) => Ok((t, m, g, "", String::new(), Output::TrainBatchSize)),
        (Some(t), Some(m), None) => floordiv(t, m).and_then(|q| floordiv(q, w)).map(|g| {
            let worked = format!(
                "gradient_accumulation_steps = {} // {} // {wp} = {}",
                py(t),
                py(m),
                py(g)
            );
            (t, m, g, "gradient_accumulation_steps = train_batch_size // train_micro_batch_size_per_gpu // world_size",
             worked, Output::GradientAccumulationSteps)
        }),
        (Some(t), None, Some(g)) => floordiv(t, w).and_then(|q| floordiv(q, g)).map(|m| {
            let worked = format!(
                "train_micro_batch_size_per_gpu = {} // {wp} // {} = {}",
                py(t),
                py(g),
                py(m)
            );
            (t, m, g, "train_micro_batch_size_per_gpu = train_batch_size // world_size // gradient_accumulation_steps",
             worked, Output::TrainMicroBatchSizePerGpu)
        }),
        (None, Some(m), Some(g)) => num::mul(m, g).and_then(|p| num::mul(p, w)).map(|t| {
            let worked = format!(
                "train_batch_size = {} × {} × {wp} = {}",
                py(m),
                py(g),
                py(t)
            );
            (t, m, g, "train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size",
             worked, Output::TrainBatchSize)
        }),
        (Some(t), None, None) => floordiv(t, w).map(|m| {
            let worked = format!(
                "gradient_accumulation_steps = 1, train_micro_batch_size_per_gpu = {} // {wp} = {}",
                py(t),
                py(m)
            );
            (t, m, Num::Int(1),
             "only train_batch_size: gradient_accumulation_steps = 1, train_micro_batch_size_per_gpu = train_batch_size // world_size",
             worked, Output::TrainMicroBatchSizePerGpu)
        }),
        (None, Some(m), None) => num::mul(m, w).map(|t| {
            let worked = format!(
                "train_batch_size = {} × {wp} = {}, gradient_accumulation_steps = 1",
                py(m),
                py(t)
            );
            (t, m, Num::Int(1),
             "only train_micro_batch_size_per_gpu: train_batch_size = train_micro_batch_size_per_gpu × world_size, gradient_accumulation_steps = 1",
             worked, Output::TrainBatchSize)
        }),
        (None, None, _) => return None,
    })
}
