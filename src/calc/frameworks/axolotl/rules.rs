//! axolotl 0.21.0 (the default), 0.20.0, 0.19.0 (what links without `version=` mean), 0.18.0
//! (which stands for 0.15.0 – 0.18.0) and 0.14.0 (before PRs #3444 and #3462), each computable
//! as the main release (`version=0.21.0` … `version=0.14.0`), with another release's numbers
//! alongside as the comparison. The comparison values keep the output names
//! `legacy_global_batch_size` / `legacy_total_num_steps` (and the notes go to
//! `Report::legacy_notes`): under 0.15.0 – 0.21.0 they hold 0.14.0's numbers, under 0.14.0 they
//! hold 0.19.0's ([`Version::other`]).
//!
//! What differs (read in each release's source and confirmed by running it):
//! - the batch factor: 0.15.0 – 0.21.0 `world_size // cp // tp`; 0.14.0 the whole `world_size`
//!   (`utils/config/__init__.py::normalize_config`);
//! - the step count: 0.14.0 multiplies each of the three step formulas by `cp * tp`
//!   (`utils/trainer.py::calculate_total_num_steps`);
//! - `check_batch_size_fields` (`utils/schemas/validation.py`): 0.14.0 – 0.18.0 refuse fewer than
//!   two truthy of micro_batch_size, gradient_accumulation_steps, batch_size; 0.19.0 – 0.21.0 only
//!   batch_size without either of the others;
//! - the CP > 1 requirement (`check_context_parallel_size`): 0.14.0 – 0.16.x `flash_attention:
//!   true`, 0.17.0 – 0.18.0 `attn_implementation: flash_attention_2 or flash_attention_3`, 0.19.0
//!   `attn_implementation: flash_attention_2` (each a note at `context_parallel_size`: dpcalc
//!   does not check these releases' attention keys); 0.20.0 – 0.21.0 refuse only
//!   `attn_implementation: eager` (an error at `attn_implementation`), and packing no longer needs
//!   `micro_batch_size: 1`;
//! - expert parallelism (`expert_parallel_size`): built in from 0.21.0; 0.20.0 runs it only with
//!   `axolotl.integrations.expert_parallel.ExpertParallelPlugin` under `plugins` (else it drops
//!   the key silently); before 0.20.0 there is no such key;
//! - FSDP (`check_fsdp_version`): 0.20.0 – 0.21.0 refuse an `fsdp_version` other than 2, 0.21.0
//!   also the top-level `fsdp` list and FSDP1-only `fsdp_config` keys;
//! - DeepSpeed with context parallelism: 0.21.0 maps it to Ulysses `sp_size` (`is_deepspeed`).
//!
//! The main-line state between #3444 and #3462 (`world_size // cp`, steps × tp) is not modelled:
//! no release has it (0.15.0, the first release after 0.14.0, already has #3462).
//!
//! Mirrors, in this order of execution:
//! - the batch-field validators, `src/axolotl/utils/schemas/validation.py`
//!   (`check_batch_size_fields`, `check_gas_bsz`, `check_warmup`, `check_context_parallel_size`);
//! - `normalize_config`, `src/axolotl/utils/config/__init__.py` (GA, batch, the DP factor,
//!   saves/evals per epoch);
//! - `calculate_total_num_steps`, `src/axolotl/utils/trainer.py`, and the `min(·, max_steps)` of
//!   `src/axolotl/utils/data/sft.py`;
//! - `_configure_warmup_and_logging` and `max_steps = cfg.max_steps or total_num_steps or -1`,
//!   `src/axolotl/core/builders/base.py`;
//! - what transformers 5.x then does with those (`get_warmup_steps`, `TrainerState.compute_steps`)
//!   and what accelerate 1.13's `ParallelismConfig` refuses at launch;
//! - 0.20.0+: the FSDP and expert-parallel validators (`check_fsdp_version`,
//!   `integrations/expert_parallel/args.py::validate_expert_parallel_topology`), then at launch
//!   `utils/distributed.py::_get_parallel_config_kwargs`, accelerate's `ParallelismConfig` under
//!   axolotl's patch (`monkeypatch/accelerate/parallelism_config.py`, run on accelerate 1.15) and
//!   the plugin's `_validate_mesh_axes`.
//!
//! Every float operation keeps the source's order (`ceil((N*E)/B)`, not `ceil(N*(E/B))`), because
//! the results differ by one at rounding boundaries. Checked against runs of each release's own
//! code: `tests/fixtures/axolotl.txt`.

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num, NumError};
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};

/// The inputs, typed. Absent fields take axolotl's schema defaults when used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    pub nodes: Param<u64>,
    pub gpus_per_node: Param<u64>,
    pub world_size: Param<u64>,
    pub tensor_parallel_size: Param<u64>,
    pub context_parallel_size: Param<u64>,
    pub micro_batch_size: Param<u64>,
    pub gradient_accumulation_steps: Param<u64>,
    pub batch_size: Param<u64>,
    pub num_samples: Param<u64>,
    pub num_epochs: Param<f64>,
    pub max_steps: Param<u64>,
    pub sequence_len: Param<u64>,
    pub sample_packing: Param<bool>,
    pub sample_packing_eff_est: Param<f64>,
    pub total_num_tokens: Param<u64>,
    pub warmup_steps: Param<u64>,
    pub warmup_ratio: Param<f64>,
    pub val_set_size: Param<f64>,
    pub evals_per_epoch: Param<u64>,
    pub saves_per_epoch: Param<u64>,
    pub expert_parallel_size: Param<u64>,
    pub dp_shard_size: Param<u64>,
    pub dp_replicate_size: Param<u64>,
    pub fsdp_version: Param<u64>,
    pub fsdp_config_fsdp_version: Param<u64>,
    pub fsdp_reshard_after_forward: Param<bool>,
    pub fsdp_offload_params: Param<bool>,
}

/// The text inputs (not `Copy`, so kept apart from [`Inputs`]); `None` when absent or empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Texts {
    pub attn_implementation: Option<String>,
    pub state_dict_type: Option<String>,
    pub final_state_dict_type: Option<String>,
    pub deepspeed: Option<String>,
    pub plugins: Option<String>,
    /// The top-level `fsdp` list (FSDP1's sharding strategies), as typed.
    pub fsdp: Option<String>,
    pub sharding_strategy: Option<String>,
}

