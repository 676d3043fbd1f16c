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
//!
//! One file per stage: this file holds the release table, the form, the typed inputs and `Calc::run`
//! (the stages in order); `grid.rs`, `batch.rs`, `steps.rs` and `schedule.rs` (what the Trainer
//! receives: `max_steps`, warmup, save and eval) hold each stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num, NumError};
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};

mod batch;
mod grid;
mod schedule;
mod steps;

/// The inputs, typed. Absent fields take axolotl's schema defaults when used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    pub cluster: ClusterInputs,
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
            cluster: ClusterInputs::read(&mut r),
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
            Field::Bf16,
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
    // the epochs as the rules read them: a link leaves axolotl's default 1 out (its
    // `link_default`), so an absent num_epochs is that 1, as a given one is
    (report.plan.rows, report.plan.epochs) = (i.num_samples.given(), i.num_epochs.or(1.0));
    let t = Texts::parse(raw, &mut report);
    Calc {
        inputs: i,
        texts: t,
        report: &mut report,
        main,
    }
    .run();
    report
}

/// The rules at work: the typed inputs, the texts some checks read as written, and the report
/// being filled.
struct Calc<'a> {
    inputs: Inputs,
    texts: Texts,
    report: &'a mut Report,
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
        self.report.plan.seq_len = self
            .inputs
            .sequence_len
            .positive_or(Some(DEFAULT_SEQUENCE_LEN));
        self.report.enter(Stage::Grid);
        let cluster = self.cluster();
        self.parallel_checks(cluster.as_ref());
        self.report.enter(Stage::Batch);
        let batch = self.batch(main, cluster.as_ref());
        let other_batch = self.batch(other, cluster.as_ref());
        self.report.enter(Stage::Steps);
        let epochs = self.epochs();
        let steps = self.steps(main, batch.as_ref(), cluster.as_ref(), epochs);
        let other_steps = self.steps(other, other_batch.as_ref(), cluster.as_ref(), epochs);
        if let (Some(c), Some(l)) = (&batch, &other_batch) {
            self.compare(c.global, l.global, steps, other_steps);
        }
        self.cap_other(other_steps);
        if let Some(b) = &batch {
            self.report.enter(Stage::Tokens);
            self.tokens(b);
            self.report.enter(Stage::Steps);
        }
        let trainer_max = self.max_steps(steps, batch.as_ref(), epochs);
        self.report.enter(Stage::Schedule);
        self.warmup(steps.map(|s| s.total), trainer_max);
        self.save_eval(trainer_max, epochs);
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
