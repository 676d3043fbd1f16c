//! Megatron-LM: megatron-core 0.19.2 with the Megatron-LM training code its wheel ships (the
//! default: the ramp-up is parsed and ignored, with a warning here, `--step-batch-size-schedule`, the eval batch check,
//! GTP weight shards), megatron-core 0.16.1 (what links without `version=` mean: constant
//! calculator and the old `--rampup-batch-size`, both active) and Megatron-LM HEAD `d98e8a6`
//! (ramp-up deprecated and ignored with a warning; `--step-batch-size-schedule` instead).
//!
//! Mirrors, in Megatron's order of execution:
//! - `megatron/training/arguments.py::validate_args`: `total_model_size = TP × PP × CP` (0.19.2:
//!   `× gtp_weight_remat_size`, `tensor_parallel_num_weight_shards // TP` from
//!   `core/model_parallel_config.py::resolve_tensor_parallel_weight_shards`, lines 410-446) must
//!   divide the world size, `data_parallel_size = world // total_model_size`, `--micro-batch-size`
//!   required and positive, `--global-batch-size` defaulting to `micro_batch_size ×
//!   data_parallel_size` (0.19.2: also beside a schedule, which refuses an explicit one; lines
//!   676-687), 0.19.2's eval batch (`eval_global_batch_size % (eval_micro_batch_size ×
//!   data_parallel_size)`, lines 689-696), the sequence against `2 × CP` (line 1296), the sequence
//!   length a schedule needs (line 1310), `--num-experts` with expert parallelism (every release:
//!   0.16.1 line 1026, 0.19.2 line 1601, HEAD line 1656; the typed count, else the named preset's),
//!   and the iteration-based / sample-based assertions (`train_iters` against `train_samples`, and
//!   the matching decay and warmup options);
//! - `megatron/core/parallel_state.py::initialize_model_parallel`: the same divisibility as a
//!   `RuntimeError`, and the separate expert grid `expert_tensor × expert_model × pipeline`
//!   (`--expert-tensor-parallel-size` defaults to TP; EP is not in the data-parallel size);
//! - `megatron/training/global_vars.py::set_global_variables` (0.19.2: no ramp-up passed on, the
//!   calculator's data-parallel size is `data_parallel_size × gtp_weight_remat_size`) and
//!   `megatron/core/num_microbatches_calculator.py`: `ConstantNumMicroBatchesCalculator` (with and
//!   without `decrease_batch_size_if_needed`), `RampupBatchsizeNumMicroBatchesCalculator` (0.16.1)
//!   and, at HEAD and 0.19.2, `StepBatchsizeNumMicroBatchesCalculator` with its schedule parser
//!   (thresholds in tokens, `// seq_length`);
//! - `megatron/training/training.py`: `update_train_iters` (floor for a constant batch, from the
//!   configured `--global-batch-size` also when the batch is decreased; the loops for the ramp-up
//!   and the schedule), `setup_model_and_optimizer`'s `num_microbatches >= 1` (0.19.2), the training
//!   loop's per-iteration checks (0.19.2: the microbatch count may not decrease, then divisibility),
//!   and `get_optimizer_param_scheduler` (warmup in samples; with a schedule at 0.19.2 the
//!   iteration-based lengths count `args.global_batch_size = mbs × dp`; the decay is
//!   `--lr-decay-iters` × that batch or `--lr-decay-samples`, by default the whole run, and a
//!   warmup fraction is of it) with `OptimizerParamScheduler`'s `lr_decay_steps > 0` and
//!   `lr_warmup_steps < lr_decay_steps`.
//!
//! Python's float steps are kept in the source's order (`int(consumed / (samples / increments))`).
//! Checked against runs of Megatron's own code: `tests/fixtures/megatron.txt` (command
//! `megatron19-1` for 0.19.2; `megatron19-27` for `--lr-decay-iters`/`--lr-decay-samples`, the decay
//! length a warmup fraction is of, and the ramp-up 0.19.2 ignores); the expert check on every
//! mixture-of-experts preset at each release: `megatron-moe-0.19.2`, `megatron-moe-0.16.1`,
//! `megatron-moe-head`. Not modelled:
//! `--expert-tensor-parallel-num-weight-shards` (taken as unset), HEAD's
//! `gtp_weight_remat_size` (taken as 1), and before 0.19.2 `--expert-tensor-parallel-size` (taken
//! as TP) and the eval batch (ignored, with a note).
//!
//! One file per stage: this file holds the release table, the form, the typed inputs and `Calc::run`
//! (the stages in order); `grid.rs`, `batch.rs`, `steps.rs` and `schedule.rs` (warmup and tokens)
//! hold each stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num};
use crate::calc::parse::{self, Reader};
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};
use std::cmp::Ordering;