/// The plugin 0.20.0 needs listed for `expert_parallel_size` to mean anything.
const EP_PLUGIN: &str = "axolotl.integrations.expert_parallel.ExpertParallelPlugin";

impl Texts {
    fn parse(raw: &RawInputs, report: &mut Report) -> Texts {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        let mut text = |f: Field| match r.text(f) {
            Param::Given(t) => Some(t),
            _ => None,
        };
        Texts {
            attn_implementation: text(Field::AttnImplementation),
            state_dict_type: text(Field::FsdpStateDictType),
            final_state_dict_type: text(Field::FsdpFinalStateDictType),
            deepspeed: text(Field::Deepspeed),
            plugins: text(Field::Plugins),
            fsdp: text(Field::Fsdp),
            sharding_strategy: text(Field::FsdpShardingStrategy),
        }
    }

    /// Whether the top-level `fsdp` list holds an item (Python's truthiness of the list).
    fn fsdp_list(&self) -> bool {
        self.fsdp.as_deref().is_some_and(|p| {
            p.split(|c: char| c == ',' || c.is_whitespace() || c == '[' || c == ']')
                .any(|x| !x.trim_matches(|c| c == '"' || c == '\'').is_empty())
        })
    }

    /// Whether `plugins` lists the expert-parallel plugin (comma- or space-separated).
    fn ep_plugin(&self) -> bool {
        self.plugins.as_deref().is_some_and(|p| {
            p.split(|c: char| c == ',' || c.is_whitespace() || c == '[' || c == ']')
                .any(|x| x.trim_matches(|c| c == '"' || c == '\'') == EP_PLUGIN)
        })
    }
}

/// axolotl's schema default for `sequence_len` (`schemas/config.py`).
pub const DEFAULT_SEQUENCE_LEN: u64 = 512;

impl Inputs {
    /// Parses every field; unreadable ones become [`Param::Invalid`] with an error at the field.
    pub fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        Inputs {
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
            tensor_parallel_size: r.count(Field::TensorParallelSize),
            context_parallel_size: r.count(Field::ContextParallelSize),
            micro_batch_size: r.count(Field::MicroBatchSize),
            gradient_accumulation_steps: r.count(Field::GradientAccumulationSteps),
            batch_size: r.count(Field::BatchSize),
            num_samples: r.count(Field::NumSamples),
            num_epochs: r.real(Field::NumEpochs),
            max_steps: r.count(Field::MaxSteps),
            sequence_len: r.count(Field::SequenceLen),
            sample_packing: r.flag(Field::SamplePacking),
            sample_packing_eff_est: r.real(Field::SamplePackingEffEst),
            total_num_tokens: r.count(Field::TotalNumTokens),
            warmup_steps: r.count(Field::WarmupSteps),
            warmup_ratio: r.real(Field::WarmupRatio),
            val_set_size: r.real(Field::ValSetSize),
            evals_per_epoch: r.count(Field::EvalsPerEpoch),
            saves_per_epoch: r.count(Field::SavesPerEpoch),
            expert_parallel_size: r.count(Field::ExpertParallelSize),
            dp_shard_size: r.count(Field::DpShardSize),
            dp_replicate_size: r.count(Field::DpReplicateSize),
            fsdp_version: r.count(Field::FsdpVersion),
            fsdp_config_fsdp_version: r.count(Field::FsdpConfigFsdpVersion),
            fsdp_reshard_after_forward: r.flag(Field::FsdpReshardAfterForward),
            fsdp_offload_params: r.flag(Field::FsdpOffloadParams),
        }
    }
}

/// Which axolotl release's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// 0.21.0: 0.20.0's rules, plus the built-in expert-parallel plugin and DeepSpeed's Ulysses
    /// `sp_size` for context parallelism.
    V0_21_0,
    /// 0.20.0: 0.19.0's batch and steps; context parallelism refuses only `attn_implementation:
    /// eager`; expert parallelism only with the plugin listed under `plugins`.
    V0_20_0,
    /// 0.19.0: `dp = world_size // cp // tp`; no extra factor in steps.
    V0_19_0,
    /// 0.18.0 (0.15.0 – 0.18.0): 0.19.0's batch and step math with 0.14.0's batch-field count.
    V0_18_0,
    /// 0.14.0: batch scaled by the whole world size, steps multiplied by `cp * tp`.
    V0_14_0,
}

impl Version {
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    pub fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
    }

    /// The release with this `version=` id, if [`RELEASES`] has it.
    pub fn from_id(id: &str) -> Option<Version> {
        TABLE.iter().find(|(r, _)| r.id == id).map(|&(_, v)| v)
    }

    /// The `version=` id (also how messages name the release).
    pub fn id(self) -> &'static str {
        TABLE
            .iter()
            .find(|&&(_, v)| v == self)
            .expect("every Version is in TABLE")
            .0
            .id
    }

    /// The release shown alongside as the comparison: 0.14.0 (before the batch fix) for the
    /// releases after it, 0.19.0 for 0.14.0.
    pub fn other(self) -> Version {
        match self {
            Version::V0_21_0 | Version::V0_20_0 | Version::V0_19_0 | Version::V0_18_0 => {
                Version::V0_14_0
            }
            Version::V0_14_0 => Version::V0_19_0,
        }
    }

    /// 0.15.0 – 0.19.0 scale the batch by `world_size // cp // tp` and add no step factor
    /// (PRs #3444 and #3462); 0.14.0 scales by `world_size` and multiplies steps by `cp * tp`.
    fn dp_batch(self) -> bool {
        self != Version::V0_14_0
    }

    /// 0.20.0+: context parallelism wraps any kernel-backed attention (only `eager` refused,
    /// no `micro_batch_size: 1` with packing).
    fn cp_any_kernel(self) -> bool {
        matches!(self, Version::V0_21_0 | Version::V0_20_0)
    }

    /// 0.21.0: the expert-parallel plugin is built in (0.20.0 needs it under `plugins`).
    fn ep_builtin(self) -> bool {
        self == Version::V0_21_0
    }

    /// 0.21.0: DeepSpeed maps context parallelism to Ulysses `sp_size` (`is_deepspeed`).
    fn ds_ulysses(self) -> bool {
        self == Version::V0_21_0
    }
}

