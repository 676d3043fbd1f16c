//! axolotl's steps stage: `calculate_total_num_steps` (plain and packed), the comparison of the
//! two releases, and the tokens of a step.

use super::*;

impl Calc<'_> {
    pub(super) fn epochs(&mut self) -> Option<f64> {
        match self.inputs.num_epochs {
            Param::Given(0.0) => {
                self.report.diag(
                    Field::NumEpochs,
                    Level::Error,
                    "num_epochs 0 trains nothing: axolotl computes 0 steps and passes max_steps -1 to the Trainer",
                );
                None
            }
            // pydantic stores num_epochs as a float (schema default 1.0).
            p => p.or(1.0),
        }
    }

    pub(super) fn steps(
        &mut self,
        version: Version,
        batch: Option<&Batch>,
        cluster: Option<&Cluster>,
        epochs: Option<f64>,
    ) -> Option<StepCount> {
        let main = version == self.main;
        let packing = self.inputs.sample_packing.or(false)?;
        let e = epochs?;
        let batch = batch?;
        let cluster = cluster?;
        let out = if main {
            Output::TotalNumSteps
        } else {
            Output::LegacyTotalNumSteps
        };
        // utils/trainer.py: 0.14.0 multiplies by the (validated) cp and tp; 0.19.0 does not.
        let extra = (!version.dp_batch()).then_some((cluster.cp, cluster.tp));
        let ctx = StepCtx { out, main, extra };
        let b = batch.global;
        let result = if packing {
            self.packed_steps(ctx, b, e)
        } else {
            self.plain_steps(ctx, b, e)
        };
        match result {
            Ok(Some(s)) => {
                self.report.set(out, s.total);
                if main {
                    self.report.set(Output::StepsPerEpoch, s.per_epoch);
                }
                Some(s)
            }
            Ok(None) => None,
            Err(e) => {
                let said = crash(e);
                if !main {
                    let said = match said {
                        Ok(refusal) => refusal.message(),
                        Err(own) => own,
                    };
                    self.report
                        .legacy_notes
                        .push(format!("axolotl {}: {said}", version.id()));
                } else {
                    // A zero batch (dp 0, micro_batch_size 0) is already reported where it comes
                    // from; what is left is a value too large, at the input that makes it so.
                    let field = if packing {
                        Field::TotalNumTokens
                    } else {
                        Field::NumSamples
                    };
                    // The cause is already reported at the field when the batch is 0.
                    if b != 0 {
                        match said {
                            Ok(refusal) => self.report.refuse(field, refusal),
                            Err(own) => self.report.diag(field, Level::Error, own),
                        }
                    }
                }
                None
            }
        }
    }

    /// `int(math.ceil(len(train_dataset) * cfg.num_epochs / cfg.batch_size))`.
    pub(super) fn plain_steps(
        &mut self,
        ctx: StepCtx,
        b: u64,
        e: f64,
    ) -> Result<Option<StepCount>, NumError> {
        let StepCtx { out, main, extra } = ctx;
        let Some(n) = self.samples() else {
            return Ok(None);
        };
        let nf = n as f64;
        let mut numerator = nf * e;
        let mut one_epoch = nf;
        let mut shown = format!("{n} × {}", num::float_repr(e));
        let mut shown_one = n.to_string();
        if let Some((cp, tp)) = extra {
            // 0.14.0: len(train_dataset) * num_epochs * cp * tp / batch_size, left to right.
            numerator = numerator * cp as f64 * tp as f64;
            one_epoch = one_epoch * cp as f64 * tp as f64;
            shown = format!("{shown} × {cp} × {tp}");
            shown_one = format!("{n} × {cp} × {tp}");
        }
        let total = num::ceil(num::fdiv(numerator, b as f64)?)?;
        let per_epoch = num::ceil(num::fdiv(one_epoch, b as f64)?)?;
        let rule = match extra {
            None => "total_num_steps = ceil(num_samples × num_epochs / batch_size)",
            Some(_) => "0.14.0: total_num_steps = ceil(num_samples × num_epochs × context_parallel_size × tensor_parallel_size / batch_size)",
        };
        self.report.explain(
            out,
            rule,
            format!("total_num_steps = ceil({shown} / {b}) = {}", total.raw()),
        );
        if main {
            let rule = match extra {
                None => "steps_per_epoch = ceil(num_samples / batch_size)",
                Some(_) => "0.14.0: steps_per_epoch = ceil(num_samples × context_parallel_size × tensor_parallel_size / batch_size)",
            };
            self.report.explain(
                Output::StepsPerEpoch,
                rule,
                format!(
                    "steps_per_epoch = ceil({shown_one} / {b}) = {}",
                    per_epoch.raw()
                ),
            );
        }
        Ok(Some(StepCount { total, per_epoch }))
    }

    /// The `sample_packing_eff_est` path:
    /// `int(math.floor(0.99 * T / eff / L // batch_size) - 1) * num_epochs`.
    pub(super) fn packed_steps(
        &mut self,
        ctx: StepCtx,
        b: u64,
        e: f64,
    ) -> Result<Option<StepCount>, NumError> {
        let StepCtx { out, main, extra } = ctx;
        let Some((eff, t)) = self.packing_inputs(main) else {
            return Ok(None);
        };
        let l = self
            .inputs
            .sequence_len
            .or(DEFAULT_SEQUENCE_LEN)
            .unwrap_or(0);
        if l == 0 {
            return Ok(None); // reported by `tokens`
        }
        let x = num::fdiv(num::fdiv(0.99 * t as f64, eff)?, l as f64)?;
        let q = num::ffloordiv(x, b as f64)?;
        let bins = num::sub(num::floor(q)?, Num::Int(1))?;
        let mut per_epoch = bins;
        let mut total = num::mul(bins, Num::Float(e))?;
        let mut factor = String::new();
        if let Some((cp, tp)) = extra {
            // 0.14.0: `int(...) * num_epochs * context_parallel_size * tensor_parallel_size`.
            total = num::mul(num::mul(total, Num::Int(cp.into()))?, Num::Int(tp.into()))?;
            per_epoch = num::mul(num::mul(bins, Num::Int(cp.into()))?, Num::Int(tp.into()))?;
            factor = format!(" × {cp} × {tp}");
        }
        let rule = if extra.is_some() {
            "0.14.0: total_num_steps = int(floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1) × num_epochs × context_parallel_size × tensor_parallel_size"
        } else {
            "total_num_steps = int(floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1) × num_epochs"
        };
        self.report.explain(
            out,
            rule,
            format!(
                "total_num_steps = (floor(0.99 × {t} / {} / {l} // {b}) − 1) × {}{factor} = ({} − 1) × {}{factor} = {}",
                num::float_repr(eff),
                num::float_repr(e),
                Num::Float(q).raw(),
                num::float_repr(e),
                total.raw()
            ),
        );
        if main {
            self.packed_steps_notes(extra.is_some(), per_epoch, total);
        }
        Ok(Some(StepCount { total, per_epoch }))
    }

    /// The packing estimate's inputs as axolotl reads them (0 is unset): `(sample_packing_eff_est,
    /// total_num_tokens)`, or `None` with a hint to give them.
    fn packing_inputs(&mut self, main: bool) -> Option<(f64, u64)> {
        let eff = match self.inputs.sample_packing_eff_est {
            Param::Given(x) if x > 0.0 => x,
            Param::Invalid => return None,
            given => {
                if main {
                    let zero = if given.is_given() {
                        "sample_packing_eff_est 0 is read by axolotl as unset. "
                    } else {
                        ""
                    };
                    self.report.diag(
                        Field::SamplePackingEffEst,
                        Level::Warning,
                        format!(
                            "{zero}With sample_packing and no sample_packing_eff_est, axolotl packs the real sequences \
                             (MultipackBatchSampler over their lengths) to count steps, which a browser cannot see. \
                             Enter the sample_packing_eff_est axolotl logged for this dataset (and total_num_tokens) \
                             to get the step count."
                        ),
                    );
                }
                return None;
            }
        };
        let t = match self.inputs.total_num_tokens {
            Param::Given(t) if t > 0 => t,
            Param::Invalid => return None,
            given => {
                if main {
                    let zero = if given.is_given() {
                        "total_num_tokens 0 is read by axolotl as unset (it counts the dataset). "
                    } else {
                        ""
                    };
                    self.report.diag(
                        Field::TotalNumTokens,
                        Level::Hint,
                        format!("{zero}Enter total_num_tokens (the tokens in the training set) to compute the packed step count."),
                    );
                }
                return None;
            }
        };
        Some((eff, t))
    }

    /// The main release's packed steps per epoch explained, and the warning when the estimate is
    /// not positive (`old`: 0.14.0's tp × cp factor).
    fn packed_steps_notes(&mut self, old: bool, per_epoch: Num, total: Num) {
        let rule = if old {
            "0.14.0: steps_per_epoch = (floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1) × context_parallel_size × tensor_parallel_size"
        } else {
            "steps_per_epoch = floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1"
        };
        self.report.explain(
            Output::StepsPerEpoch,
            rule,
            format!("steps_per_epoch = {}", per_epoch.raw()),
        );
        if total.to_f64() <= 0.0 {
            self.report.diag(
                Field::TotalNumTokens,
                Level::Warning,
                format!(
                    "so few tokens for this batch that axolotl's estimate is {}: the Trainer receives max_steps {} \
                     and falls back on its own epoch count",
                    total.raw(),
                    if total.truthy() { total.raw() } else { "-1".into() }
                ),
            );
        }
    }

    pub(super) fn samples(&mut self) -> Option<u64> {
        match self.inputs.num_samples {
            Param::Given(n) => Some(n),
            Param::Absent => {
                if !self
                    .report
                    .diags
                    .iter()
                    .any(|d| d.field == Field::NumSamples)
                {
                    self.report.diag(
                        Field::NumSamples,
                        Level::Hint,
                        "Enter num_samples (training rows after axolotl's filtering and the val_set_size split) to compute the step counts.",
                    );
                }
                None
            }
            Param::Invalid => None,
        }
    }

    /// The comparison notes: the other release's numbers against the main release's.
    pub(super) fn compare(
        &mut self,
        main: u64,
        other: u64,
        steps: Option<StepCount>,
        other_steps: Option<StepCount>,
    ) {
        let (m_id, o_id) = (self.main.id(), self.main.other().id());
        // The older release in the past tense.
        let (logs_m, logs_o, computes_m, computes_o) = match self.main {
            Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => {
                ("logs", "logged", "computes", "computed")
            }
            Version::V0_14_0 => ("logged", "logs", "computed", "computes"),
        };
        if main != other {
            let d = other as i128 - main as i128;
            self.report.legacy_notes.push(format!(
                "axolotl {o_id} {logs_o} batch_size {} where {m_id} {logs_m} {} ({} {}).",
                Num::Int(other.into()).pretty(),
                Num::Int(main.into()).pretty(),
                Num::Int(d.abs()).pretty(),
                if d > 0 { "more" } else { "fewer" },
            ));
        }
        if let (Some(s), Some(o)) = (steps, other_steps) {
            let same = num::cmp(s.total, o.total) == std::cmp::Ordering::Equal;
            self.report.legacy_notes.push(if same {
                format!("Both versions compute {} steps.", s.total.pretty())
            } else {
                format!(
                    "axolotl {o_id} {computes_o} {} steps where {m_id} {computes_m} {} (difference {}).",
                    o.total.pretty(),
                    s.total.pretty(),
                    num::sub(o.total, s.total)
                        .map(Num::pretty)
                        .unwrap_or_else(|_| "too large".into()),
                )
            });
        }
    }

    /// The comparison's `total_num_steps` as that release logs it: `_prepare_standard_dataset`
    /// (`utils/data/sft.py`, the same in 0.14.0 and later) caps it with `min(·, max_steps)`.
    pub(super) fn cap_other(&mut self, other: Option<StepCount>) {
        let (Some(o), Some(m)) = (other, self.inputs.max_steps.given().filter(|&m| m != 0)) else {
            return;
        };
        let m = Num::Int(m.into());
        let t = num::min(o.total, m);
        self.report.set(Output::LegacyTotalNumSteps, t);
        self.report.explain(
            Output::LegacyTotalNumSteps,
            "sft.py: total_num_steps = min(calculate_total_num_steps(...), max_steps)",
            format!(
                "total_num_steps = min({}, {}) = {}",
                o.total.raw(),
                m.raw(),
                t.raw()
            ),
        );
    }

    pub(super) fn tokens(&mut self, b: &Batch) {
        let l = match self.inputs.sequence_len {
            Param::Given(0) => {
                self.report.diag(
                    Field::SequenceLen,
                    Level::Error,
                    "sequence_len must be at least 1",
                );
                return;
            }
            p => match p.or(DEFAULT_SEQUENCE_LEN) {
                Some(l) => l,
                None => return,
            },
        };
        // The samples a step really trains (0.14.0's batch_size counts each tp × cp times).
        let Some(t) = i128::from(b.physical).checked_mul(i128::from(l)) else {
            self.report.diag(
                Field::SequenceLen,
                Level::Error,
                "batch_size × sequence_len is too large to count",
            );
            return;
        };
        self.report.set(Output::TokensPerStep, Num::Int(t));
        let rule = if b.physical == b.global {
            "tokens_per_step = batch_size × sequence_len (token slots; padding or packing fills them)"
        } else {
            "tokens_per_step = micro_batch_size × gradient_accumulation_steps × dp_world_size × sequence_len (token slots; \
             0.14.0's batch_size counts each sample tensor_parallel_size × context_parallel_size times)"
        };
        self.report.explain(
            Output::TokensPerStep,
            rule,
            format!("tokens_per_step = {} × {l} = {t}", b.physical),
        );
    }
}
