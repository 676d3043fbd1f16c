//! torchtitan's batch stage: 0.3.0's global batch and gradient accumulation, HEAD's token budget
//! (`trainer.py` after #4121), and the pipeline microbatch count.

use super::*;

impl Calc<'_> {
    // ---- 0.3.0: global batch and gradient accumulation (trainer.py) ------------------------

    pub(super) fn batch(&mut self, d: Dims) {
        let deg = d.batch_degree();
        let (Some(lbs), Some(gbs_in), Some(seq)) = (
            self.inputs.local_batch_size.or(DEFAULT_LOCAL_BATCH_SIZE),
            self.inputs.global_batch_size.or(-1),
            self.inputs.seq_len.or(DEFAULT_SEQ_LEN),
        ) else {
            return;
        };
        let Some((gbs, per_step)) = self.global_batch(lbs, gbs_in, deg) else {
            return;
        };
        let ga = gbs / per_step;
        let (Some(g), Some(a)) = (int(gbs), int(ga)) else {
            self.report.diag(
                Field::LocalBatchSize,
                Level::Error,
                format!("local_batch_size × dp = {lbs} × {deg} is too large for dpcalc to count exactly"),
            );
            return;
        };
        self.report.set(Output::GlobalBatchSize, g);
        self.report.set(Output::GradientAccumulationSteps, a);
        self.report.explain_with(
            Output::GradientAccumulationSteps,
            "gradient_accumulation_steps = global_batch_size // (local_batch_size × dp)",
            || format!("gradient_accumulation_steps = {gbs} // ({lbs} × {deg}) = {ga}"),
        );
        self.pp_microbatches(d, lbs, ga, gbs);
        self.tokens_per_step(gbs, seq);
    }

    /// The global batch (`-1`: local_batch_size × dp) and the samples of one micro step on every
    /// replica, `(global, per_step)`, with trainer.py's assertion that one divides the other.
    fn global_batch(&mut self, lbs: u64, gbs_in: i64, deg: u128) -> Option<(u128, u128)> {
        let per_step = u128::from(lbs) * deg; // u64 × u64 fits u128
        let gbs = if gbs_in < 0 {
            self.report.explain_with(
                Output::GlobalBatchSize,
                "global_batch_size -1 = local_batch_size × dp (one micro batch per step)",
                || format!("global_batch_size = {lbs} × {deg} = {per_step}"),
            );
            per_step
        } else {
            self.report.explain_with(
                Output::GlobalBatchSize,
                "training.global_batch_size (as given)",
                || format!("global_batch_size = {gbs_in}"),
            );
            gbs_in as u128
        };
        if gbs == 0 {
            let why = if gbs_in == 0 {
                "global_batch_size 0"
            } else {
                "local_batch_size 0 makes the default global batch 0"
            };
            let field = if gbs_in == 0 {
                Field::GlobalBatchSize
            } else {
                Field::LocalBatchSize
            };
            self.report.refuse(
                field,
                Refusal::new(
                    format!("{why}: torchtitan stops with a bare AssertionError (no message)"),
                    "assert global_batch_size > 0",
                )
                .fix("Use -1 for local_batch_size × dp."),
            );
            return None;
        }
        if per_step == 0 {
            self.report.refuse(
                Field::LocalBatchSize,
                Refusal::new(
                    "local_batch_size 0: torchtitan stops with",
                    "ZeroDivisionError: integer modulo by zero",
                ),
            );
            return None;
        }
        if gbs % per_step != 0 {
            let near = join(&multiples_around(gbs, per_step));
            self.report.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "torchtitan stops with AssertionError",
                    format!(
                        "global batch size must be multiple of local batch size times data-parallel degree \
                         ({gbs} % ({lbs} * {deg}) != 0)"
                    ),
                )
                .fix(format!(
                    "Nearest valid: global_batch_size {near} (multiples of {lbs} × {deg} = {per_step}), or -1."
                )),
            );
            return None;
        }
        Some((gbs, per_step))
    }

    /// Pipeline microbatches (`local_batch_size // pipeline_parallel_microbatch_size`, PP only), and
    /// the batch each GPU runs at a time, published.
    fn pp_microbatches(&mut self, d: Dims, lbs: u64, ga: u128, gbs: u128) {
        // pipeline microbatches: local_batch_size // pipeline_parallel_microbatch_size (PP only)
        let mut pp_microbatches = Some(1);
        if d.pp > 1 {
            pp_microbatches = None;
            if let Some(mbs) = self.inputs.pp_microbatch_size.or(1).filter(|&m| m > 0) {
                let n = lbs / mbs;
                pp_microbatches = Some(n);
                self.report
                    .set(Output::NumPpMicrobatches, Num::Int(n.into()));
                self.report.explain_with(
                    Output::NumPpMicrobatches,
                    "pipeline microbatches = local_batch_size // pipeline_parallel_microbatch_size",
                    || format!("microbatches = {lbs} // {mbs} = {n}"),
                );
            }
        } else {
            self.report.set(Output::NumPpMicrobatches, Num::Int(1));
        }
        // each GPU runs local_batch_size ÷ the pipeline's microbatches samples at a time
        if let Some(n) = pp_microbatches.filter(|&n| n > 0 && lbs % n == 0) {
            let n = u128::from(n);
            self.report
                .plan
                .publish_batch(u128::from(lbs) / n, ga.saturating_mul(n), gbs);
        }
    }

    /// Tokens per step: `global_batch_size × seq_len`.
    fn tokens_per_step(&mut self, gbs: u128, seq: u64) {
        match gbs.checked_mul(seq.into()).and_then(int) {
            Some(t) => {
                self.report.set(Output::TokensPerStep, t);
                self.report.explain_with(
                    Output::TokensPerStep,
                    "tokens per step = global_batch_size × seq_len",
                    || format!("tokens = {gbs} × {seq} = {}", t.raw()),
                );
            }
            None => self.report.diag(
                Field::SeqLen,
                Level::Error,
                "global_batch_size × seq_len is too large to count",
            ),
        }
    }

    // ---- HEAD: token budget (trainer.py after #4121) ---------------------------------------

    pub(super) fn tokens(&mut self, d: Dims) {
        let deg = d.batch_degree();
        let (Some(per_mb), Some(npp), Some(step_in)) = (
            self.inputs
                .tokens_per_microbatch
                .or(DEFAULT_TOKENS_PER_MICROBATCH),
            self.inputs.num_pp_microbatches.or(1),
            self.inputs.tokens_per_train_step.or(-1),
        ) else {
            return;
        };
        if npp == 0 {
            return; // refused in config_checks
        }
        let npp = if d.pp > 1 { npp } else { 1 };
        self.report
            .set(Output::NumPpMicrobatches, Num::Int(npp.into()));
        let Some((step, per_iter)) = self.token_step(per_mb, npp, step_in, deg) else {
            return;
        };
        let ga = step / per_iter;
        if ga == 0 {
            self.report.diag(
                Field::NumTokensPerTrainStep,
                Level::Warning,
                "num_tokens_per_train_step 0 is accepted, so gradient accumulation is 0: each optimizer step trains on no data. Use -1 for one microbatch per DP rank.",
            );
        }
        if let (Some(t), Some(a)) = (int(step), int(ga)) {
            self.report.set(Output::TokensPerStep, t);
            self.report.set(Output::GradientAccumulationSteps, a);
        }
        self.report.explain_with(
            Output::GradientAccumulationSteps,
            "gradient_accumulation_steps = num_tokens_per_train_step // (tokens per microbatch × num_pp_microbatches × dp)",
            || format!("gradient_accumulation_steps = {step} // ({per_mb} × {npp} × {deg}) = {ga}"),
);
        if let Some(ctx) = self.inputs.max_context_length.given() {
            if ctx == 0 {
                self.report.diag(
                    Field::MaxContextLength,
                    Level::Warning,
                    "max_context_length 0 leaves no room for any document",
                );
            }
        }
    }

    /// The tokens of one optimizer step (`-1`: one microbatch per DP rank) and of one
    /// gradient-accumulation iteration, `(step, per_iter)`, with trainer.py's divisibility check.
    fn token_step(
        &mut self,
        per_mb: u64,
        npp: u64,
        step_in: i64,
        deg: u128,
    ) -> Option<(u128, u128)> {
        let per_dp = u128::from(per_mb) * u128::from(npp);
        let Some(per_iter) = per_dp.checked_mul(deg) else {
            self.report.diag(
                Field::NumTokensPerMicrobatchPerDpRank,
                Level::Error,
                "tokens per gradient-accumulation iteration are too large to count",
            );
            return None;
        };
        let step = if step_in < 0 {
            self.report.explain_with(
                Output::TokensPerStep,
                "num_tokens_per_train_step -1 = num_tokens_per_microbatch_per_dp_rank × num_pp_microbatches (PP only) × dp",
                || format!("num_tokens_per_train_step = {per_mb} × {npp} × {deg} = {per_iter}"),
);
            per_iter
        } else {
            step_in as u128
        };
        if per_iter == 0 {
            self.report.refuse(
                Field::NumTokensPerMicrobatchPerDpRank,
                Refusal::new(
                    "num_tokens_per_microbatch_per_dp_rank 0: torchtitan stops with",
                    "ZeroDivisionError: integer modulo by zero",
                ),
            );
            return None;
        }
        if step % per_iter != 0 {
            let near = join(&multiples_around(step, per_iter));
            self.report.refuse(
                Field::NumTokensPerTrainStep,
                Refusal::new(
                    "torchtitan refuses",
                    format!(
                        "training.num_tokens_per_train_step ({step}) must be divisible by the number of \
                         tokens processed globally in one gradient accumulation iteration ({per_iter})."
                    ),
                )
                .fix(format!("Nearest valid: num_tokens_per_train_step {near}, or -1.")),
            );
            return None;
        }
        Some((step, per_iter))
    }
}
