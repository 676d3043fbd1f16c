//! nanotron's batch stage: `Config.global_batch_size`, the tokens per step and the run's length,
//! the values its config accepts unchecked, and HEAD's dummy-data sequence check.

use super::*;

/// A product too large for dpcalc to count (Python's integers are unbounded).
pub(super) fn too_large(r: &mut Report, what: &str) {
    r.diag(
        Field::MicroBatchSize,
        Level::Error,
        format!("{what} is too large for dpcalc to count exactly"),
    );
}

/// `Config.global_batch_size`, the tokens per step and the run's length: each value as soon as
/// its own factors are typed (nanotron's properties on the keys given), none otherwise.
pub(super) fn batch(c: &Given, r: &mut Report) {
    if let Some(dp) = c.dp {
        r.set(Output::DpWorldSize, Num::Int(dp.into()));
        r.explain(
            Output::DpWorldSize,
            "dp_world_size = parallelism.dp (nanotron takes it as given)",
            format!("dp_world_size = {dp}"),
        );
    }
    if let Some(accum) = c.accum {
        r.set(Output::GradientAccumulationSteps, Num::Int(accum.into()));
        r.explain(
            Output::GradientAccumulationSteps,
            "micro batches per step = tokens.batch_accumulation_per_replica",
            format!("batch_accumulation_per_replica = {accum}"),
        );
    }
    if let Some(steps) = c.steps {
        r.set(Output::MaxSteps, Num::Int(steps.into()));
        r.explain(
            Output::MaxSteps,
            "optimizer steps = tokens.train_steps (the loop runs steps 1 … train_steps)",
            format!("train_steps = {steps}"),
        );
    }
    let (Some(mbs), Some(accum), Some(dp)) = (c.mbs, c.accum, c.dp) else {
        return;
    };
    let gbs = u128::from(mbs)
        .checked_mul(accum.into())
        .and_then(|x| x.checked_mul(dp.into()))
        .and_then(|x| i128::try_from(x).ok());
    let Some(gbs) = gbs else {
        return too_large(r, "micro_batch_size × batch_accumulation_per_replica × dp");
    };
    r.plan
        .publish_batch(mbs.into(), accum.into(), gbs.unsigned_abs());
    r.set(Output::GlobalBatchSize, Num::Int(gbs));
    r.explain(
        Output::GlobalBatchSize,
        "global_batch_size = micro_batch_size × batch_accumulation_per_replica × dp",
        format!("global_batch_size = {mbs} × {accum} × {dp} = {gbs}"),
    );
    let Some(seq) = c.seq else {
        return;
    };
    let Some(tokens) = gbs.checked_mul(seq.into()) else {
        return too_large(r, "global_batch_size × sequence_length");
    };
    r.set(Output::TokensPerStep, Num::Int(tokens));
    r.explain(
        Output::TokensPerStep,
        "global_batch_size_in_tokens = global_batch_size × sequence_length",
        format!("global_batch_size_in_tokens = {gbs} × {seq} = {tokens}"),
    );
    let Some(steps) = c.steps else {
        return;
    };
    let Some(total) = tokens.checked_mul(steps.into()) else {
        return too_large(r, "train_steps × global_batch_size_in_tokens");
    };
    r.set(Output::TotalTokens, Num::Int(total));
    r.explain(
        Output::TotalTokens,
        "total_tokens = train_steps × global_batch_size_in_tokens",
        format!("total_tokens = {steps} × {tokens} = {total}"),
    );
}

/// Values nanotron's config accepts without a check, and what then happens.
pub(super) fn tokens_checks(c: &Given, r: &mut Report) {
    if c.mbs == Some(0) {
        r.refuse(
            Field::MicroBatchSize,
            Refusal::new(
                "nanotron's config accepts micro_batch_size 0, but the global batch is 0 and the training \
                 dataloader refuses it",
                "ValueError: batch_size should be a positive integer value, but got batch_size=0",
            )
            .fix("Use at least 1."),
        );
    }
    if c.accum == Some(0) {
        r.diag(
            Field::BatchAccumulationPerReplica,
            Level::Error,
            "batch_accumulation_per_replica 0: nanotron does not check it, but each step would run no micro \
             batch (global batch 0). Use at least 1.",
        );
    }
    if c.seq == Some(0) {
        r.diag(
            Field::SequenceLength,
            Level::Error,
            "sequence_length 0: nanotron does not check it, but every sample would hold no token. Use at least 1.",
        );
    }
    if c.steps == Some(0) {
        r.diag(
            Field::TrainSteps,
            Level::Warning,
            "train_steps 0: nanotron accepts it, and its loop (range(1, train_steps + 1)) runs no step.",
        );
    }
    // parallel/pipeline_parallel/engine.py (OneForwardOneBackwardPipelineEngine.train_batch_iter)
    if let (Some(pp), Some(accum)) = (c.pp, c.accum) {
        if pp > 1 && accum < pp - 1 {
            r.diag(
                Field::BatchAccumulationPerReplica,
                Level::Warning,
                format!(
                    "With pp_engine: 1f1b, nanotron stops with AssertionError: Number of microbatches ({accum}) must \
                     be at least PP_SIZE-1={} when using the OneForwardOneBackwardPipelineEngine. The default engine \
                     (afab) accepts it.",
                    pp - 1
                ),
            );
        }
    }
}

/// HEAD, `run_train.py` with dummy data (`data.dataset: null`): `dummy_infinite_data_generator`
/// (`data/dataloader.py`) asserts that every context-parallel rank gets an equal slice of the
/// sequence. It runs once `ParallelContext` is built.
pub(super) fn sequence_check(seq: u64, cp: u64, r: &mut Report) {
    if cp == 0 || seq % cp == 0 {
        return;
    }
    let down = seq - seq % cp;
    let up = down + cp;
    r.refuse(
        Field::SequenceLength,
        Refusal::new(
            "nanotron stops with",
            format!("AssertionError: sequence_length {seq} must be divisible by cp_size {cp}"),
        )
        .fix(format!(
            "(run_train.py with dummy data: dummy_infinite_data_generator; with a dataset, the \
             collator (clm_collator.py) refuses the uneven slices.) Use a multiple of \
             context_parallel_size {cp}: {}.",
            if down > 0 {
                format!("{down} or {up}")
            } else {
                up.to_string()
            }
        )),
    );
}
