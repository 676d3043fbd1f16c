//! Megatron-LM's steps stage: iteration- or sample-based training (`validate_args`' assertions),
//! `update_train_iters`, and the checks of `setup_model_and_optimizer` and the training loop.

use super::*;

impl Calc<'_> {
    /// validate_args' iteration-based / sample-based assertions, in its order.
    pub(super) fn mode(&mut self) -> Option<Mode> {
        let i = self.inputs.clone();
        let (ti, ts) = (i.train_iters, i.train_samples);
        if ti == Param::Invalid || ts == Param::Invalid {
            return None;
        }
        if let Some(n) = ti.given().filter(|&n| n != 0) {
            return self.iteration_based(n);
        }
        if let Some(n) = ts.given().filter(|&n| n != 0) {
            return self.sample_based(n);
        }
        // Neither is truthy: get_optimizer_param_scheduler raises.
        let text = "Megatron-LM stops in get_optimizer_param_scheduler: \u{201c}Exception: either train-iters or \
                    train-samples should be provided.\u{201d}";
        if ti.is_given() || ts.is_given() {
            let field = if ti.is_given() {
                Field::TrainIters
            } else {
                Field::TrainSamples
            };
            self.report.refuse(
                field,
                Refusal::new(
                    "Megatron-LM stops in get_optimizer_param_scheduler",
                    "Exception: either train-iters or train-samples should be provided.",
                )
                .fix("0 counts as not set: give a positive train_iters or train_samples."),
            );
        } else {
            self.report.diag(
                Field::TrainIters,
                Level::Hint,
                format!("Give train_iters or train_samples for the step count. ({text})"),
            );
        }
        None
    }

    /// `train_iters` given: validate_args' iteration-based assertions.
    fn iteration_based(&mut self, n: u64) -> Option<Mode> {
        let i = self.inputs.clone();
        let ts = i.train_samples;
        let (lwi, lws) = (i.lr_warmup_iters.or(0), i.lr_warmup_samples.or(0));
        let frac = i.lr_warmup_fraction;
        let refuse = refuse_args;
        let ramp_active =
            self.version == Version::Core0161 && matches!(i.rampup_batch_size, Param::Given(_));
        if ts.is_given() {
            refuse(
                self.report,
                Field::TrainSamples,
                "expected iteration-based training",
                "Give only one of train_iters or train_samples.",
            );
            return None;
        }
        if i.lr_decay_samples != Param::Absent {
            if i.lr_decay_samples.is_given() {
                refuse(
                    self.report,
                    Field::LrDecaySamples,
                    "expected iteration-based learning rate decay",
                    "With train_iters, give the decay as lr_decay_iters.",
                );
            }
            return None;
        }
        if lws != Some(0) {
            if lws.is_some() {
                refuse(
                    self.report,
                    Field::LrWarmupSamples,
                    "expected iteration-based learning rate warmup",
                    "With train_iters, give the warmup as lr_warmup_iters or lr_warmup_fraction.",
                );
            }
            return None;
        }
        if ramp_active {
            refuse(
                self.report,
                Field::RampupBatchSize,
                "expected no batch-size rampup for iteration-based training",
                "A ramp-up needs sample-based training: give train_samples instead of train_iters.",
            );
            return None;
        }
        if frac.is_given() && lwi != Some(0) {
            if lwi.is_some() {
                refuse(
                    self.report,
                    Field::LrWarmupFraction,
                    "can only specify one of lr-warmup-fraction and lr-warmup-iters",
                    "Keep one of lr_warmup_fraction or lr_warmup_iters.",
                );
            }
            return None;
        }
        Some(Mode::Iters(n))
    }

    /// `train_samples` given: validate_args' sample-based assertions.
    fn sample_based(&mut self, n: u64) -> Option<Mode> {
        let i = self.inputs.clone();
        let ti = i.train_iters;
        let (lwi, lws) = (i.lr_warmup_iters.or(0), i.lr_warmup_samples.or(0));
        let frac = i.lr_warmup_fraction;
        let refuse = refuse_args;
        if ti.is_given() {
            refuse(
                self.report,
                Field::TrainIters,
                "expected sample-based training",
                "train_iters 0 still counts as given here: remove it and keep train_samples.",
            );
            return None;
        }
        if i.lr_decay_iters != Param::Absent {
            if i.lr_decay_iters.is_given() {
                refuse(
                    self.report,
                    Field::LrDecayIters,
                    "expected sample-based learning rate decay",
                    "With train_samples, give the decay as lr_decay_samples.",
                );
            }
            return None;
        }
        if lwi != Some(0) {
            if lwi.is_some() {
                refuse(
                    self.report,
                    Field::LrWarmupIters,
                    "expected sample-based learnig rate warmup",
                    "With train_samples, give the warmup as lr_warmup_samples or lr_warmup_fraction.",
                );
            }
            return None;
        }
        if frac.is_given() && lws != Some(0) {
            if lws.is_some() {
                refuse(
                    self.report,
                    Field::LrWarmupFraction,
                    "can only specify one of lr-warmup-fraction and lr-warmup-samples",
                    "Keep one of lr_warmup_fraction or lr_warmup_samples.",
                );
            }
            return None;
        }
        Some(Mode::Samples(n))
    }

    /// `update_train_iters`.
    pub(super) fn train_iters(&mut self, p: &Calculator, mode: Mode) -> Option<u128> {
        let (n, rule, worked) = match mode {
            Mode::Iters(n) => (
                n as u128,
                "train_iters (as given)".to_string(),
                format!("train_iters = {n}"),
            ),
            Mode::Samples(ts) => self.iters_of_samples(p, ts)?,
        };
        self.report.set(Output::TrainIters, Num::Int(n as i128));
        self.report.set(Output::MaxSteps, Num::Int(n as i128));
        self.report.explain(Output::TrainIters, rule, worked);
        if n == 0 {
            self.report.diag(
                Field::TrainSamples,
                Level::Warning,
                "train_iters comes out 0: fewer training samples than one global batch, so Megatron trains no step.",
            );
        }
        Some(n)
    }

    /// `update_train_iters` for sample-based training: the iterations of `train_samples` under
    /// the batch's calculator, with the rule and the worked line.
    fn iters_of_samples(&mut self, p: &Calculator, ts: u64) -> Option<(u128, String, String)> {
        let ts = ts as u128;
        Some(match &p.sched {
            Sched::Constant { gbs } => {
                let n = ts / gbs;
                let running = p.running(*gbs);
                if running != *gbs {
                    let trained = n * running;
                    self.report.diag(
                        Field::DecreaseBatchSizeIfNeeded,
                        Level::Warning,
                        format!(
                            "train_iters is computed from the configured --global-batch-size: {ts} // {gbs} = \
                             {n} iterations, but each trains the decreased batch {running}, so the run \
                             trains {n} × {running} = {trained} samples, {} fewer than train_samples {ts}.",
                            ts - trained
                        ),
                    );
                }
                (
                    n,
                    "train_iters = train_samples // global_batch_size".to_string(),
                    format!("train_iters = {ts} // {gbs} = {n}"),
                )
            }
            Sched::Ramp { samples, gbs, .. } => {
                let limit = (*samples).min(ts) + 1;
                let Ok((c, it)) = walk(&p.sched, Some(limit), None, |_, _, _| true) else {
                    self.too_long(p);
                    return None;
                };
                let rest = if ts > c { (ts - c) / gbs } else { 0 };
                let n = it + rest;
                (
                    n,
                    "train_iters = ramp-up iterations (while consumed ≤ ramp-up samples and ≤ train_samples) \
                     + (train_samples − consumed) // global_batch_size"
                        .to_string(),
                    format!(
                        "train_iters = {it} + {} = {n} (after the ramp-up {c} samples are consumed)",
                        if ts > c {
                            format!("({ts} − {c}) // {gbs}")
                        } else {
                            "0".to_string()
                        }
                    ),
                )
            }
            Sched::Step { .. } => {
                let Ok((c, n)) = walk(&p.sched, Some(ts), None, |_, _, _| true) else {
                    self.too_long(p);
                    return None;
                };
                (
                    n,
                    "train_iters: iterations while consumed < train_samples, each consuming the scheduled batch"
                        .to_string(),
                    format!("train_iters = {n} ({c} samples consumed)"),
                )
            }
        })
    }

    /// The training loop checks, every iteration, that the batch in use divides by
    /// micro_batch_size × data_parallel_size (`update_num_microbatches(consistency_check=True)`).
    pub(super) fn consistency(&mut self, p: &Calculator, n: u128) {
        if !p.sched.varying() || p.decrease {
            return;
        }
        let m = p.m;
        let mut bad = None;
        let res = walk(&p.sched, None, Some(n), |c, cur, done| {
            if cur % m != 0 {
                bad = Some((c, cur, done + 1));
                false
            } else {
                true
            }
        });
        if res.is_err() {
            self.too_long(p);
            return;
        }
        let Some((c, cur, k)) = bad else { return };
        let (mbs, dp) = (p.mbs, p.dp);
        let (field, text) = match p.sched {
            Sched::Step { .. } => (
                Field::StepBatchSizeSchedule,
                format!(
                    "current global batch size ({cur}) is not divisible by micro_batch_size ({mbs}) * \
                     data_parallel_size ({dp})"
                ),
            ),
            _ => (
                Field::RampupBatchSize,
                format!(
                    "current global batch size ({cur}) is not divisible by micro-batch-size ({mbs}) \
                     timesdata parallel size ({dp})"
                ),
            ),
        };
        let fix = match p.sched {
            Sched::Step { .. } => format!(
                "Nearest valid batch sizes for that step: {} (multiples of {mbs} × {dp} = {m}).",
                nearest_multiples(cur, m)
            ),
            _ => format!(
                "Every batch the ramp passes through must be a multiple of {mbs} × {dp} = {m}: make the start and \
                 the increment multiples of {m} (nearest to {cur}: {}), or set decrease_batch_size_if_needed.",
                nearest_multiples(cur, m)
            ),
        };
        self.report.refuse(
            field,
            Refusal::new(
                format!(
                    "The run stops at iteration {k} (after {c} samples), when the training loop checks the batch"
                ),
                format!("AssertionError: {text}"),
            )
            .fix(fix),
        );
    }

    /// 0.19.2, with a schedule: setup_model_and_optimizer's `num_microbatches >= 1` at the first
    /// batch, then each training iteration's checks in the loop's order: the microbatch count may
    /// not decrease, and the batch in use must divide by micro_batch_size × data_parallel_size.
    pub(super) fn loop_checks(&mut self, p: &Calculator, n: u128) {
        if !matches!(p.sched, Sched::Step { .. }) {
            return;
        }
        let (m, mbs, dp) = (p.m, p.mbs, p.dp);
        let b0 = p.sched.current(0);
        if b0 / m == 0 {
            let rep = p.dp_rep;
            self.report.refuse(
                Field::StepBatchSizeSchedule,
                Refusal::new(
                    "setup_model_and_optimizer (training.py) stops before the first iteration",
                    format!(
                        "AssertionError: current global batch size ({b0}) is too small for micro_batch_size \
                         ({mbs}) * data_parallel_size ({rep}) = {}. The world size cannot accommodate the batch \
                         size. This can happen when resuming with more GPUs than the current batch size \
                         schedule entry supports.",
                        mbs * rep
                    ),
                )
                .fix(format!(
                    "The first scheduled batch must be at least micro_batch_size × data_parallel_size = {m} \
                     (and a multiple of it)."
                )),
            );
            return;
        }
        enum Stop {
            Decrease(u128, u128),
            NotDivisible(u128),
        }
        let mut prev = b0 / m;
        let mut bad = None;
        let res = walk(&p.sched, None, Some(n), |c, cur, done| {
            let nm = cur / m;
            if done > 0 && nm < prev {
                bad = Some((c, done + 1, Stop::Decrease(prev, nm)));
                return false;
            }
            prev = nm;
            if cur % m != 0 {
                bad = Some((c, done + 1, Stop::NotDivisible(cur)));
                return false;
            }
            true
        });
        if res.is_err() {
            self.too_long(p);
            return;
        }
        let Some((c, k, stop)) = bad else { return };
        let by = format!(
            "The run stops at iteration {k} (after {c} samples), when the training loop checks the batch"
        );
        let refusal = match stop {
            Stop::Decrease(from, to) => Refusal::new(
                by,
                format!("AssertionError: Number of microbatches should not decrease; going from {from} to {to}"),
            )
            .fix(format!(
                "Megatron-LM's training loop allows the batch to grow only: make the scheduled batch sizes \
                 non-decreasing (in microbatches of {mbs} × {dp} = {m})."
            )),
            Stop::NotDivisible(cur) => Refusal::new(
                by,
                format!(
                    "AssertionError: current global batch size ({cur}) is not divisible by micro_batch_size \
                     ({mbs}) * data_parallel_size ({dp})"
                ),
            )
            .fix(format!(
                "Nearest valid batch sizes for that step: {} (multiples of {mbs} × {dp} = {m}).",
                nearest_multiples(cur, m)
            )),
        };
        self.report.refuse(Field::StepBatchSizeSchedule, refusal);
    }
}

/// A refusal of validate_args' assertions at `field`.
fn refuse_args(r: &mut Report, field: Field, text: &str, fix: &str) {
    r.refuse(
        field,
        Refusal::new(
            "Megatron-LM refuses this in validate_args",
            format!("AssertionError: {text}"),
        )
        .fix(fix),
    );
}