mod batch;
mod grid;
mod schedule;
mod steps;

/// The releases dpcalc models with the rules of each, newest (the default) first.
const TABLE: ReleaseTable<Version, 3> = [
    (
        Release {
            id: "0.19.2",
            label: "megatron-core 0.19.2 (ramp-up ignored, step schedule, eval batch)",
        },
        Version::Core0192,
    ),
    (
        Release {
            id: "0.16.1",
            label: "megatron-core 0.16.1 (ramp-up active)",
        },
        Version::Core0161,
    ),
    (
        Release {
            id: "head",
            label: "Megatron-LM HEAD d98e8a6 (step schedule)",
        },
        Version::Head,
    ),
];

/// The releases dpcalc models, newest (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

/// Which Megatron's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// megatron-core 0.16.1 and the Megatron-LM training code of its time.
    Core0161,
    /// Megatron-LM HEAD `d98e8a6`.
    Head,
    /// megatron-core 0.19.2 with the Megatron-LM training code its wheel ships.
    Core0192,
}

impl Version {
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    pub fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
    }

    /// [`Version::at`], under the name the fixture tests call.
    pub fn from_id(id: &str) -> Version {
        Version::at(id)
    }
}

/// The form.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::TensorModelParallelSize,
            Field::PipelineModelParallelSize,
            Field::ContextParallelSize,
            Field::ExpertModelParallelSize,
            Field::ExpertTensorParallelSize,
            Field::NumExperts,
            Field::TensorParallelNumWeightShards,
        ],
    ),
    (
        "Batch",
        &[
            Field::MicroBatchSize,
            Field::GlobalBatchSize,
            Field::DecreaseBatchSizeIfNeeded,
            Field::RampupBatchSize,
            Field::StepBatchSizeSchedule,
            Field::EvalGlobalBatchSize,
            Field::EvalMicroBatchSize,
        ],
    ),
    (
        "Training length",
        &[
            Field::TrainIters,
            Field::TrainSamples,
            Field::SeqLength,
            Field::LrDecayIters,
            Field::LrDecaySamples,
            Field::LrWarmupIters,
            Field::LrWarmupFraction,
            Field::LrWarmupSamples,
        ],
    ),
    (
        "Model & memory",
        &[
            Field::ModelId,
            Field::UseDistributedOptimizer,
            Field::NumDistributedOptimizerInstances,
            Field::DeferEmbeddingWgradCompute,
            Field::WgradDeferralLimit,
            Field::SequenceParallel,
            Field::RecomputeGranularity,
            Field::RecomputeMethod,
            Field::RecomputeNumLayers,
            Field::NumLayersPerVirtualPipelineStage,
            Field::NumVirtualStagesPerPipelineRank,
            Field::MicrobatchGroupSizePerVirtualPipelineStage,
            Field::DecoderFirstPipelineNumLayers,
            Field::DecoderLastPipelineNumLayers,
            Field::AccountForEmbeddingInPipelineSplit,
            Field::AccountForLossInPipelineSplit,
            Field::HiddenDropout,
            Field::TransformerImpl,
            Field::AttentionBackend,
            Field::Fp8Format,
            Field::OverlapGradReduce,
            Field::OverlapParamGather,
            Field::TpCommOverlap,
        ],
    ),
    (
        crate::calc::field::ARCHITECTURE_TITLE,
        &[
            Field::NumLayers,
            Field::HiddenSize,
            Field::FfnHiddenSize,
            Field::ModelNumAttentionHeads,
            Field::GroupQueryAttention,
            Field::NumQueryGroups,
            Field::KvChannels,
            Field::VocabSize,
            Field::MakeVocabSizeDivisibleBy,
            Field::Swiglu,
            Field::DisableBiasLinear,
            Field::Normalization,
            Field::QkLayernorm,
            Field::PositionEmbeddingType,
            Field::MaxPositionEmbeddings,
            Field::UntieEmbeddingsAndOutputWeights,
            Field::MoeRouterTopk,
            Field::MoeFfnHiddenSize,
            Field::MultiLatentAttention,
            Field::QLoraRank,
            Field::KvLoraRank,
            Field::QkHeadDim,
            Field::QkPosEmbHeadDim,
            Field::VHeadDim,
        ],
    ),
];

