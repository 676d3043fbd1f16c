//! The Trainer's batch stage: the real global batch (accelerate's shards, batch_rebalance) and
//! the total `get_total_train_batch_size` logs.

use super::*;

impl Calc<'_> {
    // ---- the batch: real global batch and the logged total ---------------------------------

    pub(super) fn batch(&mut self, dims: Option<Dims>) -> Option<u128> {
        let (b, ga) = self.batch_sizes(dims)?;
        let d = dims?;
        let (global, logged, logged_dp) = self.global_batch(d, b, ga)?;
        self.logged_total(d, (b, ga), global, (logged, logged_dp));
        self.batch_notes(d);
        Some(global)
    }

    /// The micro batch and the accumulation with their refusals (BatchRebalanceSampler's asserts,
    /// torch's DataLoader, the Trainer's division), `gradient_accumulation_steps` set.
    fn batch_sizes(&mut self, dims: Option<Dims>) -> Option<(u64, u64)> {
        let b = self.inputs.per_device.or(DEFAULT_PER_DEVICE)?;
        let ga = self.inputs.ga.or(1)?;
        let rebalance = self.sampling == Sampling::BatchRebalance;
        if rebalance && (b == 0 || ga == 0) {
            // BatchRebalanceSampler.__init__: bare asserts, checked in this order
            let ws = dims.map_or("world_size".to_string(), |d| d.ws.to_string());
            if ga == 0 {
                self.report.refuse(
                    Field::GradientAccumulationSteps,
                    Refusal::new(
                        "BatchRebalanceSampler.__init__ stops at `assert grad_accum >= 1` (a bare assert, no message)",
                        "AssertionError",
                    )
                    .fix("gradient_accumulation_steps 0: use at least 1."),
                );
            } else {
                self.report.refuse(
                    Field::PerDeviceTrainBatchSize,
                    Refusal::new(
                        "BatchRebalanceSampler.__init__ stops at `assert effective_batch_size >= dp_size * grad_accum` \
                         (a bare assert, no message)",
                        "AssertionError",
                    )
                    .fix(format!(
                        "(effective_batch_size = 0 × {ga} × {ws} = 0, below {ws} × {ga}). per_device_train_batch_size 0: \
                         use at least 1."
                    )),
                );
            }
            return None;
        }
        if b == 0 {
            self.report.refuse(
                Field::PerDeviceTrainBatchSize,
                Refusal::new(
                    "torch's DataLoader raises",
                    "batch_size should be a positive integer value, but got batch_size=0",
                )
                .fix("per_device_train_batch_size 0: use at least 1."),
            );
        }
        if ga == 0 {
            self.report.refuse(
                Field::GradientAccumulationSteps,
                Refusal::new(
                    "the Trainer stops in num_update_steps_per_epoch with ZeroDivisionError",
                    "integer division or modulo by zero",
                )
                .fix("gradient_accumulation_steps 0: use at least 1."),
            );
        }
        if b == 0 || ga == 0 {
            return None;
        }
        self.report
            .set(Output::GradientAccumulationSteps, Num::Int(ga.into()));
        Some((b, ga))
    }

    /// The real global batch (published in the plan and set) and the total the Trainer logs, with
    /// the data-parallel factor it logs it with: `(global, logged, logged_dp)`.
    fn global_batch(&mut self, d: Dims, b: u64, ga: u64) -> Option<(u128, u128, u64)> {
        let rebalance = self.sampling == Sampling::BatchRebalance;
        let per_replica = u128::from(b) * u128::from(ga);
        // batch_rebalance: every one of the world_size ranks gets its own micro-batches (the SP
        // adapter then spreads each rank's batch over sp_size steps)
        let replicas = if rebalance { d.ws / d.sp } else { d.dp };
        let global = per_replica.checked_mul(replicas.into())?;
        self.report.plan.publish_batch(b.into(), ga.into(), global);
        let logged_dp = match self.version {
            Version::V5 => d.dp,
            Version::V457 => d.ws / d.tp,
            _ => d.ws,
        };
        let logged = per_replica.checked_mul(logged_dp.into())?;
        let (Some(g), Some(l)) = (int(global), int(logged)) else {
            self.report.diag(
                Field::PerDeviceTrainBatchSize,
                Level::Error,
                "per_device_train_batch_size × gradient_accumulation_steps × dp is too large to count exactly",
            );
            return None;
        };
        self.report.set(Output::GlobalBatchSize, g);
        if !rebalance {
            self.report.explain_with(
                Output::GlobalBatchSize,
                "global batch = per_device_train_batch_size × gradient_accumulation_steps × dp",
                || format!("global batch = {b} × {ga} × {} = {global}", d.dp),
            );
        } else if d.sp > 1 {
            self.report.explain_with(
                Output::GlobalBatchSize,
                "batch_rebalance: global batch = effective_batch_size / sp_size, effective_batch_size = per_device × GA × \
                 world_size (every rank its own rows; the SP adapter spreads each rank's batch over sp_size steps)",
                || format!(
                    "global batch = {b} × {ga} × {} / {} = {global}",
                    d.ws, d.sp
                ),
);
        } else {
            self.report.explain_with(
                Output::GlobalBatchSize,
                "batch_rebalance: global batch = effective_batch_size = per_device × GA × world_size (BatchRebalanceSampler; \
                 every rank, tensor- and context-parallel ranks included, gets its own rows)",
                || format!("global batch = {b} × {ga} × {} = {global}", d.ws),
);
        }
        self.report.set(Output::TotalTrainBatchSize, l);
        Some((global, logged, logged_dp))
    }

    /// `total_train_batch_size` as the Trainer logs it, and the warning when it is not the batch
    /// each step trains on.
    fn logged_total(
        &mut self,
        d: Dims,
        (b, ga): (u64, u64),
        global: u128,
        (logged, logged_dp): (u128, u64),
    ) {
        let rebalance = self.sampling == Sampling::BatchRebalance;
        let (rule, who) = match self.version {
            Version::V5 => ("world_size // tp // cp // sp", "dp"),
            Version::V457 => ("world_size // tp_size", "world_size // tp"),
            _ => ("world_size", "world_size"),
        };
        self.report.explain_with(
            Output::TotalTrainBatchSize,
            format!("total_train_batch_size (logged) = per_device × GA × {rule}"),
            || format!("total_train_batch_size = {b} × {ga} × {logged_dp} = {logged}"),
        );
        if rebalance && logged != global {
            let per_step = if d.sp > 1 {
                format!("{b} × {ga} × world_size {} / sp_size {}", d.ws, d.sp)
            } else {
                format!("effective_batch_size = {b} × {ga} × world_size {}", d.ws)
            };
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Warning,
                format!(
                    "transformers {} logs \u{201c}Total train batch size (w. parallel, distributed & accumulation) = {logged}\u{201d} \
                     ({b} × {ga} × dp {}), but with batch_rebalance each optimizer step takes {global} samples ({per_step}): \
                     BatchRebalanceSampler gives every one of the {} ranks its own micro-batches, so tensor- and \
                     context-parallel ranks get different rows. The docs say tensor parallelism is not yet supported; \
                     nothing refuses it. The step count shown is what the Trainer runs.",
                    self.name, d.dp, d.ws
                ),
            );
        } else if logged != global {
            self.report.diag(
                Field::WorldSize,
                Level::Warning,
                format!(
                    "transformers {} logs \u{201c}Total train batch size (w. parallel, distributed & accumulation) = {logged}\u{201d} \
                     (it multiplies by {who} = {logged_dp}), but each optimizer step trains on {global} samples \
                     ({b} × {ga} × dp {}). The logged value is wrong, the step count is not.",
                    self.name,
                    d.dp
                ),
            );
        }
    }

    /// What this release and accelerate 1.13 leave out: 4.57's missing SP adapter, 1.13's
    /// refusal of batch_rebalance over several processes.
    fn batch_notes(&mut self, d: Dims) {
        let rebalance = self.sampling == Sampling::BatchRebalance;
        if self.version == Version::V457 && d.sp > 1 {
            self.report.diag(
                Field::SpSize,
                Level::Warning,
                "transformers 4.57 has no sequence-parallel dataloader adapter (it came in 5.x): the Trainer's step count \
                 is computed from each rank's own shard, as shown",
            );
        }
        // accelerate 1.13 BatchSamplerShard.__init__ refuses a batch sampler without batch_size
        // when it shards over more than one process (1.14 dropped the check)
        let processes = if d.sp > 1 {
            d.ws / d.tp
        } else {
            d.ws / d.tp / d.cp
        };
        if rebalance && processes > 1 {
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Note,
                format!(
                    "batch_rebalance needs accelerate ≥ 1.14 here ({processes} data processes): accelerate 1.13 and older \
                     stop in accelerator.prepare with \u{201c}{EVEN_BATCHES}\u{201d} (transformers only requires \
                     accelerate>=1.1.0). The numbers shown are accelerate ≥ 1.14's."
                ),
            );
        }
    }
}
