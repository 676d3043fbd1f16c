//! Megatron-LM's schedule and tokens stages: `get_optimizer_param_scheduler`'s warmup and decay
//! in samples with `OptimizerParamScheduler`'s checks, and the tokens of a step.

use super::*;

impl Calc<'_> {
    /// `get_optimizer_param_scheduler`: the warmup in samples, and `OptimizerParamScheduler`'s
    /// `assert lr_warmup_steps < lr_decay_steps`.
    pub(super) fn warmup(&mut self, p: &Calculator, mode: Mode) {
        let i = self.inputs.clone();
        let frac = match i.lr_warmup_fraction {
            Param::Invalid => return,
            f => f.given(),
        };
        let (lwi, lws) = match (i.lr_warmup_iters.or(0), i.lr_warmup_samples.or(0)) {
            (Some(a), Some(b)) => (a as u128, b as u128),
            _ => return,
        };
        // --lr-decay-iters / --lr-decay-samples: the decay length, when given (even 0: `is None`)
        let (decay_iters, decay_samples) = match (i.lr_decay_iters, i.lr_decay_samples) {
            (Param::Invalid, _) | (_, Param::Invalid) => return,
            (a, b) => (a.given().map(u128::from), b.given().map(u128::from)),
        };
        let (decay, decay_worked, lw, lw_worked, field) = match mode {
            Mode::Iters(n) => match self.iters_lengths(p, n, frac, lwi, decay_iters) {
                Some(lengths) => lengths,
                None => return,
            },
            Mode::Samples(ts) => samples_lengths(ts, frac, lws, decay_samples),
        };
        self.report.set(Output::LrWarmupSteps, lw);
        self.report.explain_with(
            Output::LrWarmupSteps,
            "the scheduler counts samples: warmup and decay lengths are in samples",
            || format!("{lw_worked}; {decay_worked}"),
        );
        let given = match mode {
            Mode::Iters(_) => decay_iters.map(|_| Field::LrDecayIters),
            Mode::Samples(_) => decay_samples.map(|_| Field::LrDecaySamples),
        };
        if self.scheduler_refuses(decay, lw, field, given) {
            return;
        }
        self.warmup_steps(p, mode, lw, (frac, lwi));
    }

    /// `OptimizerParamScheduler`'s asserts: `lr_decay_steps > 0` and `lr_warmup_steps <
    /// lr_decay_steps`; whether one stops Megatron.
    fn scheduler_refuses(
        &mut self,
        decay: u128,
        lw: Num,
        field: Field,
        given: Option<Field>,
    ) -> bool {
        if decay == 0 {
            // only a given length can be 0 (train_iters / train_samples 0 are refused earlier)
            self.report.refuse(
                given.unwrap_or(field),
                Refusal::new(
                    "Megatron stops building the learning-rate scheduler with a bare AssertionError \
                     (optimizer_param_scheduler.py)",
                    "assert self.lr_decay_steps > 0",
                )
                .fix(
                    "A decay length of 0 is taken as given, not as the default (the whole run): \
                     remove it, or give a positive length.",
                ),
            );
            return true;
        }
        if num::cmp(lw, Num::Int(decay as i128)) != Ordering::Less {
            self.report.refuse(
                field,
                Refusal::new(
                    "Megatron stops building the learning-rate scheduler with a bare AssertionError \
                     (optimizer_param_scheduler.py)",
                    "assert self.lr_warmup_steps < self.lr_decay_steps",
                )
                .fix(match given {
                    None => format!(
                        "The warmup ({} samples) is not shorter than the decay ({decay} samples, the whole run). \
                         Make the warmup shorter than the training.",
                        lw.raw()
                    ),
                    Some(f) => format!(
                        "The warmup ({} samples) is not shorter than the decay ({decay} samples, from {}). \
                         Make the warmup shorter than the decay.",
                        lw.raw(),
                        f.key()
                    ),
                }),
            );
            return true;
        }
        false
    }

    /// The warmup in optimizer steps: the steps until the samples stepped reach the warmup.
    fn warmup_steps(
        &mut self,
        p: &Calculator,
        mode: Mode,
        lw: Num,
        (frac, lwi): (Option<f64>, u128),
    ) {
        // Optimizer steps until the learning rate peaks: each step adds the running batch.
        let need: u128 = match lw {
            Num::Int(x) => x as u128,
            Num::Float(x) => x.ceil() as u128,
        };
        if p.sched.varying() {
            if self.version != Version::Core0192 {
                return;
            }
            // the loop steps the scheduler by each iteration's batch
            let Ok((c, k)) = walk(&p.sched, Some(need), None, |_, _, _| true) else {
                self.too_long(p);
                return;
            };
            self.report.set(Output::WarmupSteps, Num::Int(k as i128));
            self.report.explain_with(
                Output::WarmupSteps,
                "warmup steps = iterations until the samples stepped reach lr_warmup_steps (the scheduler \
                 advances by each iteration's scheduled batch)",
                || format!("warmup steps = {k} ({c} samples ≥ {})", lw.raw()),
            );
            return;
        }
        let running = p.running(p.sched.final_gbs());
        let k = need.div_ceil(running);
        self.report.set(Output::WarmupSteps, Num::Int(k as i128));
        self.report.explain_with(
            Output::WarmupSteps,
            "warmup steps = ceil(lr_warmup_steps / running global batch): the scheduler advances by the samples each step trains",
            || format!("warmup steps = ceil({} / {running}) = {k}", lw.raw()),
        );
        if p.decrease && matches!(mode, Mode::Iters(_)) && frac.is_none() && k != lwi {
            self.report.diag(
                Field::LrWarmupIters,
                Level::Warning,
                format!(
                    "With decrease_batch_size_if_needed the warmup is lr_warmup_iters × global_batch_size samples, \
                     but each step trains only {running}: the learning rate peaks after {k} steps, not {lwi}."
                ),
            );
        }
    }

    /// With `--train-iters`: the decay (`--lr-decay-iters` or the whole run) and the warmup, in
    /// iterations × `args.global_batch_size` samples.
    fn iters_lengths(
        &mut self,
        p: &Calculator,
        n: u64,
        frac: Option<f64>,
        lwi: u128,
        decay_iters: Option<u128>,
    ) -> Option<Lengths> {
        let Some(gbs) = p.gbs_arg else {
            self.report.diag(
                    Field::LrWarmupIters,
                    Level::Note,
                    "With a schedule and train_iters, Megatron counts warmup and decay as iterations × \
                     args.global_batch_size samples; dpcalc does not show the warmup for this combination.",
                );
            return None;
        };
        let (len, name) = match decay_iters {
            Some(d) => (d, "lr_decay_iters"),
            None => (n as u128, "train_iters"),
        };
        let decay = len.checked_mul(gbs)?;
        let dw = format!("lr_decay_steps = {name} × global_batch_size = {len} × {gbs} = {decay}");
        Some(match frac {
            Some(f) => {
                let lw = f * decay as f64;
                (
                    decay,
                    dw,
                    Num::Float(lw),
                    format!(
                        "lr_warmup_steps = lr_warmup_fraction × lr_decay_steps = {} × {decay} = {}",
                        num::float_repr(f),
                        num::float_repr(lw)
                    ),
                    Field::LrWarmupFraction,
                )
            }
            None => {
                let lw = lwi.checked_mul(gbs)?;
                (
                        decay,
                        dw,
                        Num::Int(lw as i128),
                        format!(
                            "lr_warmup_steps = lr_warmup_iters × global_batch_size = {lwi} × {gbs} = {lw}"
                        ),
                        Field::LrWarmupIters,
                    )
            }
        })
    }

    // ---- tokens --------------------------------------------------------------------------

    pub(super) fn tokens(&mut self, p: &Calculator) {
        let seq = match self.inputs.seq_length {
            Param::Given(s) => s as u128,
            _ => return,
        };
        if seq == 0 {
            if !matches!(p.sched, Sched::Step { .. }) {
                self.report.diag(
                    Field::SeqLength,
                    Level::Error,
                    "seq_length must be at least 1 (tokens per sample)",
                );
            }
            return;
        }
        let running = p.running(p.sched.final_gbs());
        let Some(t) = running.checked_mul(seq) else {
            self.report.diag(
                Field::SeqLength,
                Level::Error,
                "tokens per step are too many to count",
            );
            return;
        };
        self.report.set(Output::TokensPerStep, Num::Int(t as i128));
        self.report.explain_with(
            Output::TokensPerStep,
            "tokens per step = running global batch × seq_length (at the full batch)",
            || format!("tokens per step = {running} × {seq} = {t}"),
        );
    }
}

/// The scheduler's lengths in samples: `(decay, its worked line, warmup, its worked line, the
/// field the warmup comes from)`.
type Lengths = (u128, String, Num, String, Field);

/// With `--train-samples`: the decay (`--lr-decay-samples` or the whole run) and the warmup, in
/// samples.
fn samples_lengths(ts: u64, frac: Option<f64>, lws: u128, decay_samples: Option<u128>) -> Lengths {
    let (decay, name) = match decay_samples {
        Some(d) => (d, "lr_decay_samples"),
        None => (ts as u128, "train_samples"),
    };
    let dw = format!("lr_decay_steps = {name} = {decay}");
    match frac {
        Some(f) => {
            let lw = f * decay as f64;
            (
                decay,
                dw,
                Num::Float(lw),
                format!(
                    "lr_warmup_steps = lr_warmup_fraction × lr_decay_steps = {} × {decay} = {}",
                    num::float_repr(f),
                    num::float_repr(lw)
                ),
                Field::LrWarmupFraction,
            )
        }
        None => (
            decay,
            dw,
            Num::Int(lws as i128),
            format!("lr_warmup_steps = lr_warmup_samples = {lws}"),
            Field::LrWarmupSamples,
        ),
    }
}