/// The results, in page order.
pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::ExpertDataParallelSize,
    Output::GlobalBatchSize,
    Output::RunningGlobalBatchSize,
    Output::NumMicrobatches,
    Output::GradientAccumulationSteps,
    Output::InitialGlobalBatchSize,
    Output::InitialNumMicrobatches,
    Output::RampupSamplesPerIncrement,
    Output::FullBatchIteration,
    Output::TrainIters,
    // the same value under the name every framework's page uses for its step count
    Output::MaxSteps,
    Output::LrWarmupSteps,
    Output::WarmupSteps,
    Output::TokensPerStep,
];

/// The inputs an embedded view always shows.
pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::TensorModelParallelSize,
    Field::PipelineModelParallelSize,
    Field::ContextParallelSize,
    Field::MicroBatchSize,
    Field::GlobalBatchSize,
    Field::TrainIters,
    Field::TrainSamples,
    Field::SeqLength,
];

/// Megatron's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => ("Data-parallel size", "data_parallel_size"),
        Output::GlobalBatchSize => (
            "Configured global batch (--global-batch-size)",
            "args.global_batch_size",
        ),
        Output::RunningGlobalBatchSize => (
            "Global batch trained per step (running)",
            "get_current_running_global_batch_size()",
        ),
        Output::NumMicrobatches => (
            "Microbatches per step (full batch)",
            "get_num_microbatches()",
        ),
        Output::MaxSteps => ("Optimizer steps the run takes", "max_steps = train_iters"),
        Output::GradientAccumulationSteps => (
            "Gradient accumulation (microbatches per step)",
            "num_microbatches",
        ),
        Output::WarmupSteps => ("Warmup (optimizer steps)", "lr_warmup_steps ÷ batch"),
        Output::TokensPerStep => ("Token slots per step", "global batch × seq_length"),
        // the model stage's (a first view computes none of it)
        #[cfg(not(feature = "first"))]
        Output::NumParameters => (
            "Parameters (Megatron's GPTModel; a preset's: transformers num_parameters())",
            "num_parameters",
        ),
        _ => return None,
    })
}

/// The inputs, typed. Absent fields take Megatron-LM's argparse defaults when used.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub cluster: ClusterInputs,
    pub tp: Param<u64>,
    pub pp: Param<u64>,
    pub cp: Param<u64>,
    pub ep: Param<u64>,
    pub etp: Param<u64>,
    /// `--num-experts`: as typed (also when unreadable: the error stays at the field), else the
    /// routed experts of the preset the link names, which the model stage passes Megatron too
    /// (`parse::model::preset_experts`).
    pub num_experts: Param<u64>,
    /// The preset `num_experts` is taken from (`None`: typed, or no experts at all).
    pub experts_of: Option<&'static str>,
    pub weight_shards: Param<u64>,
    pub micro_batch_size: Param<u64>,
    pub global_batch_size: Param<i64>,
    pub rampup_batch_size: Param<String>,
    pub step_batch_size_schedule: Param<String>,
    pub decrease_batch_size_if_needed: Param<bool>,
    pub train_iters: Param<u64>,
    pub train_samples: Param<u64>,
    pub seq_length: Param<u64>,
    pub max_position_embeddings: Param<u64>,
    pub lr_decay_iters: Param<u64>,
    pub lr_decay_samples: Param<u64>,
    pub lr_warmup_iters: Param<u64>,
    pub lr_warmup_fraction: Param<f64>,
    pub lr_warmup_samples: Param<u64>,
    pub eval_global_batch_size: Param<i64>,
    pub eval_micro_batch_size: Param<i64>,
}