/// A Python `repr` of a string (single quotes unless it holds one).
fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// An arithmetic failure inside `calculate_total_num_steps`: axolotl stops with the exception
/// Python raises (`Ok`), or the value is too large for dpcalc (`Err`, dpcalc's own message).
fn crash(e: NumError) -> Result<Refusal, String> {
    match e {
        NumError::ZeroDivision(_) | NumError::NotFinite => {
            let printed = e.to_string();
            let (class, text) = printed.split_once(": ").unwrap_or(("an error", &printed));
            Ok(Refusal::new(
                format!("axolotl stops in calculate_total_num_steps with {class}"),
                text,
            ))
        }
        NumError::TooLarge => Err("the step count is too large to represent exactly".to_string()),
    }
}

/// The form.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::TensorParallelSize,
            Field::ContextParallelSize,
            Field::AttnImplementation,
            Field::ExpertParallelSize,
            Field::DpShardSize,
            Field::DpReplicateSize,
            Field::Plugins,
        ],
    ),
    (
        "FSDP & DeepSpeed",
        &[
            Field::FsdpVersion,
            Field::FsdpConfigFsdpVersion,
            Field::FsdpStateDictType,
            Field::FsdpFinalStateDictType,
            Field::FsdpReshardAfterForward,
            Field::FsdpOffloadParams,
            Field::FsdpShardingStrategy,
            Field::Fsdp,
            Field::Deepspeed,
        ],
    ),
    (
        "Batch",
        &[
            Field::MicroBatchSize,
            Field::GradientAccumulationSteps,
            Field::BatchSize,
        ],
    ),
    (
        "Data & schedule",
        &[
            Field::NumSamples,
            Field::NumEpochs,
            Field::MaxSteps,
            Field::SequenceLen,
            Field::SamplePacking,
            Field::SamplePackingEffEst,
            Field::TotalNumTokens,
            Field::WarmupSteps,
            Field::WarmupRatio,
            Field::ValSetSize,
            Field::EvalsPerEpoch,
            Field::SavesPerEpoch,
        ],
    ),
    (
        "Model & memory",
        &[
            Field::BaseModel,
            Field::GradientCheckpointing,
            Field::Adapter,
            Field::LoraR,
            Field::LoraTargetModules,
            Field::LoraTargetLinear,
            Field::Optimizer,
            Field::ZeroStage,
            Field::OffloadOptimizerDevice,
            Field::OffloadParamDevice,
            Field::ZeroInit,
        ],
    ),
    crate::calc::field::ARCHITECTURE,
];

/// The results, in page order.
pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TotalNumSteps,
    Output::MaxSteps,
    Output::StepsPerEpoch,
    Output::WarmupSteps,
    Output::EvalSteps,
    Output::SaveSteps,
    Output::TokensPerStep,
];

/// axolotl's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::GlobalBatchSize => ("Global batch (samples per optimizer step)", "batch_size"),
        Output::LegacyGlobalBatchSize => ("Global batch", "batch_size"),
        Output::MaxSteps => ("Optimizer steps the run takes", "Trainer max_steps"),
        Output::LegacyTotalNumSteps => ("Total steps", "total_num_steps"),
        _ => return None,
    })
}

/// The inputs an embedded view always shows.
pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::TensorParallelSize,
    Field::ContextParallelSize,
    Field::MicroBatchSize,
    Field::GradientAccumulationSteps,
    Field::NumSamples,
    Field::NumEpochs,
];

/// The releases dpcalc models with the rules of each, newest (the default) first.
const TABLE: ReleaseTable<Version, 5> = [
    (
        Release {
            id: "0.21.0",
            label: "0.21.0 (built-in expert parallelism)",
        },
        Version::V0_21_0,
    ),
    (
        Release {
            id: "0.20.0",
            label: "0.20.0 (context parallelism with any kernel attention)",
        },
        Version::V0_20_0,
    ),
    (
        Release {
            id: "0.19.0",
            label: "0.19.0 (after #3462)",
        },
        Version::V0_19_0,
    ),
    (
        Release {
            id: "0.18.0",
            label: "0.15.0 – 0.18.0 (after #3462; batch-field rule of 0.14.0)",
        },
        Version::V0_18_0,
    ),
    (
        Release {
            id: "0.14.0",
            label: "0.14.0 (before #3444 and #3462)",
        },
        Version::V0_14_0,
    ),
];

/// The releases dpcalc models, newest (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

/// Computes everything for one set of inputs, by the rules of `release` (an id of [`RELEASES`];
/// an unknown id gets the default's, [`Version::at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    compute_version(Version::at(release), raw)
}

/// Computes everything for one set of inputs by 0.19.0's rules (0.14.0's alongside).
pub fn compute(raw: &RawInputs) -> Report {
    compute_version(Version::V0_19_0, raw)
}

/// Computes everything by `main`'s rules, with [`Version::other`]'s numbers as the comparison.
pub fn compute_version(main: Version, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    let t = Texts::parse(raw, &mut report);
    Calc {
        i,
        t,
        r: &mut report,
        main,
    }
    .run();
    report
}

struct Calc<'a> {
    i: Inputs,
    t: Texts,
    r: &'a mut Report,
    /// The release whose numbers are the main outputs.
    main: Version,
}

/// The cluster as axolotl sees it.
struct Cluster {
    world_size: u64,
    tp: u64,
    cp: u64,
    /// The factor the batch is multiplied by (1 when world_size is 1: no scaling branch).
    dp: u64,
}

/// The batch after `normalize_config`.
struct Batch {
    /// `cfg.batch_size` (global, as this release logs it and divides by).
    global: u64,
    /// The samples one optimizer step really trains: per-device batch × dp_world_size (the data
    /// accelerate shards over). Equal to `global` in 0.19.0; 0.14.0's `global` counts each sample
    /// tp × cp times.
    physical: u64,
}

