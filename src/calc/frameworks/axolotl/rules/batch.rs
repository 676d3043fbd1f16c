//! axolotl's batch stage: the validators and `normalize_config` (micro batch, accumulation,
//! `batch_size`) of the release and of the one it is compared with, and the batch it publishes.

use super::*;

impl Calc<'_> {
    pub(super) fn batch(&mut self, version: Version, cluster: Option<&Cluster>) -> Option<Batch> {
        let i = self.inputs;
        let (mbs_p, ga_p, bs_p) = (
            i.micro_batch_size,
            i.gradient_accumulation_steps,
            i.batch_size,
        );
        if [mbs_p, ga_p, bs_p].contains(&Param::Invalid) {
            return None;
        }
        // The main release reports at the fields; the comparison only leaves notes.
        let main = version == self.main;
        if self.validators_refuse(version, cluster) {
            return None;
        }
        if main {
            self.batch_field_warnings();
        }

        // Schema defaults: micro_batch_size 1, gradient_accumulation_steps 1, batch_size None.
        let mbs = mbs_p.or(1)?;
        let ga_user = ga_p.or(1)?;
        let bs_user = bs_p.given().filter(|&b| b != 0);

        // normalize_config: GA = GA or batch_size // micro_batch_size.
        let ga = self.accumulation(main, mbs, ga_user)?;
        let (local, local_worked) = match bs_user {
            Some(b) => (b, format!("batch_size (as given) = {b}")),
            None => {
                let Some(l) = mbs.checked_mul(ga) else {
                    self.report.diag(
                        Field::GradientAccumulationSteps,
                        Level::Error,
                        "micro_batch_size × gradient_accumulation_steps is too large to count",
                    );
                    return None;
                };
                (l, format!("{mbs} × {ga} = {l}"))
            }
        };
        if mbs == 0 && main {
            self.report.refuse(
                Field::MicroBatchSize,
                Refusal::new(
                    "axolotl stops in calculate_total_num_steps",
                    "ZeroDivisionError: float division by zero",
                )
                .fix("micro_batch_size 0: axolotl accepts it, so the global batch is 0."),
            );
        }
        let cluster = cluster?;
        let (factor, global, physical) = self.scaled(version, main, cluster, local)?;
        self.batch_outputs(version, main, cluster, ga, (&local_worked, factor, global));
        self.tp_cp_note(main, cluster, local, (global, physical));
        if main {
            self.report
                .plan
                .publish_batch(mbs.into(), ga.into(), physical.into());
        }
        Some(Batch { global, physical })
    }

    /// The batch-field validators on the raw config (and 0.20.0+'s): whether one refuses it (a
    /// refusal at the field for the main release, a note for the comparison).
    fn validators_refuse(&mut self, version: Version, cluster: Option<&Cluster>) -> bool {
        let i = self.inputs;
        let (mbs_p, ga_p, bs_p) = (
            i.micro_batch_size,
            i.gradient_accumulation_steps,
            i.batch_size,
        );
        let main = version == self.main;
        let truthy = |p: Param<u64>| p.given().is_some_and(|v| v != 0);
        let (mbs_t, ga_t, bs_t) = (truthy(mbs_p), truthy(ga_p), truthy(bs_p));

        // Validators run on the raw config (pydantic mode="before"), so they see only what was given.
        // check_batch_size_fields: 0.14.0 counts the truthy fields; 0.19.0 refuses only batch_size
        // without either other.
        let too_few = match version {
            Version::V0_14_0 | Version::V0_18_0 => {
                [mbs_t, ga_t, bs_t].iter().filter(|&&t| t).count() < 2
            }
            Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 => bs_t && !(mbs_t || ga_t),
        };
        let warmup_both = i.warmup_steps.given().is_some_and(|w| w != 0)
            && i.warmup_ratio.given().is_some_and(|r| r != 0.0);
        // check_context_parallel_size (after-validator): cp > 1 with packing needs mbs 1.
        let cp_packing = cluster.is_some_and(|c| c.cp > 1)
            && !version.cp_any_kernel()
            && i.sample_packing.given() == Some(true)
            && mbs_p.or(1).is_some_and(|m| m > 1);
        let refusal = if too_few {
            Some((Field::BatchSize, "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set".to_string()))
        } else if ga_t && bs_t {
            Some((
                Field::BatchSize,
                "please set only one of gradient_accumulation_steps or batch_size".to_string(),
            ))
        } else if warmup_both {
            Some((
                Field::WarmupRatio,
                "warmup_steps and warmup_ratio are mutually exclusive".to_string(),
            ))
        } else if cp_packing {
            Some((
                Field::MicroBatchSize,
                "micro_batch_size must be set to 1 when sample_packing is enabled due to a `ring-flash-attn` requirement".to_string(),
            ))
        } else if version.cp_any_kernel() {
            self.validators_020(cluster)
        } else {
            None
        };
        // A validation error: axolotl does not start, so nothing downstream has a value.
        if let Some((field, text)) = refusal {
            let refusal = Refusal::new(
                format!("axolotl {} refuses this config", version.id()),
                text,
            );
            if !main {
                self.report.legacy_notes.push(refusal.message());
            } else {
                self.report.refuse(field, refusal);
            }
            return true;
        }
        false
    }

    /// `normalize_config`'s accumulation: as given, else `batch_size // micro_batch_size`, or
    /// `None` where axolotl stops.
    fn accumulation(&mut self, main: bool, mbs: u64, ga_user: u64) -> Option<u64> {
        let bs_p = self.inputs.batch_size;
        Some(if ga_user != 0 {
            ga_user
        } else {
            match bs_p.given() {
                None => {
                    if main {
                        self.report.refuse(
                            Field::GradientAccumulationSteps,
                            Refusal::new(
                                "axolotl stops in normalize_config with TypeError",
                                "unsupported operand type(s) for //: 'NoneType' and 'int'",
                            )
                            .fix("gradient_accumulation_steps 0: axolotl accepts it, then stops there."),
                        );
                    }
                    return None;
                }
                Some(_) if mbs == 0 => {
                    if main {
                        self.report.refuse(
                            Field::MicroBatchSize,
                            Refusal::new(
                                "axolotl stops in normalize_config with ZeroDivisionError",
                                "integer division or modulo by zero",
                            )
                            .fix("micro_batch_size 0: use at least 1."),
                        );
                    }
                    return None;
                }
                Some(b) => {
                    let ga = b / mbs;
                    if main {
                        self.report.diag(
                            Field::GradientAccumulationSteps,
                            Level::Warning,
                            format!(
                                "gradient_accumulation_steps 0 is read as unset, so axolotl derives it: batch_size // micro_batch_size = {b} // {mbs} = {ga}"
                            ),
                        );
                        if ga == 0 {
                            self.report.diag(
                                Field::GradientAccumulationSteps,
                                Level::Error,
                                format!("the derived gradient_accumulation_steps is 0 (batch_size {b} < micro_batch_size {mbs}): nothing would train"),
                            );
                            return None;
                        }
                    }
                    ga
                }
            }
        })
    }

    /// `normalize_config`'s scaling of the local batch: `(factor, global, physical)`, the batch
    /// axolotl counts and the one a step trains.
    fn scaled(
        &mut self,
        version: Version,
        main: bool,
        cluster: &Cluster,
        local: u64,
    ) -> Option<(u64, u64, u64)> {
        // normalize_config: 0.19.0 `batch_size * (world_size // cp // tp)`, 0.14.0
        // `batch_size * world_size` (both only when world_size != 1).
        let factor = if version.dp_batch() {
            cluster.dp
        } else {
            cluster.world_size
        };
        let (Some(global), Some(physical)) =
            (local.checked_mul(factor), local.checked_mul(cluster.dp))
        else {
            if main {
                self.report.diag(
                    Field::MicroBatchSize,
                    Level::Error,
                    "the global batch is too large to count",
                );
            }
            return None;
        };
        Some((factor, global, physical))
    }

    /// The accumulation and the global batch set and explained (the comparison's at its own output).
    fn batch_outputs(
        &mut self,
        version: Version,
        main: bool,
        cluster: &Cluster,
        ga: u64,
        (local_worked, factor, global): (&str, u64, u64),
    ) {
        let (out_ga, out_global) = if main {
            (
                Some(Output::GradientAccumulationSteps),
                Output::GlobalBatchSize,
            )
        } else {
            (None, Output::LegacyGlobalBatchSize)
        };
        if let Some(o) = out_ga {
            self.report.set(o, Num::Int(ga.into()));
            self.report.explain(
                o,
                "gradient_accumulation_steps = gradient_accumulation_steps or batch_size // micro_batch_size",
                format!("gradient_accumulation_steps = {ga}"),
            );
        }
        self.report.set(out_global, Num::Int(global.into()));
        let (rule, worked) = if cluster.world_size == 1 {
            (
                "batch_size = micro_batch_size × gradient_accumulation_steps (world_size 1: not scaled)".to_string(),
                format!("batch_size = {local_worked}"),
            )
        } else {
            match version {
                Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => (
                    "batch_size = micro_batch_size × gradient_accumulation_steps × dp_world_size".to_string(),
                    format!("batch_size = {local_worked} × {factor} = {global}"),
                ),
                Version::V0_14_0 => (
                    "0.14.0: batch_size = micro_batch_size × gradient_accumulation_steps × world_size".to_string(),
                    format!("batch_size = {local_worked} × {factor} = {global}"),
                ),
            }
        };
        self.report.explain(out_global, rule, worked);
    }

    /// 0.14.0's batch_size counts each sample tp × cp times: the note.
    fn tp_cp_note(
        &mut self,
        main: bool,
        cluster: &Cluster,
        local: u64,
        (global, physical): (u64, u64),
    ) {
        let model = cluster.tp.saturating_mul(cluster.cp);
        if main && global != physical && model > 1 && cluster.world_size % model == 0 {
            let at = if cluster.tp > 1 {
                Field::TensorParallelSize
            } else {
                Field::ContextParallelSize
            };
            self.report.diag(
                at,
                Level::Note,
                format!(
                    "axolotl 0.14.0 scales batch_size by the whole world_size {}, so the batch_size {global} it logs counts \
                     each sample tensor_parallel_size × context_parallel_size = {model} times: one optimizer step trains \
                     {physical} samples ({local} per data-parallel rank × dp_world_size {}). It multiplies the step count \
                     by {model} to make up for it.",
                    cluster.world_size, cluster.dp
                ),
            );
        }
    }

    /// What 0.19.0 accepts but will not do what the user means.
    pub(super) fn batch_field_warnings(&mut self) {
        let i = self.inputs;
        if self.main != Version::V0_21_0
            && (self.texts.fsdp_list() || self.texts.sharding_strategy.is_some())
        {
            let v = self.main.id();
            self.report.diag(
                if self.texts.fsdp_list() { Field::Fsdp } else { Field::FsdpShardingStrategy },
                Level::Note,
                format!(
                    "dpcalc has run only axolotl 0.21.0 on FSDP1's keys (it refuses them); under {v} the top-level fsdp \
                     list and fsdp_config.sharding_strategy are not modelled: FSDP is read from the other fsdp_config keys."
                ),
            );
        }
        if let Param::Given(0) = i.batch_size {
            self.report.diag(
                Field::BatchSize,
                Level::Warning,
                "batch_size 0 is read by axolotl as unset",
            );
        }
        let (Some(mbs), Some(bs)) = (i.micro_batch_size.given(), i.batch_size.given()) else {
            return;
        };
        if mbs == 0 || bs == 0 || i.gradient_accumulation_steps.is_given() {
            return;
        }
        // validation.py passes (mbs, batch_size); model_dump then fills GA's default 1, and
        // normalize_config's `GA or batch_size // mbs` keeps the 1.
        self.report.diag(
            Field::BatchSize,
            Level::Warning,
            format!(
                "axolotl accepts batch_size with micro_batch_size but keeps gradient_accumulation_steps at 1: each optimizer \
                 step trains micro_batch_size {mbs} per GPU, while the step count is computed as if it were batch_size {bs} \
                 per GPU, so the run covers only {mbs}/{bs} of the data per epoch. For {bs} samples per GPU set \
                 gradient_accumulation_steps: {} instead of batch_size.",
                (bs / mbs).max(1)
            ),
        );
    }
}