impl Inputs {
    /// Parses every field; unreadable ones become [`Param::Invalid`] with an error at the field.
    pub fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        let (num_experts, experts_of) = match (
            r.count(Field::NumExperts),
            parse::model::preset_experts(raw, Field::ModelId),
        ) {
            (Param::Absent, Some((id, n))) => (Param::Given(n), Some(id)),
            (typed, _) => (typed, None),
        };
        Inputs {
            cluster: ClusterInputs::read(&mut r),
            tp: r.count(Field::TensorModelParallelSize),
            pp: r.count(Field::PipelineModelParallelSize),
            cp: r.count(Field::ContextParallelSize),
            ep: r.count(Field::ExpertModelParallelSize),
            etp: r.count(Field::ExpertTensorParallelSize),
            num_experts,
            experts_of,
            weight_shards: r.count(Field::TensorParallelNumWeightShards),
            micro_batch_size: r.count(Field::MicroBatchSize),
            global_batch_size: r.int(Field::GlobalBatchSize),
            rampup_batch_size: r.text(Field::RampupBatchSize),
            step_batch_size_schedule: r.text(Field::StepBatchSizeSchedule),
            decrease_batch_size_if_needed: r.flag(Field::DecreaseBatchSizeIfNeeded),
            train_iters: r.count(Field::TrainIters),
            train_samples: r.count(Field::TrainSamples),
            seq_length: r.count(Field::SeqLength),
            max_position_embeddings: r.count(Field::MaxPositionEmbeddings),
            lr_decay_iters: r.count(Field::LrDecayIters),
            lr_decay_samples: r.count(Field::LrDecaySamples),
            lr_warmup_iters: r.count(Field::LrWarmupIters),
            lr_warmup_fraction: r.real(Field::LrWarmupFraction),
            lr_warmup_samples: r.count(Field::LrWarmupSamples),
            eval_global_batch_size: r.int(Field::EvalGlobalBatchSize),
            eval_micro_batch_size: r.int(Field::EvalMicroBatchSize),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; an unknown id gets the
/// default's, [`Version::at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    compute(Version::at(release), raw)
}

/// Computes everything for one set of inputs.
pub fn compute(version: Version, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let mut i = Inputs::parse(raw, &mut report);
    // 0.19.2's argparse passes a blank `--step-batch-size-schedule " "` on as a (blank) schedule
    if version == Version::Core0192
        && i.step_batch_size_schedule == Param::Absent
        && !raw.get(Field::StepBatchSizeSchedule).is_empty()
    {
        i.step_batch_size_schedule = Param::Given(String::new());
    }
    Calc {
        inputs: i,
        version,
        report: &mut report,
    }
    .run();
    report
}

/// The most batch-size changes dpcalc follows one by one (each costs a few float divisions).
const MAX_SEGMENTS: u64 = 200_000;

/// Python floats hold integers exactly below this.
const EXACT_FLOAT: u128 = 1 << 53;

/// The global batch over the run, as the calculator sees it (`current_global_batch_size` as a
/// function of the samples consumed so far).
#[derive(Clone, Debug, PartialEq)]
enum Sched {
    Constant {
        gbs: u128,
    },
    /// `RampupBatchsizeNumMicroBatchesCalculator`: `per` is `rampup_samples_per_increment`.
    Ramp {
        start: u128,
        inc: u128,
        samples: u128,
        per: f64,
        gbs: u128,
    },
    /// `StepBatchsizeNumMicroBatchesCalculator`: `(threshold in samples, batch)`, sorted, first 0.
    Step {
        levels: Vec<(u128, u128)>,
    },
}

impl Sched {
    fn final_gbs(&self) -> u128 {
        match self {
            Sched::Constant { gbs } | Sched::Ramp { gbs, .. } => *gbs,
            Sched::Step { levels } => levels.last().map_or(0, |l| l.1),
        }
    }

