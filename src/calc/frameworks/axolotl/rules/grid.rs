//! axolotl's grid stage: the world size, the parallel sizes and accelerate's checks
//! (`parallel_checks`), 0.20.0+'s validators (expert parallelism, the dp axes, DeepSpeed) and the
//! launch checks (every release: the same `_get_parallel_config_kwargs` and patched
//! `_validate_accelerator` from 0.14.0 on).

use super::*;

/// Who raises in `utils/distributed.py::_get_parallel_config_kwargs`.
const KWARGS_BY: &str = "axolotl stops in utils/distributed.py::_get_parallel_config_kwargs";

impl Calc<'_> {
    pub(super) fn cluster(&mut self) -> Option<Cluster> {
        let world_size = self.world_size()?;
        let tp = self.parallel_size(Field::TensorParallelSize, self.inputs.tensor_parallel_size)?;
        let cp = self.parallel_size(
            Field::ContextParallelSize,
            self.inputs.context_parallel_size,
        )?;
        let dp = if world_size == 1 {
            self.report.explain(
                Output::DpWorldSize,
                "world_size 1: normalize_config skips the data-parallel scaling",
                "dp_world_size = 1",
            );
            1
        } else {
            let dp = world_size / cp / tp;
            let rule = match self.main {
                Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => {
                    "dp_world_size = world_size // context_parallel_size // tensor_parallel_size"
                }
                Version::V0_14_0 => {
                    "dp_world_size = world_size // context_parallel_size // tensor_parallel_size (the ranks accelerate \
                     shards data over; 0.14.0's normalize_config scales batch_size by the whole world_size instead)"
                }
            };
            self.report.explain(
                Output::DpWorldSize,
                rule,
                format!("dp_world_size = {world_size} // {cp} // {tp} = {dp}"),
            );
            dp
        };
        self.report.set(Output::DpWorldSize, Num::Int(dp.into()));
        // Expert parallelism borrows ranks inside the data-parallel ranks (0.21.0's mesh puts
        // `ep` among the data axes): it does not divide the batch.
        let ep = self
            .ep_size()
            .filter(|&e| e > 1 && dp % e == 0)
            .unwrap_or(1);
        self.report.publish_grid(crate::calc::Grid {
            tp,
            cp,
            dp,
            ep,
            ..crate::calc::Grid::data_parallel(world_size)
        });
        Some(Cluster {
            world_size,
            tp,
            cp,
            dp,
        })
    }

    pub(super) fn world_size(&mut self) -> Option<u64> {
        let i = self.inputs;
        i.cluster.world_size(self.report)
    }

    /// tp or cp after axolotl's after-validators, which turn a missing or 0 size into 1.
    pub(super) fn parallel_size(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p {
            Param::Given(0) => {
                self.report.diag(
                    field,
                    Level::Warning,
                    format!(
                        "{} 0 is read by axolotl as unset, that is 1 (no parallelism)",
                        field.key()
                    ),
                );
                Some(1)
            }
            p => p.or(1),
        }
    }

    /// Launch-time refusals and requirements that depend on the cluster shape.
    pub(super) fn parallel_checks(&mut self, cluster: Option<&Cluster>) {
        let Some(&Cluster {
            world_size: ws,
            tp,
            cp,
            ..
        }) = cluster
        else {
            return;
        };
        if self.main.cp_any_kernel() {
            if cp > 1 && self.texts.attn_implementation.as_deref() != Some("eager") {
                self.report.diag(
                    Field::ContextParallelSize,
                    Level::Note,
                    format!(
                        "axolotl {} wraps any kernel-backed attention (sdpa, flash, flex) for context parallelism: only \
                         attn_implementation: eager is refused, and sample_packing no longer needs micro_batch_size 1 \
                         (0.19.0 required attn_implementation: flash_attention_2).",
                        self.main.id()
                    ),
                );
            }
            self.launch_checks(ws, tp, cp);
            return;
        }
        if cp > 1 {
            self.cp_attention_note();
        }
        let Some(model) = tp.checked_mul(cp) else {
            self.report.diag(
                Field::TensorParallelSize,
                Level::Error,
                "tensor_parallel_size × context_parallel_size is too large to count",
            );
            return;
        };
        if model == 1 || ws % model == 0 {
            // 0.14.0 – 0.19.0 build the same ParallelismConfig (utils/distributed.py
            // build_parallelism_config and _get_parallel_config_kwargs, the same code at v0.14.0,
            // v0.18.0 and 0.21.0) and run the same patched _validate_accelerator: a dp_shard_size
            // larger than the world is refused there too
            self.launch_checks(ws, tp, cp);
            return;
        }
        self.tp_cp_indivisible(ws, tp, cp, model);
    }

    /// Before 0.20.0: context parallelism's attention requirement (dpcalc does not check the
    /// attention keys), a note.
    fn cp_attention_note(&mut self) {
        // schemas/validation.py check_context_parallel_size (after-validator).
        let text = match self.main {
            Version::V0_21_0 | Version::V0_20_0 => unreachable!("handled above"),
            Version::V0_18_0 => {
                "context_parallel_size > 1 requires flash attention; otherwise axolotl 0.18.0 refuses the config with \
                 \u{201c}context_parallel_size > 1 requires flash attention (attn_implementation: flash_attention_2 or \
                 flash_attention_3).\u{201d} (0.17.0 says the same; 0.15.0 and 0.16.x say \u{201c}flash_attention: true must \
                 be set with context_parallel_size > 1\u{201d}.) With sample_packing, micro_batch_size must be 1."
            }
            Version::V0_19_0 => {
                "context_parallel_size > 1 requires attn_implementation: flash_attention_2. \
                 Ring attention only supports the flash attention 2 backend. (axolotl 0.19.0; \
                 0.14.0 asked for flash_attention: true.) With sample_packing, micro_batch_size must be 1."
            }
            Version::V0_14_0 => {
                "context_parallel_size > 1 requires flash_attention: true; without it axolotl 0.14.0 refuses the \
                 config with \u{201c}flash_attention: true must be set with context_parallel_size > 1\u{201d}. \
                 (0.19.0 asks for attn_implementation: flash_attention_2 instead.) With sample_packing, \
                 micro_batch_size must be 1."
            }
        };
        self.report
            .diag(Field::ContextParallelSize, Level::Note, text);
    }

    /// tp × cp does not divide the world: accelerate refuses the launch (or axolotl stops first).
    fn tp_cp_indivisible(&mut self, ws: u64, tp: u64, cp: u64, model: u64) {
        // accelerate's ParallelismConfig gets tp, cp and, when something is left, dp_shard:
        // axolotl utils/distributed.py::_get_parallel_config_kwargs (floor divisions).
        let rest = ws / tp / cp;
        let total = model.saturating_mul(rest.max(1));
        let launch = Refusal::new(
            "accelerate refuses the launch",
            format!(
                "ParallelismConfig total_size ({total}) does not match num_processes ({ws}). \
                 Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size."
            ),
        );
        let fix = cluster::nearest_valid(ws, model, "tensor_parallel_size × context_parallel_size");
        let refusal = if ws == 1 {
            launch.fix(format!(
                "world_size 1 with tensor_parallel_size × context_parallel_size = {model}: axolotl skips the batch \
                 scaling, but builds a parallelism config for tp/cp > 1. {fix}"
            ))
        } else if ws < model {
            match self.main {
                Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => Refusal::new(
                    "axolotl stops in calculate_total_num_steps",
                    "ZeroDivisionError: float division by zero",
                )
                .fix(format!(
                    "world_size {ws} is smaller than tensor_parallel_size × context_parallel_size = {tp} × {cp} = {model}: \
                     dp_world_size = {ws} // {cp} // {tp} = 0, so the global batch is 0. {fix}"
                )),
                // 0.14.0 scales by the whole world_size, so nothing is 0 and it logs the values shown.
                Version::V0_14_0 => launch.fix(format!(
                    "world_size {ws} is smaller than tensor_parallel_size × context_parallel_size = {tp} × {cp} = {model}. \
                     axolotl 0.14.0 scales batch_size by the whole world_size and logs the values shown without \
                     complaint, but no run starts. {fix}"
                )),
            }
        } else {
            let floors = match self.main {
                Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => {
                    format!(
                        "axolotl floors silently (dp_world_size = {ws} // {cp} // {tp} = {rest})"
                    )
                }
                Version::V0_14_0 => {
                    "axolotl 0.14.0 scales batch_size by the whole world_size without complaint"
                        .to_string()
                }
            };
            launch.fix(format!(
                "world_size {ws} is not divisible by tensor_parallel_size × context_parallel_size = {tp} × {cp} = {model}. \
                 {floors} and logs the values shown, but no run starts. {fix}"
            ))
        };
        self.report.refuse(Field::WorldSize, refusal);
        let at = if tp > 1 {
            Field::TensorParallelSize
        } else {
            Field::ContextParallelSize
        };
        self.report.diag(
            at,
            Level::Error,
            format!("tensor_parallel_size × context_parallel_size = {model} must divide world_size {ws} (see world_size)"),
        );
    }

    // ---- 0.20.0+: expert parallelism, dp axes, DeepSpeed ----------------------------------

    /// Whether the expert-parallel plugin runs: built in from 0.21.0; 0.20.0 only with it listed
    /// under `plugins` (without it axolotl drops `expert_parallel_size` silently).
    pub(super) fn ep_active(&self) -> bool {
        self.main.ep_builtin() || (self.main == Version::V0_20_0 && self.texts.ep_plugin())
    }

    /// `expert_parallel_size` as the plugin reads it (`None` when it does not run or is unreadable).
    pub(super) fn ep_size(&self) -> Option<u64> {
        if !self.ep_active() {
            return None;
        }
        match self.inputs.expert_parallel_size {
            Param::Invalid => None,
            p => p.or(1),
        }
    }

    /// `bool(cfg.fsdp or cfg.fsdp_config)`: an `fsdp_config` block is given. (The top-level
    /// `fsdp` list is refused by 0.21.0, the only release dpcalc ran with it.)
    pub(super) fn is_fsdp(&self) -> bool {
        self.inputs.fsdp_config_fsdp_version.is_given()
            || self.inputs.fsdp_reshard_after_forward.is_given()
            || self.inputs.fsdp_offload_params.is_given()
            || self.texts.sharding_strategy.is_some()
            || self.texts.state_dict_type.is_some()
            || self.texts.final_state_dict_type.is_some()
    }

    /// 0.20.0+'s validators that stop `load_cfg` (so nothing downstream has a value).
    pub(super) fn validators_020(&mut self, cluster: Option<&Cluster>) -> Option<(Field, String)> {
        if let Some(refused) = self.attention_fsdp_validators(cluster) {
            return Some(refused);
        }
        self.ep_validators(cluster)
    }

    /// 0.20.0+'s `check_context_parallel_size` (only eager is refused) and `check_fsdp_version`.
    fn attention_fsdp_validators(&mut self, cluster: Option<&Cluster>) -> Option<(Field, String)> {
        let i = self.inputs;
        // check_context_parallel_size: only eager is refused.
        if cluster.is_some_and(|c| c.cp > 1)
            && self.texts.attn_implementation.as_deref() == Some("eager")
        {
            return Some((
                Field::AttnImplementation,
                "context parallelism wraps a kernel-backed attention implementation (sdpa/flash/flex); \
                 `attn_implementation: eager` is not supported."
                    .to_string(),
            ));
        }
        // check_fsdp_version (mode="before"): FSDP1 is gone. 0.21.0 (run: the top-level list is
        // refused first, then a version other than 2, then an FSDP1-only fsdp_config key).
        let v021 = self.main == Version::V0_21_0;
        if v021 && self.texts.fsdp_list() {
            return Some((
                Field::Fsdp,
                "The top-level `fsdp` list is no longer supported, it configured FSDP1 sharding strategies. Use \
                 `fsdp_config` instead, see docs/multi-gpu.qmd#sec-migrate-fsdp1-fsdp2 for the migration guide."
                    .to_string(),
            ));
        }
        for (field, p) in [
            (Field::FsdpVersion, i.fsdp_version),
            (Field::FsdpConfigFsdpVersion, i.fsdp_config_fsdp_version),
        ] {
            if let Some(v) = p.given().filter(|&v| v != 2) {
                return Some((
                    field,
                    format!(
                        "fsdp_version: {v} is no longer supported, FSDP1 has been removed from Axolotl. Use fsdp_version: 2 \
                         and see docs/multi-gpu.qmd#sec-migrate-fsdp1-fsdp2 for the migration guide."
                    ),
                ));
            }
        }
        if v021 && self.texts.sharding_strategy.is_some() {
            return Some((
                Field::FsdpShardingStrategy,
                "fsdp_config.sharding_strategy is an FSDP1-only option and FSDP1 has been removed from Axolotl. Use \
                 `reshard_after_forward` instead. See docs/multi-gpu.qmd#sec-migrate-fsdp1-fsdp2 for the migration guide."
                    .to_string(),
            ));
        }
        None
    }

    /// The expert-parallel plugin's validators (`validate_expert_parallel_topology`, the state
    /// dict types, 0.20.0's shard axis).
    fn ep_validators(&mut self, cluster: Option<&Cluster>) -> Option<(Field, String)> {
        let i = self.inputs;
        if !self.ep_active() {
            return None;
        }
        let ep_field = Field::ExpertParallelSize;
        let ep = match i.expert_parallel_size {
            Param::Given(0) => {
                return Some((
                    ep_field,
                    "expert_parallel_size must be >= 1 (got 0). Use 1 to disable EP.".to_string(),
                ))
            }
            p => p.or(1)?,
        };
        if ep <= 1 {
            return None;
        }
        let tp = cluster.map_or(1, |c| c.tp);
        let cp = cluster.map_or(1, |c| c.cp);
        if tp > 1 {
            return Some((
                Field::TensorParallelSize,
                "tensor_parallel_size > 1 cannot be combined with expert_parallel_size > 1; shard the experts with \
                 expert_parallel_size and the rest with dp_shard_size"
                    .to_string(),
            ));
        }
        // integrations/expert_parallel/args.py::validate_expert_parallel_topology; an fsdp_config
        // block without a version means 2 (check_fsdp_version_in_fsdp_config).
        let fsdp = self.is_fsdp();
        let version = i
            .fsdp_version
            .given()
            .or(i.fsdp_config_fsdp_version.given())
            .or(fsdp.then_some(2));
        if !fsdp || version != Some(2) {
            return Some((
                ep_field,
                format!(
                    "expert_parallel_size ({ep}) > 1 requires FSDP2: set fsdp_version: 2 and an fsdp_config block. \
                     Under DDP the expert LoRA sync, gradient clipping, gradient-accumulation scaling and checkpoint \
                     save are all wrong for sharded experts."
                ),
            ));
        }
        if let Some(refused) = self.ep_state_dicts(ep) {
            return Some(refused);
        }
        // 0.20.0 only: a (dp_replicate, ep) mesh without a shard axis.
        if self.main == Version::V0_20_0 {
            if let Some(r) = i.dp_replicate_size.given().filter(|&r| r > 1) {
                if !(i.dp_shard_size.given().is_some_and(|s| s > 1) || cp > 1) {
                    return Some((
                        Field::DpReplicateSize,
                        format!(
                            "expert_parallel_size ({ep}) with dp_replicate_size ({r}) needs a shard axis inside each \
                             replica: set dp_shard_size > 1 or context_parallel_size > 1. A (dp_replicate, ep) mesh \
                             gives the experts no group to reduce over, so replicas would drift apart."
                        ),
                    ));
                }
            }
        }
        None
    }

    /// With expert parallelism the checkpoints need `FULL_STATE_DICT`.
    fn ep_state_dicts(&mut self, ep: u64) -> Option<(Field, String)> {
        for (field, key, value) in [
            (
                Field::FsdpStateDictType,
                "state_dict_type",
                &self.texts.state_dict_type,
            ),
            (
                Field::FsdpFinalStateDictType,
                "final_state_dict_type",
                &self.texts.final_state_dict_type,
            ),
        ] {
            match value.as_deref() {
                None if key == "state_dict_type" => {
                    return Some((
                        field,
                        format!(
                            "expert_parallel_size ({ep}) > 1 requires fsdp_config.state_dict_type: FULL_STATE_DICT. \
                             accelerate defaults FSDP2 to SHARDED_STATE_DICT, whose checkpoints keep only EP group 0's \
                             experts (every group's expert shard has the same name, shape and offset, so DCP \
                             deduplicates them)."
                        ),
                    ))
                }
                Some(v) if v != "FULL_STATE_DICT" => {
                    return Some((
                        field,
                        format!(
                            "expert_parallel_size ({ep}) > 1 requires fsdp_config.{key}: FULL_STATE_DICT, got {}. {v} \
                             checkpoints keep only EP group 0's experts; the full state dict gathers every EP group's \
                             experts before rank 0 writes.",
                            py_repr(v)
                        ),
                    ))
                }
                _ => {}
            }
        }
        None
    }

    /// At launch (every release): `utils/distributed.py::_get_parallel_config_kwargs`, accelerate's
    /// `ParallelismConfig.__post_init__` (under axolotl's patch), the expert-parallel plugin's
    /// `_validate_mesh_axes`, then `ParallelismConfig._validate_accelerator`.
    pub(super) fn launch_checks(&mut self, ws: u64, tp: u64, cp: u64) {
        let Some(ep) = self.launch_ep(ws, tp, cp) else {
            return;
        };
        let Some((k_rep, k_shard, k_cp, k_sp)) = self.parallel_kwargs(ws, tp, cp, ep) else {
            return;
        };
        let built = tp > 1 || k_cp > 1 || k_sp > 1 || k_rep.is_some() || k_shard.is_some();
        let (rep, shard) = (k_rep.unwrap_or(1), k_shard.unwrap_or(1));
        if self.pure_dp_refused(built, (tp, k_cp, rep, shard), ep)
            || !self.mesh_axes_match(ws, tp, cp, ep)
        {
            return;
        }
        self.validate_accelerator(ws, (tp, cp, ep), built, (rep, shard, k_cp, k_sp));
    }

    /// Before the mesh: 0.20.0's dropped expert_parallel_size, the expert-parallel size, and
    /// `calculate_total_num_steps`' batch of 0. The expert-parallel size, or `None`: stop.
    fn launch_ep(&mut self, ws: u64, tp: u64, cp: u64) -> Option<u64> {
        let i = self.inputs;
        if self.main == Version::V0_20_0
            && !self.texts.ep_plugin()
            && i.expert_parallel_size.given().is_some_and(|e| e != 1)
        {
            self.report.diag(
                Field::ExpertParallelSize,
                Level::Note,
                format!(
                    "axolotl 0.20.0 drops expert_parallel_size silently unless plugins lists {EP_PLUGIN}: no expert \
                     parallelism runs and none of its checks apply (0.21.0 has the plugin built in)."
                ),
            );
        }
        if [i.dp_shard_size, i.dp_replicate_size].contains(&Param::Invalid) {
            return None;
        }
        let ep = if self.ep_active() { self.ep_size()? } else { 1 };
        if ep > 1 {
            self.report.diag(
                Field::ExpertParallelSize,
                Level::Note,
                format!(
                    "Expert parallelism borrows its ranks inside the data-parallel ranks: the {ep} ranks of an expert \
                     group each read different data (axolotl counts ep among the data axes), so expert_parallel_size \
                     does not divide the batch (batch_size × world_size // context_parallel_size // tensor_parallel_size)."
                ),
            );
        }
        // calculate_total_num_steps divides by a batch of 0 first.
        if ws != 1 && ws / cp / tp == 0 {
            let fix = cluster::nearest_valid(
                ws,
                tp.saturating_mul(cp),
                "tensor_parallel_size × context_parallel_size",
            );
            self.report.refuse(
                Field::WorldSize,
                Refusal::new(
                    "axolotl stops in calculate_total_num_steps",
                    "ZeroDivisionError: float division by zero",
                )
                .fix(format!(
                    "world_size {ws} is smaller than tensor_parallel_size × context_parallel_size = {tp} × {cp}: \
                     dp_world_size = {ws} // {cp} // {tp} = 0, so the global batch is 0. {fix}"
                )),
            );
            return None;
        }
        Some(ep)
    }

    /// `_get_parallel_config_kwargs`: the ParallelismConfig kwargs `(dp_replicate, dp_shard, cp,
    /// sp)` axolotl builds (`None`: not passed), or `None` when it raises.
    #[allow(clippy::type_complexity)]
    fn parallel_kwargs(
        &mut self,
        ws: u64,
        tp: u64,
        cp: u64,
        ep: u64,
    ) -> Option<(Option<u64>, Option<u64>, u64, u64)> {
        let i = self.inputs;
        let dp_shard = i.dp_shard_size.given();
        let dp_rep = i.dp_replicate_size.given();
        let is_fsdp = self.is_fsdp();
        let ds = self.main.ds_ulysses() && self.texts.deepspeed.is_some();
        let kwargs_by = KWARGS_BY;
        let mut rem = ws;
        if ep > 1 {
            if rem % ep != 0 {
                self.report.refuse(
                    Field::ExpertParallelSize,
                    Refusal::new(
                        kwargs_by,
                        format!("ValueError: expert_parallel_size ({ep}) must divide world_size ({ws})."),
                    )
                    .fix(format!("use an expert_parallel_size that divides world_size {ws}.")),
                );
                return None;
            }
            rem /= ep;
        }
        // The ParallelismConfig kwargs: (dp_replicate, dp_shard, tp, cp, sp); empty → none built.
        let (mut k_cp, mut k_sp) = (1, 1);
        if tp > 1 {
            rem /= tp;
        }
        if cp > 1 {
            if ds {
                k_sp = cp;
            } else {
                k_cp = cp;
            }
            rem /= cp;
        }
        let (k_rep, k_shard) = if ds && k_sp > 1 && rem > 1 {
            (
                Some(self.ulysses_replicas(ws, (tp, cp, ep), rem, dp_rep)?),
                None,
            )
        } else {
            self.data_axes(ws, rem, (dp_shard, dp_rep), is_fsdp)?
        };
        Some((k_rep, k_shard, k_cp, k_sp))
    }

    /// 0.21.0 with DeepSpeed and context parallelism: Ulysses, replicated over the `rem` ranks left.
    fn ulysses_replicas(
        &mut self,
        ws: u64,
        (tp, cp, ep): (u64, u64, u64),
        rem: u64,
        dp_rep: Option<u64>,
    ) -> Option<u64> {
        let v = self.main.id();
        let kwargs_by = KWARGS_BY;
        if let Some(r) = dp_rep.filter(|&r| r > 1 && r != rem) {
            self.report.refuse(
                Field::DpReplicateSize,
                Refusal::new(
                    kwargs_by,
                    format!(
                        "ValueError: dp_replicate_size ({r}) must equal world_size / context_parallel_size ({rem}) under DeepSpeed."
                    ),
                )
                .fix(format!(
                    "the quotient axolotl means is world_size ÷ (expert_parallel_size × tensor_parallel_size × \
                     context_parallel_size) = {ws} ÷ ({ep} × {tp} × {cp}) = {rem}, not world_size ÷ \
                     context_parallel_size as it says: set dp_replicate_size {rem} or leave it unset."
                )),
            );
            return None;
        }
        self.report.diag(
            Field::Deepspeed,
            Level::Note,
            format!(
                "axolotl {v} with DeepSpeed maps context_parallel_size {cp} to DeepSpeed Ulysses (sp_size {cp}, \
                 sp_backend deepspeed) and replicates over the remaining dp_replicate_size {rem}."
            ),
        );
        Some(rem)
    }

    /// The data axes: `(dp_replicate, dp_shard)` over the `rem` ranks left, or `None` when
    /// axolotl raises.
    fn data_axes(
        &mut self,
        ws: u64,
        rem: u64,
        (dp_shard, dp_rep): (Option<u64>, Option<u64>),
        is_fsdp: bool,
    ) -> Option<(Option<u64>, Option<u64>)> {
        let kwargs_by = KWARGS_BY;
        let mut rem = rem;
        let (mut k_rep, mut k_shard) = (None, None);
        if dp_shard.is_none() && matches!(dp_rep, None | Some(1)) && rem > 1 {
            k_shard = Some(rem);
            rem = 1;
        }
        if let Some(r) = dp_rep.filter(|&r| r > 1) {
            k_rep = Some(r);
            rem /= r;
        }
        if let Some(s) = dp_shard.filter(|&s| s > 1 && rem > 1) {
            if !is_fsdp {
                self.report.refuse(
                    Field::DpShardSize,
                    Refusal::new(
                        kwargs_by,
                        "ValueError: dp_shard_size was configured without a corresponding fsdp_config! Please ensure \
                         you have configured FSDP using fsdp_config.",
                    )
                    .fix("add an fsdp_config block (fsdp_version: 2), or leave dp_shard_size unset."),
                );
                return None;
            }
            k_shard = Some(s);
            rem /= s;
            if rem > 1 && k_rep.is_none() {
                k_rep = Some(rem);
                rem = 1;
            }
        }
        if rem > 1 && k_shard.is_none() && is_fsdp {
            k_shard = Some(rem);
            rem = 1;
        }
        if rem > 1 {
            self.report.refuse(
                Field::WorldSize,
                Refusal::new(
                    kwargs_by,
                    format!("ValueError: The configured parallelisms are incompatible with the current world size ({ws})!"),
                )
                .fix(format!(
                    "{rem} ranks are left over for data parallelism and nothing takes them: without an fsdp_config \
                     block dp_replicate_size must fill the world alone (or add fsdp_config so dp_shard_size takes them)."
                )),
            );
            return None;
        }
        Some((k_rep, k_shard))
    }

    /// accelerate's `__post_init__` refuses TP/CP with pure data parallelism (axolotl's patch
    /// re-raises it unless ep > 1): whether it did.
    fn pure_dp_refused(
        &mut self,
        built: bool,
        (tp, k_cp, rep, shard): (u64, u64, u64, u64),
        ep: u64,
    ) -> bool {
        let v = self.main.id();
        // accelerate's __post_init__ (axolotl's patch re-raises it unless ep > 1).
        if built && (tp > 1 || k_cp > 1) && rep > 1 && shard == 1 && ep <= 1 {
            self.report.refuse(
                if tp > 1 { Field::TensorParallelSize } else { Field::DpReplicateSize },
                Refusal::new(
                    "accelerate refuses the launch (ParallelismConfig)",
                    "ValueError: Tensor/Context parallelism (tp/cp_size > 1) cannot be used with pure data parallelism \
                     (dp_replicate_size > 1 and dp_shard_size == 1). Please set dp_shard_size > 1 and dp_replicate_size \
                     == 1 to compose FSDP + TP/CP for 2D parallel, or set dp_replicate_size == 1 and dp_shard_size > 1 \
                     to compose HSDP + TP/CP for 3D parallel.",
                )
                .fix(format!(
                    "axolotl {v} hands accelerate dp_replicate_size {rep} with tensor/context parallelism and no shard \
                     axis: DeepSpeed cannot combine tensor_parallel_size > 1 with this layout; use FSDP (fsdp_config) \
                     instead, or tensor_parallel_size 1."
                )),
            );
            return true;
        }
        false
    }

    /// `ExpertParallelPlugin._validate_mesh_axes`: whether the config's sizes multiply to the world.
    fn mesh_axes_match(&mut self, ws: u64, tp: u64, cp: u64, ep: u64) -> bool {
        let i = self.inputs;
        // ExpertParallelPlugin._validate_mesh_axes: the config's values, unset = 1.
        if ep > 1 && ws > 1 {
            let or1 = |p: Param<u64>| p.given().filter(|&x| x != 0).unwrap_or(1);
            let (r, s) = (or1(i.dp_replicate_size), or1(i.dp_shard_size));
            // Python's ints: exact (hostile sizes beyond u128 are shown as such)
            let product = [ep, r, s, tp, cp]
                .iter()
                .try_fold(1u128, |p, &x| p.checked_mul(u128::from(x)))
                .map_or_else(|| "a number beyond 2^128".to_string(), |p| p.to_string());
            if product != ws.to_string() {
                self.report.refuse(
                    Field::ExpertParallelSize,
                    Refusal::new(
                        "axolotl's expert-parallel plugin stops before loading the model",
                        format!(
                            "ValueError: expert_parallel: world_size ({ws}) must equal expert_parallel_size ({ep}) * \
                             dp_replicate_size ({r}) * dp_shard_size ({s}) * tensor_parallel_size ({tp}) * \
                             context_parallel_size ({cp}) = {product}."
                        ),
                    )
                    .fix(format!(
                        "Give dp_shard_size (with fsdp_config), dp_replicate_size or context_parallel_size explicitly so \
                         that their product with expert_parallel_size {ep} is world_size {ws}: the plugin checks the \
                         values written in the config, not the ones axolotl fills in."
                    )),
                );
                return false;
            }
        }
        true
    }

    /// `ParallelismConfig._validate_accelerator` (skipped for DeepSpeed Ulysses).
    fn validate_accelerator(
        &mut self,
        ws: u64,
        (tp, cp, ep): (u64, u64, u64),
        built: bool,
        (rep, shard, k_cp, k_sp): (u64, u64, u64, u64),
    ) {
        let v = self.main.id();
        let is_fsdp = self.is_fsdp();
        // ParallelismConfig._validate_accelerator (skipped for DeepSpeed Ulysses).
        if built && k_sp <= 1 {
            let patched = cp > 1 || is_fsdp || ep > 1;
            let total = [rep, shard, tp, k_cp, k_sp, if patched { ep } else { 1 }]
                .iter()
                .fold(1u64, |p, &x| p.saturating_mul(x));
            if total != ws {
                // axolotl's patched message (monkeypatch/accelerate/parallelism_config.py):
                // 0.14.0 – 0.16.x end at cp_size, 0.17.0 adds ep_size, 0.18.0+ sp_size/ep_size;
                // accelerate 1.13's own ends at sp_size
                let sizes = match (patched, self.main) {
                    (true, Version::V0_14_0) => "tp_size/cp_size",
                    (true, _) => "tp_size/cp_size/sp_size/ep_size",
                    (false, _) => "tp_size/cp_size/sp_size",
                };
                let fix = cluster::nearest_valid(
                    ws,
                    tp.saturating_mul(cp),
                    "tensor_parallel_size × context_parallel_size",
                );
                self.report.refuse(
                    Field::WorldSize,
                    Refusal::new(
                        "accelerate refuses the launch",
                        format!(
                            "ParallelismConfig total_size ({total}) does not match num_processes ({ws}). Please adjust \
                             dp_replicate_size/ dp_shard_size/{sizes}."
                        ),
                    )
                    .fix(format!(
                        "the parallel sizes axolotl {v} hands accelerate multiply to {total}, not world_size {ws}. {fix}"
                    )),
                );
            }
        }
    }
}