impl Calc<'_> {
    /// The stages, in axolotl's order: the world and the parallel sizes with accelerate's
    /// checks (grid), the validators and `normalize_config` (batch), `calculate_total_num_steps`
    /// and the trainer's `max_steps` (steps), warmup and the save/eval intervals (schedule).
    fn run(mut self) {
        let (main, other) = (self.main, self.main.other());
        self.r.plan.seq_len = self.i.sequence_len.positive_or(Some(DEFAULT_SEQUENCE_LEN));
        self.r.enter(Stage::Grid);
        let cluster = self.cluster();
        self.parallel_checks(cluster.as_ref());
        self.r.enter(Stage::Batch);
        let batch = self.batch(main, cluster.as_ref());
        let other_batch = self.batch(other, cluster.as_ref());
        self.r.enter(Stage::Steps);
        let epochs = self.epochs();
        let steps = self.steps(main, batch.as_ref(), cluster.as_ref(), epochs);
        let other_steps = self.steps(other, other_batch.as_ref(), cluster.as_ref(), epochs);
        if let (Some(c), Some(l)) = (&batch, &other_batch) {
            self.compare(c.global, l.global, steps, other_steps);
        }
        self.cap_other(other_steps);
        if let Some(b) = &batch {
            self.r.enter(Stage::Tokens);
            self.tokens(b);
            self.r.enter(Stage::Steps);
        }
        let trainer_max = self.max_steps(steps, batch.as_ref(), epochs);
        self.r.enter(Stage::Schedule);
        self.warmup(steps.map(|s| s.total), trainer_max);
        self.save_eval(trainer_max, epochs);
    }

    // ---- cluster -------------------------------------------------------------------------

    fn cluster(&mut self) -> Option<Cluster> {
        let world_size = self.world_size()?;
        let tp = self.parallel_size(Field::TensorParallelSize, self.i.tensor_parallel_size)?;
        let cp = self.parallel_size(Field::ContextParallelSize, self.i.context_parallel_size)?;
        let dp = if world_size == 1 {
            self.r.explain(
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
            self.r.explain(
                Output::DpWorldSize,
                rule,
                format!("dp_world_size = {world_size} // {cp} // {tp} = {dp}"),
            );
            dp
        };
        self.r.set(Output::DpWorldSize, Num::Int(dp.into()));
        // Expert parallelism borrows ranks inside the data-parallel ranks (0.21.0's mesh puts
        // `ep` among the data axes): it does not divide the batch.
        let ep = self
            .ep_size()
            .filter(|&e| e > 1 && dp % e == 0)
            .unwrap_or(1);
        self.r.publish_grid(crate::calc::Grid {
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

    fn world_size(&mut self) -> Option<u64> {
        let i = self.i;
        cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, self.r)
    }

    /// tp or cp after axolotl's after-validators, which turn a missing or 0 size into 1.
    fn parallel_size(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p {
            Param::Given(0) => {
                self.r.diag(
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
    fn parallel_checks(&mut self, cluster: Option<&Cluster>) {
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
            if cp > 1 && self.t.attn_implementation.as_deref() != Some("eager") {
                self.r.diag(
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
            self.r.diag(Field::ContextParallelSize, Level::Note, text);
        }
        let Some(model) = tp.checked_mul(cp) else {
            self.r.diag(
                Field::TensorParallelSize,
                Level::Error,
                "tensor_parallel_size × context_parallel_size is too large to count",
            );
            return;
        };
        if model == 1 || ws % model == 0 {
            return;
        }
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
        self.r.refuse(Field::WorldSize, refusal);
        let at = if tp > 1 {
            Field::TensorParallelSize
        } else {
            Field::ContextParallelSize
        };
        self.r.diag(
            at,
            Level::Error,
            format!("tensor_parallel_size × context_parallel_size = {model} must divide world_size {ws} (see world_size)"),
        );
    }

    // ---- 0.20.0+: expert parallelism, dp axes, DeepSpeed ----------------------------------

    /// Whether the expert-parallel plugin runs: built in from 0.21.0; 0.20.0 only with it listed
    /// under `plugins` (without it axolotl drops `expert_parallel_size` silently).
    fn ep_active(&self) -> bool {
        self.main.ep_builtin() || (self.main == Version::V0_20_0 && self.t.ep_plugin())
    }

    /// `expert_parallel_size` as the plugin reads it (`None` when it does not run or is unreadable).
    fn ep_size(&self) -> Option<u64> {
        if !self.ep_active() {
            return None;
        }
        match self.i.expert_parallel_size {
            Param::Invalid => None,
            p => p.or(1),
        }
    }

    /// `bool(cfg.fsdp or cfg.fsdp_config)`: an `fsdp_config` block is given. (The top-level
    /// `fsdp` list is refused by 0.21.0, the only release dpcalc ran with it.)
    fn is_fsdp(&self) -> bool {
        self.i.fsdp_config_fsdp_version.is_given()
            || self.i.fsdp_reshard_after_forward.is_given()
            || self.i.fsdp_offload_params.is_given()
            || self.t.sharding_strategy.is_some()
            || self.t.state_dict_type.is_some()
            || self.t.final_state_dict_type.is_some()
    }

    /// 0.20.0+'s validators that stop `load_cfg` (so nothing downstream has a value).
    fn validators_020(&mut self, cluster: Option<&Cluster>) -> Option<(Field, String)> {
        let i = self.i;
        // check_context_parallel_size: only eager is refused.
        if cluster.is_some_and(|c| c.cp > 1)
            && self.t.attn_implementation.as_deref() == Some("eager")
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
        if v021 && self.t.fsdp_list() {
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
        if v021 && self.t.sharding_strategy.is_some() {
            return Some((
                Field::FsdpShardingStrategy,
                "fsdp_config.sharding_strategy is an FSDP1-only option and FSDP1 has been removed from Axolotl. Use \
                 `reshard_after_forward` instead. See docs/multi-gpu.qmd#sec-migrate-fsdp1-fsdp2 for the migration guide."
                    .to_string(),
            ));
        }
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
        for (field, key, value) in [
            (
                Field::FsdpStateDictType,
                "state_dict_type",
                &self.t.state_dict_type,
            ),
            (
                Field::FsdpFinalStateDictType,
                "final_state_dict_type",
                &self.t.final_state_dict_type,
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

    /// 0.20.0+ at launch: `utils/distributed.py::_get_parallel_config_kwargs`, accelerate's
    /// `ParallelismConfig.__post_init__` (under axolotl's patch), the expert-parallel plugin's
    /// `_validate_mesh_axes`, then `ParallelismConfig._validate_accelerator`.
    fn launch_checks(&mut self, ws: u64, tp: u64, cp: u64) {
        let i = self.i;
        let v = self.main.id();
        if self.main == Version::V0_20_0
            && !self.t.ep_plugin()
            && i.expert_parallel_size.given().is_some_and(|e| e != 1)
        {
            self.r.diag(
                Field::ExpertParallelSize,
                Level::Note,
                format!(
                    "axolotl 0.20.0 drops expert_parallel_size silently unless plugins lists {EP_PLUGIN}: no expert \
                     parallelism runs and none of its checks apply (0.21.0 has the plugin built in)."
                ),
            );
        }
        if [i.dp_shard_size, i.dp_replicate_size].contains(&Param::Invalid) {
            return;
        }
        let ep = if self.ep_active() {
            match self.ep_size() {
                Some(e) => e,
                None => return,
            }
        } else {
            1
        };
        if ep > 1 {
            self.r.diag(
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
            self.r.refuse(
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
            return;
        }
        let dp_shard = i.dp_shard_size.given();
        let dp_rep = i.dp_replicate_size.given();
        let is_fsdp = self.is_fsdp();
        let ds = self.main.ds_ulysses() && self.t.deepspeed.is_some();
        let kwargs_by = "axolotl stops in utils/distributed.py::_get_parallel_config_kwargs";
        let mut rem = ws;
        if ep > 1 {
            if rem % ep != 0 {
                self.r.refuse(
                    Field::ExpertParallelSize,
                    Refusal::new(
                        kwargs_by,
                        format!("ValueError: expert_parallel_size ({ep}) must divide world_size ({ws})."),
                    )
                    .fix(format!("use an expert_parallel_size that divides world_size {ws}.")),
                );
                return;
            }
            rem /= ep;
        }
        // The ParallelismConfig kwargs: (dp_replicate, dp_shard, tp, cp, sp); empty → none built.
        let (mut k_rep, mut k_shard, mut k_cp, mut k_sp) = (None, None, 1, 1);
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
        if ds && k_sp > 1 && rem > 1 {
            if let Some(r) = dp_rep.filter(|&r| r > 1 && r != rem) {
                self.r.refuse(
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
                return;
            }
            self.r.diag(
                Field::Deepspeed,
                Level::Note,
                format!(
                    "axolotl {v} with DeepSpeed maps context_parallel_size {cp} to DeepSpeed Ulysses (sp_size {cp}, \
                     sp_backend deepspeed) and replicates over the remaining dp_replicate_size {rem}."
                ),
            );
            k_rep = Some(rem);
        } else {
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
                    self.r.refuse(
                        Field::DpShardSize,
                        Refusal::new(
                            kwargs_by,
                            "ValueError: dp_shard_size was configured without a corresponding fsdp_config! Please ensure \
                             you have configured FSDP using fsdp_config.",
                        )
                        .fix("add an fsdp_config block (fsdp_version: 2), or leave dp_shard_size unset."),
                    );
                    return;
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
                self.r.refuse(
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
                return;
            }
        }
        let built = tp > 1 || k_cp > 1 || k_sp > 1 || k_rep.is_some() || k_shard.is_some();
        let (rep, shard) = (k_rep.unwrap_or(1), k_shard.unwrap_or(1));
        // accelerate's __post_init__ (axolotl's patch re-raises it unless ep > 1).
        if built && (tp > 1 || k_cp > 1) && rep > 1 && shard == 1 && ep <= 1 {
            self.r.refuse(
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
            return;
        }
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
                self.r.refuse(
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
                return;
            }
        }
        // ParallelismConfig._validate_accelerator (skipped for DeepSpeed Ulysses).
        if built && k_sp <= 1 {
            let patched = cp > 1 || is_fsdp || ep > 1;
            let total = [rep, shard, tp, k_cp, k_sp, if patched { ep } else { 1 }]
                .iter()
                .fold(1u64, |p, &x| p.saturating_mul(x));
            if total != ws {
                let suffix = if patched { "/ep_size" } else { "" };
                let fix = cluster::nearest_valid(
                    ws,
                    tp.saturating_mul(cp),
                    "tensor_parallel_size × context_parallel_size",
                );
                self.r.refuse(
                    Field::WorldSize,
                    Refusal::new(
                        "accelerate refuses the launch",
                        format!(
                            "ParallelismConfig total_size ({total}) does not match num_processes ({ws}). Please adjust \
                             dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size{suffix}."
                        ),
                    )
                    .fix(format!(
                        "the parallel sizes axolotl {v} hands accelerate multiply to {total}, not world_size {ws}. {fix}"
                    )),
                );
            }
        }
    }

    // ---- batch ---------------------------------------------------------------------------

    fn batch(&mut self, version: Version, cluster: Option<&Cluster>) -> Option<Batch> {
        let i = self.i;
        let (mbs_p, ga_p, bs_p) = (
            i.micro_batch_size,
            i.gradient_accumulation_steps,
            i.batch_size,
        );
        if [mbs_p, ga_p, bs_p].contains(&Param::Invalid) {
            return None;
        }
        let truthy = |p: Param<u64>| p.given().is_some_and(|v| v != 0);
        let (mbs_t, ga_t, bs_t) = (truthy(mbs_p), truthy(ga_p), truthy(bs_p));
        // The main release reports at the fields; the comparison only leaves notes.
        let main = version == self.main;

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
                self.r.legacy_notes.push(refusal.message());
            } else {
                self.r.refuse(field, refusal);
            }
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
        let ga = if ga_user != 0 {
            ga_user
        } else {
            match bs_p.given() {
                None => {
                    if main {
                        self.r.refuse(
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
                        self.r.refuse(
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
                        self.r.diag(
                            Field::GradientAccumulationSteps,
                            Level::Warning,
                            format!(
                                "gradient_accumulation_steps 0 is read as unset, so axolotl derives it: batch_size // micro_batch_size = {b} // {mbs} = {ga}"
                            ),
                        );
                        if ga == 0 {
                            self.r.diag(
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
        };
        let (local, local_worked) = match bs_user {
            Some(b) => (b, format!("batch_size (as given) = {b}")),
            None => {
                let Some(l) = mbs.checked_mul(ga) else {
                    self.r.diag(
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
            self.r.refuse(
                Field::MicroBatchSize,
                Refusal::new(
                    "axolotl stops in calculate_total_num_steps",
                    "ZeroDivisionError: float division by zero",
                )
                .fix("micro_batch_size 0: axolotl accepts it, so the global batch is 0."),
            );
        }
        let cluster = cluster?;
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
                self.r.diag(
                    Field::MicroBatchSize,
                    Level::Error,
                    "the global batch is too large to count",
                );
            }
            return None;
        };
        let (out_ga, out_global) = if main {
            (
                Some(Output::GradientAccumulationSteps),
                Output::GlobalBatchSize,
            )
        } else {
            (None, Output::LegacyGlobalBatchSize)
        };
        if let Some(o) = out_ga {
            self.r.set(o, Num::Int(ga.into()));
            self.r.explain(
                o,
                "gradient_accumulation_steps = gradient_accumulation_steps or batch_size // micro_batch_size",
                format!("gradient_accumulation_steps = {ga}"),
            );
        }
        self.r.set(out_global, Num::Int(global.into()));
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
        self.r.explain(out_global, rule, worked);
        let model = cluster.tp.saturating_mul(cluster.cp);
        if main && global != physical && model > 1 && cluster.world_size % model == 0 {
            let at = if cluster.tp > 1 {
                Field::TensorParallelSize
            } else {
                Field::ContextParallelSize
            };
            self.r.diag(
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
        if main {
            self.r
                .plan
                .publish_batch(mbs.into(), ga.into(), physical.into());
        }
        Some(Batch { global, physical })
    }

    /// What 0.19.0 accepts but will not do what the user means.
    fn batch_field_warnings(&mut self) {
        let i = self.i;
        if self.main != Version::V0_21_0
            && (self.t.fsdp_list() || self.t.sharding_strategy.is_some())
        {
            let v = self.main.id();
            self.r.diag(
                if self.t.fsdp_list() { Field::Fsdp } else { Field::FsdpShardingStrategy },
                Level::Note,
                format!(
                    "dpcalc has run only axolotl 0.21.0 on FSDP1's keys (it refuses them); under {v} the top-level fsdp \
                     list and fsdp_config.sharding_strategy are not modelled: FSDP is read from the other fsdp_config keys."
                ),
            );
        }
        if let Param::Given(0) = i.batch_size {
            self.r.diag(
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
        self.r.diag(
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

    // ---- steps ---------------------------------------------------------------------------

    fn epochs(&mut self) -> Option<f64> {
        match self.i.num_epochs {
            Param::Given(0.0) => {
                self.r.diag(
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

    fn steps(
        &mut self,
        version: Version,
        batch: Option<&Batch>,
        cluster: Option<&Cluster>,
        epochs: Option<f64>,
    ) -> Option<StepCount> {
        let main = version == self.main;
        let packing = self.i.sample_packing.or(false)?;
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
                self.r.set(out, s.total);
                if main {
                    self.r.set(Output::StepsPerEpoch, s.per_epoch);
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
                    self.r
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
                            Ok(refusal) => self.r.refuse(field, refusal),
                            Err(own) => self.r.diag(field, Level::Error, own),
                        }
                    }
                }
                None
            }
        }
    }

    /// `int(math.ceil(len(train_dataset) * cfg.num_epochs / cfg.batch_size))`.
    fn plain_steps(&mut self, ctx: StepCtx, b: u64, e: f64) -> Result<Option<StepCount>, NumError> {
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
        self.r.explain(
            out,
            rule,
            format!("total_num_steps = ceil({shown} / {b}) = {}", total.raw()),
        );
        if main {
            let rule = match extra {
                None => "steps_per_epoch = ceil(num_samples / batch_size)",
                Some(_) => "0.14.0: steps_per_epoch = ceil(num_samples × context_parallel_size × tensor_parallel_size / batch_size)",
            };
            self.r.explain(
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
    fn packed_steps(
        &mut self,
        ctx: StepCtx,
        b: u64,
        e: f64,
    ) -> Result<Option<StepCount>, NumError> {
        let StepCtx { out, main, extra } = ctx;
        let eff = match self.i.sample_packing_eff_est {
            Param::Given(x) if x > 0.0 => x,
            Param::Invalid => return Ok(None),
            given => {
                if main {
                    let zero = if given.is_given() {
                        "sample_packing_eff_est 0 is read by axolotl as unset. "
                    } else {
                        ""
                    };
                    self.r.diag(
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
                return Ok(None);
            }
        };
        let t = match self.i.total_num_tokens {
            Param::Given(t) if t > 0 => t,
            Param::Invalid => return Ok(None),
            given => {
                if main {
                    let zero = if given.is_given() {
                        "total_num_tokens 0 is read by axolotl as unset (it counts the dataset). "
                    } else {
                        ""
                    };
                    self.r.diag(
                        Field::TotalNumTokens,
                        Level::Hint,
                        format!("{zero}Enter total_num_tokens (the tokens in the training set) to compute the packed step count."),
                    );
                }
                return Ok(None);
            }
        };
        let l = self.i.sequence_len.or(DEFAULT_SEQUENCE_LEN).unwrap_or(0);
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
        self.r.explain(
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
            let rule = if extra.is_some() {
                "0.14.0: steps_per_epoch = (floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1) × context_parallel_size × tensor_parallel_size"
            } else {
                "steps_per_epoch = floor(0.99 × total_num_tokens / sample_packing_eff_est / sequence_len // batch_size) − 1"
            };
            self.r.explain(
                Output::StepsPerEpoch,
                rule,
                format!("steps_per_epoch = {}", per_epoch.raw()),
            );
            if total.to_f64() <= 0.0 {
                self.r.diag(
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
        Ok(Some(StepCount { total, per_epoch }))
    }

    fn samples(&mut self) -> Option<u64> {
        match self.i.num_samples {
            Param::Given(n) => Some(n),
            Param::Absent => {
                if !self.r.diags.iter().any(|d| d.field == Field::NumSamples) {
                    self.r.diag(
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
    fn compare(
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
            self.r.legacy_notes.push(format!(
                "axolotl {o_id} {logs_o} batch_size {} where {m_id} {logs_m} {} ({} {}).",
                Num::Int(other.into()).pretty(),
                Num::Int(main.into()).pretty(),
                Num::Int(d.abs()).pretty(),
                if d > 0 { "more" } else { "fewer" },
            ));
        }
        if let (Some(s), Some(o)) = (steps, other_steps) {
            let same = num::cmp(s.total, o.total) == std::cmp::Ordering::Equal;
            self.r.legacy_notes.push(if same {
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
    fn cap_other(&mut self, other: Option<StepCount>) {
        let (Some(o), Some(m)) = (other, self.i.max_steps.given().filter(|&m| m != 0)) else {
            return;
        };
        let m = Num::Int(m.into());
        let t = num::min(o.total, m);
        self.r.set(Output::LegacyTotalNumSteps, t);
        self.r.explain(
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

    fn tokens(&mut self, b: &Batch) {
        let l = match self.i.sequence_len {
            Param::Given(0) => {
                self.r.diag(
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
            self.r.diag(
                Field::SequenceLen,
                Level::Error,
                "batch_size × sequence_len is too large to count",
            );
            return;
        };
        self.r.set(Output::TokensPerStep, Num::Int(t));
        let rule = if b.physical == b.global {
            "tokens_per_step = batch_size × sequence_len (token slots; padding or packing fills them)"
        } else {
            "tokens_per_step = micro_batch_size × gradient_accumulation_steps × dp_world_size × sequence_len (token slots; \
             0.14.0's batch_size counts each sample tensor_parallel_size × context_parallel_size times)"
        };
        self.r.explain(
            Output::TokensPerStep,
            rule,
            format!("tokens_per_step = {} × {l} = {t}", b.physical),
        );
    }

    // ---- what the Trainer receives -------------------------------------------------------

    /// Sets `total_num_steps` (after `min(·, max_steps)`) and returns the Trainer's `max_steps`.
    fn max_steps(
        &mut self,
        steps: Option<StepCount>,
        batch: Option<&Batch>,
        epochs: Option<f64>,
    ) -> Option<Num> {
        let cap = match self.i.max_steps {
            Param::Given(0) => {
                self.r.diag(
                    Field::MaxSteps,
                    Level::Warning,
                    "max_steps 0 is read by axolotl as unset",
                );
                None
            }
            Param::Given(m) => Some(Num::Int(m.into())),
            Param::Absent => None,
            Param::Invalid => return None,
        };
        let computed = steps.map(|s| s.total);
        let logged = match (computed, cap) {
            (Some(c), Some(m)) => {
                let t = num::min(c, m);
                self.r.explain(
                    Output::TotalNumSteps,
                    "sft.py: total_num_steps = min(calculate_total_num_steps(...), max_steps)",
                    format!(
                        "total_num_steps = min({}, {}) = {}",
                        c.raw(),
                        m.raw(),
                        t.raw()
                    ),
                );
                Some(t)
            }
            (c, _) => c,
        };
        if let Some(t) = logged {
            self.r.set(Output::TotalNumSteps, t);
        }
        // core/builders/base.py: max_steps = cfg.max_steps or total_num_steps or -1
        let trainer = match (cap, logged) {
            (Some(m), _) => m,
            (None, Some(t)) if t.truthy() => t,
            (None, Some(_)) => Num::Int(-1),
            (None, None) => return None,
        };
        self.r.set(Output::MaxSteps, trainer);
        self.r.explain(
            Output::MaxSteps,
            "Trainer max_steps = cfg.max_steps or total_num_steps or -1",
            format!("max_steps = {}", trainer.raw()),
        );
        if let (Some(m), Some(s), Some(b), Some(e)) = (cap, steps, batch, epochs) {
            self.max_steps_effect(m, s, b, e);
        }
        Some(trainer)
    }

    fn max_steps_effect(&mut self, m: Num, s: StepCount, b: &Batch, e: f64) {
        let epochs = match (self.i.sample_packing.or(false), self.i.num_samples.given()) {
            (Some(false), Some(n)) if n > 0 => Some(m.to_f64() * b.physical as f64 / n as f64),
            (Some(true), _) if s.per_epoch.to_f64() > 0.0 => {
                Some(m.to_f64() / s.per_epoch.to_f64())
            }
            _ => None,
        };
        let epochs = epochs
            .map(|x| format!(" ≈ {x:.2} epochs"))
            .unwrap_or_default();
        match num::cmp(m, s.total) {
            std::cmp::Ordering::Greater => self.r.diag(
                Field::MaxSteps,
                Level::Warning,
                format!(
                    "max_steps {} is more than the {} steps num_epochs {} gives: axolotl logs {} but the Trainer runs \
                     {} optimizer steps, repeating the data past num_epochs:{epochs} in all.",
                    m.pretty(),
                    s.total.pretty(),
                    num::float_repr(e),
                    s.total.pretty(),
                    m.pretty()
                ),
            ),
            std::cmp::Ordering::Less => self.r.diag(
                Field::MaxSteps,
                Level::Note,
                format!(
                    "max_steps {} stops the run before the {} steps of num_epochs {}:{epochs}.",
                    m.pretty(),
                    s.total.pretty(),
                    num::float_repr(e)
                ),
            ),
            std::cmp::Ordering::Equal => {}
        }
    }

    /// axolotl's `_configure_warmup_and_logging`, then transformers 5's `get_warmup_steps`.
    fn warmup(&mut self, computed: Option<Num>, trainer_max: Option<Num>) {
        let i = self.i;
        if matches!(i.warmup_steps, Param::Invalid) || matches!(i.warmup_ratio, Param::Invalid) {
            return;
        }
        // `total_num_steps` here is the value after min(·, max_steps).
        let total = self.r.value(Output::TotalNumSteps).or(computed);
        let (Some(total), Some(trainer_max)) = (total, trainer_max) else {
            return;
        };
        let mut ratio = 0.0;
        let (mut w, rule) = if let Some(ws) = i.warmup_steps.given() {
            (
                Num::Int(ws.into()),
                format!("warmup_steps (as given) = {ws}"),
            )
        } else if let Some(r) = i.warmup_ratio.given() {
            if total.truthy() {
                let Ok(v) = num::mul(Num::Float(r), total).and_then(|p| num::int_of(p.to_f64()))
                else {
                    return;
                };
                let v = if num::cmp(v, Num::Int(0)).is_lt() {
                    Num::Int(0)
                } else {
                    v
                };
                (
                    v,
                    format!(
                        "max(int({} × {}), 0) = {}",
                        num::float_repr(r),
                        total.raw(),
                        v.raw()
                    ),
                )
            } else {
                ratio = r;
                (
                    Num::Int(0),
                    format!("warmup_ratio {} passed through", num::float_repr(r)),
                )
            }
        } else if total.truthy() {
            let Ok(v) = num::int_of(0.03 * total.to_f64()) else {
                return;
            };
            let v = num::min(v, Num::Int(100));
            (
                v,
                format!("min(int(0.03 × {}), 100) = {}", total.raw(), v.raw()),
            )
        } else {
            ratio = 0.03;
            (Num::Int(0), "warmup_ratio 0.03 passed through".to_string())
        };
        let mut rule = rule;
        if ratio > 0.0 && !w.truthy() {
            w = Num::Float(ratio);
        }
        if num::cmp(w, Num::Int(1)).is_eq() {
            w = Num::Int(2);
            rule.push_str(" → 1 becomes 2");
        }
        // transformers 5 get_warmup_steps: int(w) if w >= 1 else ceil(num_training_steps * w).
        let used = if num::cmp(w, Num::Int(1)).is_ge() {
            num::int_of(w.to_f64())
        } else if !w.truthy() {
            Ok(Num::Int(0)) // ceil(anything × 0), whatever max_steps the Trainer ends up with
        } else if trainer_max.to_f64() > 0.0 {
            num::mul(trainer_max, w).and_then(|p| num::ceil(p.to_f64()))
        } else {
            return;
        };
        let Ok(used) = used else { return };
        self.r.set(Output::WarmupSteps, used);
        self.r.explain(
            Output::WarmupSteps,
            "axolotl: warmup_steps, else int(warmup_ratio × total_num_steps), else min(int(0.03 × total_num_steps), 100); 1 → 2; \
             transformers: a value below 1 is a ratio of max_steps (ceil)",
            format!("warmup_steps = {rule}; the Trainer uses {}", used.raw()),
        );
    }

    /// normalize_config's `saves_per_epoch` / `evals_per_epoch` fractions, then transformers'
    /// `compute_steps`: `ceil(max_steps × fraction)`.
    fn save_eval(&mut self, trainer_max: Option<Num>, epochs: Option<f64>) {
        let i = self.i;
        let val = i.val_set_size.or(0.0);
        let eval_dataset = val.map(|v| v != 0.0);
        if eval_dataset == Some(false) && i.evals_per_epoch.given().is_some_and(|n| n > 0) {
            self.r.diag(
                Field::EvalsPerEpoch,
                Level::Warning,
                "evals_per_epoch is ignored without val_set_size: axolotl evaluates only with an eval split (eval_strategy \"no\")",
            );
        }
        let Some(e) = epochs else { return };
        let plans = [
            (
                Field::SavesPerEpoch,
                Output::SaveSteps,
                i.saves_per_epoch,
                Some(true),
                "save_steps",
                "Saving at training end only.",
            ),
            (
                Field::EvalsPerEpoch,
                Output::EvalSteps,
                i.evals_per_epoch,
                eval_dataset,
                "eval_steps",
                "Skipping evaluations.",
            ),
        ];
        for (field, out, per_epoch, enabled, key, invalid_tail) in plans {
            let Some(n) = per_epoch.given().filter(|&n| n > 0) else {
                continue;
            };
            if enabled != Some(true) {
                continue;
            }
            let frac = 1.0 / (n as f64 * e);
            if frac > 1.0 {
                self.r.diag(
                    field,
                    Level::Warning,
                    format!(
                        "axolotl: \u{201c}Invalid value for {key} ({}) from {}s_per_epoch and/or num_epochs. {invalid_tail}\u{201d}",
                        num::float_repr(frac),
                        key.trim_end_matches("_steps"),
                    ),
                );
                continue;
            }
            if frac == 1.0 {
                self.r.diag(
                    field,
                    Level::Note,
                    format!("1 / ({n} × {}) is exactly 1: axolotl leaves {key} unset, so the default strategy applies", num::float_repr(e)),
                );
                continue;
            }
            let Some(m) = trainer_max.filter(|m| m.to_f64() > 0.0) else {
                continue;
            };
            let Ok(steps) = num::mul(m, Num::Float(frac)).and_then(|p| num::ceil(p.to_f64()))
            else {
                continue;
            };
            self.r.set(out, steps);
            self.r.explain(
                out,
                format!("{key} = 1 / ({}s_per_epoch × num_epochs), then the Trainer's ceil(max_steps × fraction)", key.trim_end_matches("_steps")),
                format!("{key} = ceil({} × {}) = {}", m.raw(), num::float_repr(frac), steps.raw()),
            );
        }
    }
}

/// Where a step count goes and by which release's formula.
#[derive(Clone, Copy)]
struct StepCtx {
    /// `total_num_steps` (main release) or `legacy_total_num_steps` (the comparison).
    out: Output,
    /// Whether this is the main release (which reports at the fields and sets steps_per_epoch).
    main: bool,
    /// 0.14.0's extra `(context_parallel_size, tensor_parallel_size)` factor.
    extra: Option<(u64, u64)>,
}

/// A step count and the steps in one pass over the data.
#[derive(Clone, Copy, Debug, PartialEq)]
struct StepCount {
    total: Num,
    per_epoch: Num,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ids_round_trip_and_match_releases() {
        for r in RELEASES {
            let v = Version::from_id(r.id).expect(r.id);
            assert_eq!(v.id(), r.id);
            assert_ne!(v.other(), v);
            assert!(RELEASES.iter().any(|r| r.id == v.other().id()));
        }
        assert_eq!(Version::from_id("0.16.0"), None);
    }

    /// A refusal is data: axolotl's own words, what dpcalc adds, rendered by `Refusal::message`.
    #[test]
    fn a_refusal_is_data() {
        let mut raw = RawInputs::default();
        raw.set(Field::WorldSize, "6");
        raw.set(Field::TensorParallelSize, "4");
        raw.set(Field::MicroBatchSize, "2");
        let r = compute(&raw);
        let d = r
            .diags_for(Field::WorldSize)
            .find(|d| d.level == Level::Error)
            .expect("an error at world_size");
        let refusal = d.refusal.as_ref().expect("the error is a refusal");
        assert_eq!(
            refusal.says,
            "ParallelismConfig total_size (4) does not match num_processes (6). \
             Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size."
        );
        assert_eq!(refusal.by, "accelerate refuses the launch");
        assert!(
            refusal.fix.contains("Nearest valid: world_size 4 or 8"),
            "{}",
            refusal.fix
        );
        assert_eq!(d.message, refusal.message());

        // a validation error of the main release, at its field
        let mut raw = RawInputs::default();
        raw.set(Field::GradientAccumulationSteps, "4");
        raw.set(Field::BatchSize, "16");
        let r = compute(&raw);
        let d = r.diags_for(Field::BatchSize).next().unwrap();
        let refusal = d.refusal.as_ref().unwrap();
        assert_eq!(
            refusal.says,
            "please set only one of gradient_accumulation_steps or batch_size"
        );
        assert_eq!(
            d.message,
            "axolotl 0.19.0 refuses this config: \u{201c}please set only one of \
             gradient_accumulation_steps or batch_size\u{201d}."
        );
    }
}
