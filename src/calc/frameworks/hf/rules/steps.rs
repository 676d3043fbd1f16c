//! The Trainer's steps stage: `set_initial_training_values` (the per-rank dataloader length,
//! batch_rebalance's sampler, steps per epoch, `max_steps`, the empty-dataloader error).

use super::*;

impl Calc<'_> {
    // ---- set_initial_training_values ---------------------------------------------------------

    /// The per-rank dataloader length (accelerate `BatchSamplerShard.__len__`), SP adapter included.
    pub(super) fn dataloader_len(&mut self, d: Dims, n: u64, b: u64, drop_last: bool) -> u128 {
        let torch_len = if drop_last { n / b } else { n.div_ceil(b) };
        // DeepSpeed (SP) path: process_index //= tp, num_processes //= tp; mesh path: num_processes
        // = dp_shard × dp_replicate = world / (tp × cp).
        let p = if d.sp > 1 {
            d.ws / d.tp
        } else {
            d.ws / d.tp / d.cp
        };
        let len = if torch_len % p == 0 || drop_last {
            torch_len / p
        } else {
            torch_len / p + 1
        };
        let how = if drop_last {
            format!("{n} // {b} = {torch_len}")
        } else {
            format!("ceil({n} / {b}) = {torch_len}")
        };
        let shard = if torch_len % p == 0 {
            format!("{torch_len} / {p} = {len}")
        } else if drop_last {
            format!("{torch_len} // {p} = {len} (drop_last)")
        } else {
            format!("{torch_len} // {p} + 1 = {len} (even_batches pads the shard)")
        };
        let mut out = u128::from(len);
        let sp_part = if self.version == Version::V5 && d.sp > 1 {
            out *= u128::from(d.sp);
            format!("; × sp_size {} (SP dataloader adapter) = {out}", d.sp)
        } else {
            String::new()
        };
        self.report.explain_with(
            Output::StepsPerEpoch,
            "per-rank batches = shard of the torch DataLoader over the data-parallel processes (accelerate BatchSamplerShard)",
            || format!("torch batches = {how}; per rank = {shard}{sp_part}"),
);
        out
    }

    /// An empty training set: torch's `RandomSampler` refuses it; `LengthGroupedSampler` and
    /// batch_rebalance's length inference read `train_dataset[0]` first.
    pub(super) fn empty_dataset_refusal(&mut self) {
        let refusal = match self.sampling {
            Sampling::Random => Refusal::new(
                "torch's RandomSampler raises ValueError (even with max_steps)",
                "num_samples should be a positive integer value, but got num_samples=0",
            )
            .fix("The training set needs at least one row."),
            _ => Refusal::new(
                format!(
                    "the Trainer infers the lengths for {} from train_dataset[0], which an empty dataset lacks",
                    if self.sampling == Sampling::BatchRebalance {
                        "batch_rebalance"
                    } else {
                        "group_by_length"
                    }
                ),
                "IndexError",
            )
            .fix(
                "(its text depends on the dataset type, e.g. \u{201c}list index out of range\u{201d}). \
                 The training set needs at least one row.",
            ),
        };
        self.report.refuse(Field::NumSamples, refusal);
    }

    /// batch_rebalance: `BatchRebalanceSampler.__len__` = global batches × GA on every rank
    /// (the Trainer sets the prepared shard to one process), times sp_size with SP's adapter.
    pub(super) fn rebalance_len(
        &mut self,
        d: Dims,
        n: u64,
        b: u64,
        ga: u64,
        drop_last: bool,
    ) -> u128 {
        let e = u128::from(b) * u128::from(ga) * u128::from(d.ws);
        let n128 = u128::from(n);
        let tail = n128 % e != 0 && !drop_last;
        let g = n128 / e + u128::from(tail);
        let mut out = g * u128::from(ga);
        let how = if n128 % e == 0 {
            format!("{n} / {e} = {g}")
        } else if drop_last {
            format!("{n} // {e} = {g} (drop_last drops the tail)")
        } else {
            format!("{n} // {e} + 1 = {g} (the tail is a batch, padded with rows from the start)")
        };
        let sp_part = if d.sp > 1 {
            out *= u128::from(d.sp);
            format!("; × sp_size {} (SP dataloader adapter) = {out}", d.sp)
        } else {
            String::new()
        };
        self.report.explain_with(
            Output::StepsPerEpoch,
            "batch_rebalance: global batches = N // effective_batch_size (+1 for the tail unless drop_last), \
             effective_batch_size = per_device × GA × world_size; each rank's dataloader = global batches × GA \
             (the Trainer switches accelerate's shard off)",
            || format!(
                "effective_batch_size = {b} × {ga} × {} = {e}; global batches = {how}; per rank = {g} × {ga} = {}{sp_part}",
                d.ws,
                g * u128::from(ga)
            ),
);
        out
    }

    pub(super) fn steps(&mut self, dims: Option<Dims>) -> Option<Num> {
        let nupe = self.update_steps_per_epoch(dims)?;
        // with an empty dataloader the Trainer sets num_update_steps_per_epoch = max_steps
        if let Some((s, _)) = nupe {
            if let Some(n) = int(s) {
                self.report.set(Output::StepsPerEpoch, n);
            }
        }
        let m = self.max_steps(nupe)?;
        self.report.set(Output::MaxSteps, m);
        Some(m)
    }

    /// `num_update_steps_per_epoch` and whether the dataloader is empty (`None` inside: not
    /// known; `None`: the Trainer stops).
    fn update_steps_per_epoch(&mut self, dims: Option<Dims>) -> Option<Option<(u128, bool)>> {
        let max_steps = self.inputs.max_steps;
        let b = self
            .inputs
            .per_device
            .or(DEFAULT_PER_DEVICE)
            .filter(|&b| b > 0);
        let ga = self.inputs.ga.or(1).filter(|&g| g > 0);
        let drop_last = self.inputs.drop_last.or(false);
        let nupe = match (dims, self.inputs.num_samples, b, ga, drop_last) {
            (Some(d), Param::Given(n), Some(b), Some(ga), Some(dl)) => {
                if n == 0 && self.sampling != Sampling::Sequential {
                    self.empty_dataset_refusal();
                    return None;
                }
                let rebalance = self.sampling == Sampling::BatchRebalance;
                let len = if rebalance {
                    self.rebalance_len(d, n, b, ga, dl)
                } else {
                    self.dataloader_len(d, n, b, dl)
                };
                if len == 0 {
                    Some(self.empty_dataloader(d, n, (b, ga), dl)?)
                } else {
                    Some((self.epoch_steps(len, ga), false))
                }
            }
            (_, Param::Absent, ..) => {
                if max_steps.given().is_none() {
                    self.report.diag(
                        Field::NumSamples,
                        Level::Hint,
                        "Enter the number of training rows (or max_steps) to get the step count",
                    );
                }
                None
            }
            _ => None,
        };
        Some(nupe)
    }

    /// An empty per-rank dataloader: the Trainer runs `max_steps` over it, or raises without one.
    fn empty_dataloader(
        &mut self,
        d: Dims,
        n: u64,
        (b, ga): (u64, u64),
        dl: bool,
    ) -> Option<(u128, bool)> {
        let max_steps = self.inputs.max_steps;
        let rebalance = self.sampling == Sampling::BatchRebalance;
        if let Param::Given(m) = max_steps.filter_pos() {
            self.report.diag(
                Field::NumSamples,
                Level::Warning,
                "the per-rank dataloader is empty; the Trainer runs max_steps over it and trains on nothing",
            );
            Some((m as u128, true))
        } else {
            let why = if rebalance && dl && n > 0 {
                format!(
                    "with batch_rebalance and dataloader_drop_last, {n} rows make no full global batch of \
                     {b} × {ga} × world_size {} = {}",
                    d.ws,
                    u128::from(b) * u128::from(ga) * u128::from(d.ws)
                )
            } else if dl && n > 0 {
                format!(
                    "with dataloader_drop_last, {n} rows make no full batch of {b}, so the dataloader is empty"
                )
            } else {
                "the dataset is empty".to_string()
            };
            self.report.refuse(
                Field::NumSamples,
                Refusal::new(
                    "The Trainer raises",
                    "args.max_steps must be set to a positive value if dataloader does not have a length, was -1",
                )
                .fix(if rebalance {
                    format!(
                        "({why}). Fix: dataloader_drop_last false, per-device × GA × world_size of at most {n}, \
                         or max_steps."
                    )
                } else {
                    format!(
                        "({why}). Fix: dataloader_drop_last false, a per-device batch of at most {n}, or max_steps."
                    )
                }),
            );
            None
        }
    }

    /// `num_update_steps_per_epoch` of `len` batches per rank.
    fn epoch_steps(&mut self, len: u128, ga: u64) -> u128 {
        let ga128 = u128::from(ga);
        let steps = if self.version == Version::V451 {
            (len / ga128).max(1)
        } else {
            (len / ga128 + u128::from(len % ga128 > 0)).max(1)
        };
        let rule = if self.version == Version::V451 {
            format!("max({len} // {ga}, 1)")
        } else {
            format!("max({len} // {ga} + int({len} % {ga} > 0), 1)")
        };
        self.report.explain_with(
            Output::StepsPerEpoch,
            if self.version == Version::V451 {
                "num_update_steps_per_epoch = max(batches // GA, 1) (4.51 rounds down)"
            } else {
                "num_update_steps_per_epoch = max(ceil(batches / GA), 1)"
            },
            || format!("num_update_steps_per_epoch = {rule} = {steps}"),
        );
        steps
    }

    /// `max_steps`: as given, or `ceil(num_train_epochs × num_update_steps_per_epoch)`.
    fn max_steps(&mut self, nupe: Option<(u128, bool)>) -> Option<Num> {
        let epochs = self.inputs.epochs.or(DEFAULT_EPOCHS);
        let max_steps = self.inputs.max_steps;
        let m = match max_steps {
            Param::Given(m) => {
                if m == 0 {
                    self.report.diag(
                        Field::MaxSteps,
                        Level::Warning,
                        "max_steps 0 is not \u{201c}unset\u{201d} (that is -1): the run takes 0 optimizer steps",
                    );
                } else if epochs.is_some() && self.inputs.epochs.is_given() {
                    self.report.diag(
                        Field::MaxSteps,
                        Level::Note,
                        "The Trainer logs \u{201c}max_steps is given, it will override any value given in num_train_epochs\u{201d}",
                    );
                }
                self.report.explain_with(
                    Output::MaxSteps,
                    "max_steps (as given; it overrides num_train_epochs)",
                    || format!("max_steps = {m}"),
                );
                Num::Int(m.into())
            }
            Param::Invalid => return None,
            Param::Absent => {
                let (steps, _) = nupe?;
                let e = epochs?;
                let product = e * steps as f64;
                let Ok(m) = num::ceil(product) else {
                    self.report.diag(
                        Field::NumTrainEpochs,
                        Level::Error,
                        "num_train_epochs × steps per epoch is too large to count",
                    );
                    return None;
                };
                self.report.explain_with(
                    Output::MaxSteps,
                    "max_steps = ceil(num_train_epochs × num_update_steps_per_epoch)",
                    || {
                        format!(
                            "max_steps = ceil({} × {steps}) = {}",
                            float_repr(e),
                            m.raw()
                        )
                    },
                );
                m
            }
        };
        Some(m)
    }
}
