//! DeepSpeed's steps stage: the epochs of the user's loop and the data loader's length
//! (`DeepSpeedDataLoader.__len__`, `is_gradient_accumulation_boundary`).

use super::*;

impl Calc<'_> {
    /// Epochs as a whole number: DeepSpeed has none, the user's loop runs `range(num_epochs)`.
    pub(super) fn epochs(&mut self) -> Option<u64> {
        match self.inputs.num_epochs {
            Param::Absent => Some(1),
            Param::Invalid => None,
            Param::Given(e) if e.fract() == 0.0 && e < EXACT_FLOAT as f64 => Some(e as u64),
            Param::Given(e) => {
                self.report.diag(
                    Field::NumEpochs,
                    Level::Error,
                    format!(
                        "DeepSpeed has no epochs of its own: your loop makes whole passes over the data loader, so num_epochs \
                         must be a whole number (not {})",
                        num::float_repr(e)
                    ),
                );
                None
            }
        }
    }

    /// Without a computable batch: still check the data inputs.
    pub(super) fn steps_inputs_only(&mut self) {
        let _ = self.epochs();
        let _ = self.samples();
    }

    pub(super) fn samples(&mut self) -> Option<u64> {
        match self.inputs.num_samples {
            Param::Given(n) if n > EXACT_FLOAT => {
                self.report.diag(
                    Field::NumSamples,
                    Level::Error,
                    "num_samples is above 2^53: dpcalc cannot reproduce DistributedSampler's float rounding exactly",
                );
                None
            }
            p => p.given(),
        }
    }

    pub(super) fn steps(&mut self, c: &Cluster, b: &Batch) {
        let epochs = self.epochs();
        let samples = self.samples();
        let drop_last = self.inputs.drop_last;
        if self.inputs.num_samples == Param::Absent {
            self.report.diag(
                Field::NumSamples,
                Level::Hint,
                "DeepSpeed has no epochs or step count of its own: your loop decides. Give the training rows to count \
                 what deepspeed.initialize(training_data=…)'s data loader yields per epoch.",
            );
            return;
        }
        let (Some(n), Some(epochs), Some(drop_last)) = (samples, epochs, drop_last.or(false))
        else {
            return;
        };
        if matches!(c.source, Source::SequenceParallel(_)) {
            self.report.diag(
                Field::NumSamples,
                Level::Hint,
                "With Ulysses sequence parallelism the step count depends on the framework's sequence-parallel data \
                 loader (HF's UlyssesSPDataLoaderAdapter), not DeepSpeed's; dpcalc does not count it here.",
            );
            return;
        }
        let (Some(dp), Num::Int(micro), Num::Int(ga)) = (c.replicas, b.micro, b.ga) else {
            return;
        };
        let (Ok(micro), Ok(ga)) = (u64::try_from(micro), u64::try_from(ga)) else {
            return;
        };
        if micro > EXACT_FLOAT || dp > EXACT_FLOAT {
            return;
        }
        let len = self.loader_len(n, dp, micro, drop_last);
        self.optimizer_steps(len, epochs, ga);
    }

    /// `DeepSpeedDataLoader.__len__` over torch's `DistributedSampler`: micro batches per epoch.
    fn loader_len(&mut self, n: u64, dp: u64, micro: u64, drop_last: bool) -> u64 {
        // DistributedSampler (drop_last=False): math.ceil(len(dataset) / num_replicas) per rank.
        let per_rank = (n as f64 / dp as f64).ceil() as u64;
        // DeepSpeedDataLoader.__init__: len = len(sampler) // batch, or math.ceil(len(sampler) / batch).
        let len = if drop_last {
            per_rank / micro
        } else {
            (per_rank as f64 / micro as f64).ceil() as u64
        };
        self.report
            .set(Output::MicroBatchesPerEpoch, Num::Int(len.into()));
        self.report.explain(
            Output::MicroBatchesPerEpoch,
            if drop_last {
                "assuming deepspeed.initialize(training_data=…): DistributedSampler gives ceil(rows / dp) rows per rank; \
                 DeepSpeedDataLoader with dataloader_drop_last: len = that // micro"
            } else {
                "assuming deepspeed.initialize(training_data=…): DistributedSampler gives ceil(rows / dp) rows per rank \
                 (padded by repeating rows); DeepSpeedDataLoader: len = ceil(that / micro)"
            },
            if drop_last {
                format!("ceil({n} / {dp}) = {per_rank}; {per_rank} // {micro} = {len}")
            } else {
                format!("ceil({n} / {dp}) = {per_rank}; ceil({per_rank} / {micro}) = {len}")
            },
        );
        len
    }

    /// `is_gradient_accumulation_boundary`: the optimizer steps of `epochs` epochs of `len` micro
    /// batches, per epoch when GA divides, and the micro batches left over.
    fn optimizer_steps(&mut self, len: u64, epochs: u64, ga: u64) {
        // is_gradient_accumulation_boundary: (micro_steps + 1) % GA == 0, and micro_steps is never
        // reset between epochs, so a remainder carries into the next epoch.
        let Some(total_micro) = len.checked_mul(epochs) else {
            self.report.diag(
                Field::NumEpochs,
                Level::Error,
                "num_epochs × micro batches per epoch is too large to count",
            );
            return;
        };
        let steps = total_micro / ga;
        self.report.set(Output::MaxSteps, Num::Int(steps.into()));
        self.report.explain(
            Output::MaxSteps,
            "an optimizer step at every micro step where (micro_steps + 1) % gradient_accumulation_steps == 0; \
             micro_steps runs on across epochs: steps = (epochs × micro batches per epoch) // GA",
            format!("steps = ({epochs} × {len}) // {ga} = {total_micro} // {ga} = {steps}"),
        );
        if len % ga == 0 {
            let per = len / ga;
            self.report.set(Output::StepsPerEpoch, Num::Int(per.into()));
            self.report.explain(
                Output::StepsPerEpoch,
                "steps per epoch = micro batches per epoch // GA (it divides)",
                format!("steps_per_epoch = {len} // {ga} = {per}"),
            );
        } else if epochs > 1 {
            self.report.diag(
                Field::GradientAccumulationSteps,
                Level::Note,
                format!(
                    "{len} micro batches per epoch is not a multiple of gradient_accumulation_steps {ga}: the leftover \
                     {} micro batches of an epoch accumulate into the next epoch's first step, so epochs take different \
                     numbers of steps.",
                    len % ga
                ),
            );
        }
        if steps == 0 {
            self.report.diag(
                Field::NumSamples,
                Level::Warning,
                format!(
                    "{total_micro} micro batches in all is fewer than gradient_accumulation_steps {ga}: the run ends \
                     without a single optimizer step"
                ),
            );
        } else if total_micro % ga != 0 {
            self.report.diag(
                Field::GradientAccumulationSteps,
                Level::Note,
                format!(
                    "The last {} micro batches accumulate gradients that no optimizer step applies.",
                    total_micro % ga
                ),
            );
        }
    }
}