    fn varying(&self) -> bool {
        !matches!(self, Sched::Constant { .. })
    }

    /// `int(consumed_samples / self.rampup_samples_per_increment)` (consumed ≤ samples < 2^53).
    fn ramp_level(c: u128, per: f64) -> u128 {
        (c as f64 / per) as u128
    }

    /// The calculator's `current_global_batch_size` after `update(consumed)`.
    fn current(&self, c: u128) -> u128 {
        match self {
            Sched::Constant { gbs } => *gbs,
            Sched::Ramp {
                start,
                inc,
                samples,
                per,
                gbs,
            } => {
                if c > *samples {
                    *gbs
                } else {
                    let steps = Sched::ramp_level(c, *per);
                    // Never above gbs (Megatron asserts it; float rounding cannot get there).
                    steps
                        .checked_mul(*inc)
                        .and_then(|s| s.checked_add(*start))
                        .map_or(*gbs, |b| b.min(*gbs))
                }
            }
            Sched::Step { levels } => {
                // _get_batch_size_for_samples: the last threshold ≤ consumed (levels are sorted,
                // the first threshold is 0), found by bisection so a long schedule stays cheap.
                let k = levels.partition_point(|l| l.0 <= c);
                levels[k.saturating_sub(1)].1
            }
        }
    }

    /// The smallest consumed count above `c` where the batch may change (`None`: never again).
    fn next_change(&self, c: u128) -> Option<u128> {
        match self {
            Sched::Constant { .. } => None,
            Sched::Ramp { samples, per, .. } => {
                if c > *samples {
                    return None;
                }
                let level = Sched::ramp_level(c, *per);
                // Binary search: the level is monotone in the consumed count.
                let (mut lo, mut hi) = (c + 1, *samples + 1);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if Sched::ramp_level(mid, *per) > level {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                Some(lo)
            }
            Sched::Step { levels } => levels
                .get(levels.partition_point(|l| l.0 <= c))
                .map(|l| l.0),
        }
    }
}

/// Why a walk over the iterations stopped short.
#[derive(Debug)]
enum WalkError {
    TooLong,
    TooLarge,
}

/// Runs Megatron's loop `consumed += current(consumed)` from 0, one batch-size segment at a
/// time: while `consumed < limit` (when given) and for at most `max_iters` iterations (when
/// given). `visit(consumed, batch, iterations so far)` is called at the start of each segment
/// and stops the walk by returning false. Returns `(consumed, iterations)`.
fn walk(
    s: &Sched,
    limit: Option<u128>,
    max_iters: Option<u128>,
    mut visit: impl FnMut(u128, u128, u128) -> bool,
) -> Result<(u128, u128), WalkError> {
    let (mut c, mut iters) = (0u128, 0u128);
    let mut segments = 0u64;
    loop {
        if limit.is_some_and(|l| c >= l) || max_iters.is_some_and(|m| iters >= m) {
            return Ok((c, iters));
        }
        let cur = s.current(c);
        if !visit(c, cur, iters) {
            return Ok((c, iters));
        }
        segments += 1;
        if segments > MAX_SEGMENTS {
            return Err(WalkError::TooLong);
        }
        let end = match (s.next_change(c), limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Iterations whose start stays below `end` (all in this segment).
        let mut n = match end {
            Some(e) => (e - c).div_ceil(cur),
            None => match max_iters {
                Some(m) => m - iters,
                None => return Err(WalkError::TooLong),
            },
        };
        if let Some(m) = max_iters {
            n = n.min(m - iters);
        }
        c = n
            .checked_mul(cur)
            .and_then(|x| x.checked_add(c))
            .ok_or(WalkError::TooLarge)?;
        iters += n;
    }
}

/// The data-parallel layout.
#[derive(Clone, Copy, Debug)]
struct DataParallel {
    /// `args.data_parallel_size`: the replicate degree (0.19.2: without the GTP axis).
    dp: u128,
    /// `gtp_weight_remat_size` (0.19.2; 1 before): the calculator's data-parallel size is dp × this.
    gtp: u128,
}

/// The batch plan after the calculator is built.
struct Calculator {
    sched: Sched,
    mbs: u128,
    /// The calculator's data-parallel size (0.19.2: `data_parallel_size × gtp_weight_remat_size`).
    dp: u128,
    /// `args.data_parallel_size` (the replicate degree; the same as `dp` without GTP).
    dp_rep: u128,
    /// `micro_batch_size × data_parallel_size` (the calculator's).
    m: u128,
    decrease: bool,
    /// `args.global_batch_size` (None at HEAD with a schedule; 0.19.2 sets it to
    /// `micro_batch_size × data_parallel_size` then).
    gbs_arg: Option<u128>,
}

impl Calculator {
    /// `current_running_global_batch_size` for a current batch `b`.
    fn running(&self, b: u128) -> u128 {
        if self.decrease {
            b / self.m * self.m
        } else {
            b
        }
    }
}

/// Iteration-based or sample-based, after `validate_args`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Iters(u64),
    Samples(u64),
}

/// The rules at work: the typed inputs, the release, and the report being filled.
struct Calc<'a> {
    inputs: Inputs,
    version: Version,
    report: &'a mut Report,
}

/// Nearest multiples of `m` around `x` (for "nearest valid global batch sizes").
fn nearest_multiples(x: u128, m: u128) -> String {
    let below = x / m * m;
    let above = below.checked_add(m);
    let mut v: Vec<String> = Vec::new();
    if below >= m {
        v.push(below.to_string());
    }
    if let Some(a) = above {
        v.push(a.to_string());
    }
    v.join(" or ")
}

/// A Python `int()` of one ramp-up value: optional sign, digits, single `_` between digits.
fn python_int(token: &str) -> Option<i128> {
    let (neg, digits) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    let b = digits.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() || !b[b.len() - 1].is_ascii_digit() {
        return None;
    }
    for w in b.windows(2) {
        if w[0] == b'_' && w[1] == b'_' {
            return None;
        }
    }
    if !b.iter().all(|c| c.is_ascii_digit() || *c == b'_') {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let v: i128 = clean.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Why a schedule number could not be read, in Python's words.
enum NumParse {
    Bad(String),
    TooLarge,
}

/// `StepBatchsizeNumMicroBatchesCalculator._parse_numeric_value`:
/// `int(float(value_str) * multiplier)` after stripping a K/M/B/T suffix.
fn schedule_number(text: &str) -> Result<i128, NumParse> {
    let upper = text.trim().to_uppercase();
    let (body, mult) = match upper.chars().last() {
        Some('T') => (&upper[..upper.len() - 1], 1e12),
        Some('B') => (&upper[..upper.len() - 1], 1e9),
        Some('M') => (&upper[..upper.len() - 1], 1e6),
        Some('K') => (&upper[..upper.len() - 1], 1e3),
        _ => (upper.as_str(), 1.0),
    };
    // Python's float() takes underscores between digits; Rust's parser does not.
    let bytes = body.as_bytes();
    let underscores_ok = bytes.iter().enumerate().all(|(k, &c)| {
        c != b'_'
            || (k > 0
                && k + 1 < bytes.len()
                && bytes[k - 1].is_ascii_digit()
                && bytes[k + 1].is_ascii_digit())
    });
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    let plain = !clean.is_empty()
        && clean.bytes().all(|c| {
            c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'E') || c.is_ascii_alphabetic()
        });
    let x: f64 = match clean.parse::<f64>() {
        Ok(x) if underscores_ok && plain => x,
        _ => {
            return Err(NumParse::Bad(format!(
                "ValueError: could not convert string to float: '{}'",
                crate::calc::parse::shorten(body.trim())
            )))
        }
    };
    let v = x * mult;
    if v.is_nan() {
        return Err(NumParse::Bad(
            "ValueError: cannot convert float NaN to integer".into(),
        ));
    }
    if v.is_infinite() {
        return Err(NumParse::Bad(
            "OverflowError: cannot convert float infinity to integer".into(),
        ));
    }
    let t = v.trunc();
    if t.abs() >= 1.0e38 {
        return Err(NumParse::TooLarge);
    }
    Ok(t as i128)
}

impl Calc<'_> {
    /// The stages, in Megatron-LM's order: `validate_args`' layout checks and
    /// `initialize_model_parallel` (grid), the num-microbatches calculator (batch),
    /// `update_train_iters` and the training loop's batch check (steps), the learning-rate
    /// scheduler (schedule), tokens.
    fn run(mut self) {
        self.report.plan.seq_len = self.inputs.seq_length.positive_or(None);
        self.report.enter(Stage::Grid);
        let grid = self.grid();
        self.report.enter(Stage::Batch);
        let mbs = self.micro_batch();
        let plan = match (grid, mbs) {
            (Some(g), Some(m)) if self.version == Version::Core0192 => self.calculator_0192(g, m),
            (Some(g), Some(m)) => self.calculator(g, m),
            _ => None,
        };
        if let Some(p) = &plan {
            self.batch_outputs(p);
        }
        self.report.enter(Stage::Steps);
        let mode = self.mode();
        let iters = match (&plan, mode) {
            (Some(p), Some(m)) => self.train_iters(p, m),
            _ => None,
        };
        if let (Some(p), Some(n)) = (&plan, iters) {
            if self.version == Version::Core0192 {
                self.loop_checks(p, n);
            } else {
                self.consistency(p, n);
            }
        }
        self.report.enter(Stage::Schedule);
        if let (Some(p), Some(m)) = (&plan, mode) {
            self.warmup(p, m);
        }
        self.report.enter(Stage::Tokens);
        if let Some(p) = &plan {
            self.tokens(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_numbers_round_like_python() {
        // Python: int(float("2.01") * 1000) == 2009, int(float("1.005") * 1000) == 1004
        assert!(matches!(schedule_number("2.01K"), Ok(2009)));
        assert!(matches!(schedule_number("1.005k"), Ok(1004)));
        assert!(matches!(schedule_number("4.35K"), Ok(4350)));
        assert!(matches!(schedule_number("1.1k"), Ok(1100)));
        assert!(matches!(schedule_number("250B"), Ok(250_000_000_000)));
        assert!(matches!(schedule_number("1_000"), Ok(1000)));
        assert!(matches!(schedule_number("8.7"), Ok(8)));
        assert!(matches!(schedule_number("-5"), Ok(-5)));
        assert!(matches!(schedule_number("B"), Err(NumParse::Bad(_))));
        assert!(matches!(schedule_number("1__0"), Err(NumParse::Bad(_))));
        assert!(matches!(schedule_number("inf"), Err(NumParse::Bad(_))));
        assert!(matches!(schedule_number("nan"), Err(NumParse::Bad(_))));
    }

    #[test]
    fn python_ints() {
        assert_eq!(python_int("16"), Some(16));
        assert_eq!(python_int("-16"), Some(-16));
        assert_eq!(python_int("1_000"), Some(1000));
        assert_eq!(python_int("1e3"), None);
        assert_eq!(python_int("_1"), None);
        assert_eq!(python_int("1.0"), None);
    }
}
