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
//!   length a schedule needs (line 1310) and `--num-experts` with expert parallelism (line 1601),
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
//! length a warmup fraction is of, and the ramp-up 0.19.2 ignores). Not modelled:
//! `--expert-tensor-parallel-num-weight-shards` (taken as unset), HEAD's
//! `gtp_weight_remat_size` (taken as 1), and before 0.19.2 `--expert-tensor-parallel-size` (taken
//! as TP), `--num-experts` and the eval batch (ignored, with a note).

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num};
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};
use std::cmp::Ordering;

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
            Field::SequenceParallel,
            Field::RecomputeGranularity,
            Field::RecomputeMethod,
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
            Field::UntieEmbeddingsAndOutputWeights,
            Field::MoeRouterTopk,
            Field::MoeFfnHiddenSize,
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
        _ => return None,
    })
}

/// The inputs, typed. Absent fields take Megatron-LM's argparse defaults when used.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub nodes: Param<u64>,
    pub gpus_per_node: Param<u64>,
    pub world_size: Param<u64>,
    pub tp: Param<u64>,
    pub pp: Param<u64>,
    pub cp: Param<u64>,
    pub ep: Param<u64>,
    pub etp: Param<u64>,
    pub num_experts: Param<u64>,
    pub weight_shards: Param<u64>,
    pub micro_batch_size: Param<u64>,
    pub global_batch_size: Param<i64>,
    pub rampup_batch_size: Param<String>,
    pub step_batch_size_schedule: Param<String>,
    pub decrease_batch_size_if_needed: Param<bool>,
    pub train_iters: Param<u64>,
    pub train_samples: Param<u64>,
    pub seq_length: Param<u64>,
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
        Inputs {
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
            tp: r.count(Field::TensorModelParallelSize),
            pp: r.count(Field::PipelineModelParallelSize),
            cp: r.count(Field::ContextParallelSize),
            ep: r.count(Field::ExpertModelParallelSize),
            etp: r.count(Field::ExpertTensorParallelSize),
            num_experts: r.count(Field::NumExperts),
            weight_shards: r.count(Field::TensorParallelNumWeightShards),
            micro_batch_size: r.count(Field::MicroBatchSize),
            global_batch_size: r.int(Field::GlobalBatchSize),
            rampup_batch_size: r.text(Field::RampupBatchSize),
            step_batch_size_schedule: r.text(Field::StepBatchSizeSchedule),
            decrease_batch_size_if_needed: r.flag(Field::DecreaseBatchSizeIfNeeded),
            train_iters: r.count(Field::TrainIters),
            train_samples: r.count(Field::TrainSamples),
            seq_length: r.count(Field::SeqLength),
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
        i,
        v: version,
        r: &mut report,
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
struct Grid {
    /// `args.data_parallel_size`: the replicate degree (0.19.2: without the GTP axis).
    dp: u128,
    /// `gtp_weight_remat_size` (0.19.2; 1 before): the calculator's data-parallel size is dp × this.
    gtp: u128,
}

/// The batch plan after the calculator is built.
struct Plan {
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

impl Plan {
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

struct Calc<'a> {
    i: Inputs,
    v: Version,
    r: &'a mut Report,
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
        self.r.plan.seq_len = self.i.seq_length.positive_or(None);
        self.r.enter(Stage::Grid);
        let grid = self.grid();
        self.r.enter(Stage::Batch);
        let mbs = self.micro_batch();
        let plan = match (grid, mbs) {
            (Some(g), Some(m)) if self.v == Version::Core0192 => self.plan_0192(g, m),
            (Some(g), Some(m)) => self.plan(g, m),
            _ => None,
        };
        if let Some(p) = &plan {
            self.batch_outputs(p);
        }
        self.r.enter(Stage::Steps);
        let mode = self.mode();
        let iters = match (&plan, mode) {
            (Some(p), Some(m)) => self.train_iters(p, m),
            _ => None,
        };
        if let (Some(p), Some(n)) = (&plan, iters) {
            if self.v == Version::Core0192 {
                self.loop_checks(p, n);
            } else {
                self.consistency(p, n);
            }
        }
        self.r.enter(Stage::Schedule);
        if let (Some(p), Some(m)) = (&plan, mode) {
            self.warmup(p, m);
        }
        self.r.enter(Stage::Tokens);
        if let Some(p) = &plan {
            self.tokens(p);
        }
    }

    // ---- the parallel layout -------------------------------------------------------------

    /// A model-parallel size: absent is 1; 0 makes Megatron divide by zero.
    fn parallel(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p {
            Param::Given(0) => {
                self.r.refuse(
                    field,
                    Refusal::new(
                        "Megatron's validate_args stops with",
                        "ZeroDivisionError: integer modulo by zero",
                    )
                    .fix(format!("{} must be at least 1.", field.key())),
                );
                None
            }
            p => p.or(1),
        }
    }

    fn grid(&mut self) -> Option<Grid> {
        let i = self.i.clone();
        let new = self.v == Version::Core0192;
        if !new {
            self.unmodelled_keys();
        }
        let ws = cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, self.r);
        let tp = self.parallel(Field::TensorModelParallelSize, i.tp);
        let pp = self.parallel(Field::PipelineModelParallelSize, i.pp);
        let cp = self.parallel(Field::ContextParallelSize, i.cp);
        let ep = self.parallel(Field::ExpertModelParallelSize, i.ep);
        // validate_args: expert_tensor_parallel_size defaults to tensor_model_parallel_size
        let etp = if new {
            match i.etp {
                Param::Given(0) => {
                    self.r.refuse(
                        Field::ExpertTensorParallelSize,
                        Refusal::new(
                            "parallel_state.initialize_model_parallel stops with",
                            "ZeroDivisionError: integer modulo by zero",
                        )
                        .fix("expert_tensor_parallel_size must be at least 1 (or unset: it is then tensor parallel)."),
                    );
                    None
                }
                Param::Given(e) => Some(Some(e as u128)),
                Param::Absent => Some(None),
                Param::Invalid => None,
            }
        } else {
            Some(None)
        };
        let (ws, tp, pp, cp) = (ws?, tp?, pp?, cp?);
        let (ws, tp, pp, cp) = (ws as u128, tp as u128, pp as u128, cp as u128);
        let gtp = if new { self.weight_shards(tp)? } else { 1 };
        let Some(total) = tp
            .checked_mul(pp)
            .and_then(|x| x.checked_mul(cp))
            .and_then(|x| x.checked_mul(gtp))
        else {
            self.r.diag(
                Field::TensorModelParallelSize,
                Level::Error,
                "tensor × pipeline × context parallel size is too large to count",
            );
            return None;
        };
        let (gtp_name, gtp_worked) = if gtp > 1 {
            (" × gtp_weight_remat_size", format!(" × {gtp}"))
        } else {
            ("", String::new())
        };
        if ws % total != 0 {
            let fix = if total <= u64::MAX as u128 {
                cluster::nearest_valid(
                    ws as u64,
                    total as u64,
                    if gtp > 1 {
                        "tensor_model_parallel_size × pipeline_model_parallel_size × context_parallel_size \
                         × gtp_weight_remat_size"
                    } else {
                        "tensor_model_parallel_size × pipeline_model_parallel_size × context_parallel_size"
                    },
                )
            } else {
                String::new()
            };
            self.r.refuse(
                Field::WorldSize,
                Refusal::new(
                    "Megatron-LM refuses this layout in validate_args (arguments.py), before anything else runs",
                    format!(
                        "AssertionError: world size ({ws}) is not divisible by total_model_size \
                         (total_model_size={total})"
                    ),
                )
                .fix(format!(
                    ", where total_model_size = tensor × pipeline × context parallel{gtp_name} = {tp} × {pp} × {cp}{gtp_worked}. \
                     (megatron-core alone, in parallel_state.initialize_model_parallel, raises \
                     \u{201c}RuntimeError: world_size ({ws}) is not divisible by {total}\u{201d}.) {fix}"
                )),
            );
            return None;
        }
        let dp = ws / total;
        self.r.set(Output::DpWorldSize, Num::Int(dp as i128));
        self.r.explain(
            Output::DpWorldSize,
            format!("data_parallel_size = world_size // (tensor × pipeline × context parallel size{gtp_name}); EP is not in it"),
            format!("data_parallel_size = {ws} // ({tp} × {pp} × {cp}{gtp_worked}) = {dp}"),
        );
        if gtp > 1 {
            self.r.diag(
                Field::TensorParallelNumWeightShards,
                Level::Note,
                format!(
                    "gtp_weight_remat_size = tensor_parallel_num_weight_shards // tensor_model_parallel_size = {gtp}: \
                     it counts in the model size, so data_parallel_size ({dp}) is the replicate degree, and the \
                     microbatch calculator is built with data_parallel_size × {gtp} = {} (global_vars.py).",
                    dp * gtp
                ),
            );
        }
        let mut expert_ok = true;
        if new {
            self.cp_sequence(cp);
            expert_ok = self.num_experts(ep);
        }
        if let (Some(ep), Some(etp), true) = (ep, etp, expert_ok) {
            self.expert_grid(ws, etp.unwrap_or(tp), pp, ep as u128, dp);
        }
        self.r.publish_grid(crate::calc::Grid {
            world: ws as u64,
            dp: dp as u64,
            tp: tp as u64,
            cp: cp as u64,
            sp: 1,
            pp: pp as u64,
            ep: ep.unwrap_or(1),
        });
        Some(Grid { dp, gtp })
    }

    /// The keys dpcalc reads for 0.19.2 only: a note when another release is chosen.
    fn unmodelled_keys(&mut self) {
        for f in [
            Field::ExpertTensorParallelSize,
            Field::NumExperts,
            Field::TensorParallelNumWeightShards,
            Field::EvalGlobalBatchSize,
            Field::EvalMicroBatchSize,
        ] {
            let given = match f {
                Field::ExpertTensorParallelSize => self.i.etp.is_given(),
                Field::NumExperts => self.i.num_experts.is_given(),
                Field::TensorParallelNumWeightShards => self.i.weight_shards.is_given(),
                Field::EvalGlobalBatchSize => self.i.eval_global_batch_size.is_given(),
                _ => self.i.eval_micro_batch_size.is_given(),
            };
            if given {
                self.r.diag(
                    f,
                    Level::Note,
                    format!(
                        "dpcalc reads {} for Megatron 0.19.2 only; with this release it is ignored.",
                        f.key()
                    ),
                );
            }
        }
    }

    /// 0.19.2's `resolve_tensor_parallel_weight_shards` (model_parallel_config.py, called by
    /// validate_args): `gtp_weight_remat_size = shards // TP` (1 when unset).
    fn weight_shards(&mut self, tp: u128) -> Option<u128> {
        let s = match self.i.weight_shards {
            Param::Absent => return Some(1),
            Param::Invalid => return None,
            Param::Given(s) => s as u128,
        };
        let f = Field::TensorParallelNumWeightShards;
        let by = "Megatron-LM's validate_args refuses it (resolve_tensor_parallel_weight_shards)";
        if s < tp {
            self.r.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "ValueError: tensor_parallel_num_weight_shards ({s}) must be >= \
                         tensor_model_parallel_size ({tp})."
                    ),
                )
                .fix(format!(
                    "Use a multiple of {tp}, or leave it unset (it is then {tp})."
                )),
            );
            return None;
        }
        if s % tp != 0 {
            self.r.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "ValueError: tensor_parallel_num_weight_shards ({s}) must be divisible by \
                         tensor_model_parallel_size ({tp})."
                    ),
                )
                .fix(format!("Nearest valid: {}.", nearest_multiples(s, tp))),
            );
            return None;
        }
        Some(s / tp)
    }

    /// 0.19.2's validate_args: with context parallelism the sequence splits into 2 × CP chunks.
    fn cp_sequence(&mut self, cp: u128) {
        let Param::Given(seq) = self.i.seq_length else {
            return;
        };
        let seq = seq as u128;
        if cp > 1 && seq % (2 * cp) != 0 {
            self.r.refuse(
                Field::ContextParallelSize,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    "AssertionError: seq-length should be a multiple of 2 * context-parallel-size if \
                     context-parallel-size > 1.",
                )
                .fix(format!(
                    "seq_length {seq} is not a multiple of 2 × {cp} = {}; nearest: {}.",
                    2 * cp,
                    nearest_multiples(seq, 2 * cp)
                )),
            );
        }
    }

    /// 0.19.2's validate_args: expert parallelism needs `--num-experts`, a multiple of it
    /// (`--num-experts 0` counts as unset). Whether parallel_state is reached.
    fn num_experts(&mut self, ep: Option<u64>) -> bool {
        let Some(ep) = ep.filter(|&e| e > 1) else {
            return true;
        };
        let by = "Megatron-LM refuses this in validate_args";
        match self.i.num_experts {
            Param::Absent | Param::Given(0) => {
                self.r.refuse(
                    Field::NumExperts,
                    Refusal::new(
                        by,
                        "AssertionError: num_experts must be non None to use expert model parallelism",
                    )
                    .fix(format!(
                        "Give num_experts (a multiple of expert_model_parallel_size {ep}), or set \
                         expert_model_parallel_size to 1."
                    )),
                );
                false
            }
            Param::Given(n) if n % ep != 0 => {
                self.r.refuse(
                    Field::NumExperts,
                    Refusal::new(
                        by,
                        "AssertionError: Number of experts should be a multiple of expert model parallel_size.",
                    )
                    .fix(format!(
                        "num_experts {n} is not a multiple of expert_model_parallel_size {ep}; nearest: {}.",
                        nearest_multiples(n as u128, ep as u128)
                    )),
                );
                false
            }
            Param::Invalid => false,
            _ => true,
        }
    }
    /// parallel_state: the expert grid `expert_tensor × expert_model × pipeline` must divide too.
    fn expert_grid(&mut self, ws: u128, tp: u128, pp: u128, ep: u128, dp: u128) {
        let Some(grid) = tp.checked_mul(ep).and_then(|x| x.checked_mul(pp)) else {
            self.r.diag(
                Field::ExpertModelParallelSize,
                Level::Error,
                "tensor × expert × pipeline parallel size is too large to count",
            );
            return;
        };
        if ws % grid != 0 {
            let fix = if grid <= u64::MAX as u128 {
                cluster::nearest_valid(
                    ws as u64,
                    grid as u64,
                    "tensor_model_parallel_size × expert_model_parallel_size × pipeline_model_parallel_size",
                )
            } else {
                String::new()
            };
            self.r.refuse(
                Field::ExpertModelParallelSize,
                Refusal::new(
                    "parallel_state.initialize_model_parallel refuses the expert grid",
                    format!(
                        "RuntimeError: world_size ({ws}) is not divisible by \
                         expert_tensor_model_pipeline_parallel size ({grid})"
                    ),
                )
                .fix(format!(
                    "(expert tensor parallel, which defaults to tensor parallel, × expert × pipeline = \
                     {tp} × {ep} × {pp}). {fix}"
                )),
            );
            return;
        }
        let edp = ws / grid;
        self.r
            .set(Output::ExpertDataParallelSize, Num::Int(edp as i128));
        self.r.explain(
            Output::ExpertDataParallelSize,
            "expert_data_parallel_size = world_size // (expert tensor × expert model × pipeline parallel size)",
            format!("expert_data_parallel_size = {ws} // ({tp} × {ep} × {pp}) = {edp}"),
        );
        if ep > 1 {
            self.r.diag(
                Field::ExpertModelParallelSize,
                Level::Note,
                format!(
                    "Expert parallelism does not change the data-parallel size ({dp}) or the batch math; \
                     the experts' own data-parallel groups have {edp} ranks."
                ),
            );
        }
    }

    // ---- the batch -----------------------------------------------------------------------

    fn micro_batch(&mut self) -> Option<u64> {
        match self.i.micro_batch_size {
            Param::Given(0) => {
                self.r.refuse(
                    Field::MicroBatchSize,
                    Refusal::new(
                        "Megatron's validate_args stops with a bare AssertionError at",
                        "assert args.micro_batch_size > 0",
                    )
                    .fix("micro_batch_size must be at least 1."),
                );
                None
            }
            Param::Absent => {
                self.r.diag(
                    Field::MicroBatchSize,
                    Level::Hint,
                    "Megatron-LM requires --micro-batch-size (validate_args asserts it is set); \
                     the values shown assume 1.",
                );
                Some(1)
            }
            p => p.or(1),
        }
    }

    fn plan(&mut self, g: Grid, mbs: u64) -> Option<Plan> {
        let i = self.i.clone();
        let mbs = mbs as u128;
        let dp = g.dp;
        let m = mbs.checked_mul(dp)?;
        let decrease = i.decrease_batch_size_if_needed.or(false)?;
        let head = self.v == Version::Head;

        // The release's own switches: HEAD ignores the ramp-up, 0.16.1 has no schedule.
        let mut ramp = i.rampup_batch_size.clone();
        let mut schedule = i.step_batch_size_schedule.clone();
        if head && matches!(ramp, Param::Given(_)) {
            self.r.diag(
                Field::RampupBatchSize,
                Level::Warning,
                "Megatron-LM HEAD ignores it and only warns: \u{201c}rampup_batch_size is deprecated and will be \
                 removed in a future release. Use step_batch_size_schedule instead.\u{201d} The run uses the step \
                 schedule if one is given, else a constant global batch; for a ramp, write it as a step_batch_size_schedule.",
            );
            ramp = Param::Absent;
        }
        if !head && matches!(schedule, Param::Given(_)) {
            self.r.diag(
                Field::StepBatchSizeSchedule,
                Level::Error,
                "megatron-core 0.16.1 has no step batch-size schedule (it came with Megatron-LM #4411, when \
                 --rampup-batch-size was deprecated): its Megatron-LM does not accept \
                 --step-batch-size-schedule. Choose version head, or use rampup_batch_size.",
            );
            schedule = Param::Absent;
        }
        if ramp == Param::Invalid || schedule == Param::Invalid {
            return None;
        }

        // validate_args: the global batch.
        let gbs_given = self.gbs_given()?;

        if let Param::Given(text) = &schedule {
            if gbs_given.is_some() {
                self.r.refuse(
                    Field::GlobalBatchSize,
                    Refusal::new(
                        "Megatron-LM refuses it together with a schedule",
                        "ValueError: Cannot specify both --step-batch-size-schedule and --global-batch-size",
                    )
                    .fix(
                        "Remove global_batch_size: the schedule's last batch size is the global batch.",
                    ),
                );
                return None;
            }
            if decrease {
                self.r.refuse(
                    Field::DecreaseBatchSizeIfNeeded,
                    Refusal::new(
                        "Megatron-LM refuses it together with a schedule",
                        "ValueError: Cannot specify both --step-batch-size-schedule and \
                         --decrease-batch-size-if-needed",
                    )
                    .fix(
                        "Make every batch size in the schedule a multiple of micro_batch_size × \
                         data_parallel_size instead.",
                    ),
                );
                return None;
            }
            let text = text.clone();
            let levels = self.parse_schedule(&text)?;
            return Some(Plan {
                sched: Sched::Step { levels },
                mbs,
                dp,
                dp_rep: dp,
                m,
                decrease,
                gbs_arg: None,
            });
        }

        let gbs = match gbs_given {
            Some(v) => v,
            None => {
                let v = m;
                self.r.explain(
                    Output::GlobalBatchSize,
                    "global_batch_size defaults to micro_batch_size × data_parallel_size (one microbatch)",
                    format!("global_batch_size = {mbs} × {dp} = {v}"),
                );
                v
            }
        };

        if let Param::Given(text) = &ramp {
            let text = text.clone();
            let sched = self.parse_ramp(&text, gbs, m)?;
            return Some(Plan {
                sched,
                mbs,
                dp,
                dp_rep: dp,
                m,
                decrease,
                gbs_arg: Some(gbs),
            });
        }

        // ConstantNumMicroBatchesCalculator.
        if !self.constant(gbs, mbs, dp, m, decrease) {
            return None;
        }
        Some(Plan {
            sched: Sched::Constant { gbs },
            mbs,
            dp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: Some(gbs),
        })
    }

    /// 0.19.2: validate_args' batch checks (the eval batch first), then the calculator
    /// `global_vars.set_global_variables` builds (no ramp-up: it is parsed and never passed on).
    fn plan_0192(&mut self, g: Grid, mbs: u64) -> Option<Plan> {
        let i = self.i.clone();
        let mbs = mbs as u128;
        let (dp, gtp) = (g.dp, g.gtp);
        let cdp = dp.checked_mul(gtp)?;
        let m = mbs.checked_mul(cdp)?;
        let decrease = i.decrease_batch_size_if_needed.or(false)?;
        let ramp_ok = self.ramp_ignored();
        let schedule = i.step_batch_size_schedule.clone();
        if schedule == Param::Invalid || !ramp_ok {
            return None;
        }
        let gbs_given = self.gbs_given()?;
        if matches!(schedule, Param::Given(_)) && gbs_given.is_some() {
            self.r.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "Megatron-LM's validate_args refuses it together with a schedule (even at its default value)",
                    "ValueError: Cannot specify both --step-batch-size-schedule and --global-batch-size",
                )
                .fix("Remove global_batch_size: the schedule gives the batch at every step."),
            );
            return None;
        }
        let gbs = match gbs_given {
            Some(v) => v,
            None => {
                let v = mbs.checked_mul(dp)?;
                let rule = if matches!(schedule, Param::Given(_)) {
                    "global_batch_size defaults to micro_batch_size × data_parallel_size, also with a schedule \
                     (then it is not a batch the run trains: it is the default eval batch and the unit of \
                     iteration-based warmup and decay)"
                } else {
                    "global_batch_size defaults to micro_batch_size × data_parallel_size (one microbatch)"
                };
                self.r.explain(
                    Output::GlobalBatchSize,
                    rule,
                    format!("global_batch_size = {mbs} × {dp} = {v}"),
                );
                v
            }
        };
        if !self.eval_batch(gbs, mbs, dp, decrease) {
            return None;
        }
        if let Param::Given(text) = &schedule {
            if decrease {
                self.r.refuse(
                    Field::DecreaseBatchSizeIfNeeded,
                    Refusal::new(
                        "megatron-core's _build_num_microbatches_calculator refuses it together with a schedule",
                        "ValueError: Cannot specify both --step-batch-size-schedule and \
                         --decrease-batch-size-if-needed",
                    )
                    .fix(
                        "Make every batch size in the schedule a multiple of micro_batch_size × \
                         data_parallel_size instead.",
                    ),
                );
                return None;
            }
            if !self.i.seq_length.is_given() {
                if self.i.seq_length == Param::Absent {
                    self.r.refuse(
                        Field::SeqLength,
                        Refusal::new(
                            "Megatron-LM's validate_args stops with a bare AssertionError at",
                            "assert args.encoder_seq_length is not None",
                        )
                        .fix("Give seq_length: Megatron-LM requires it, and the schedule's thresholds are \
                              tokens (threshold // seq_length samples)."),
                    );
                }
                return None;
            }
            let text = text.clone();
            let levels = self.parse_schedule(&text)?;
            return Some(Plan {
                sched: Sched::Step { levels },
                mbs,
                dp: cdp,
                dp_rep: dp,
                m,
                decrease,
                gbs_arg: Some(gbs),
            });
        }
        if !self.constant(gbs, mbs, cdp, m, decrease) {
            return None;
        }
        Some(Plan {
            sched: Sched::Constant { gbs },
            mbs,
            dp: cdp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: Some(gbs),
        })
    }

    /// validate_args: `--global-batch-size`, when given, must be positive.
    fn gbs_given(&mut self) -> Option<Option<u128>> {
        match self.i.global_batch_size {
            Param::Given(v) if v <= 0 => {
                self.r.refuse(
                    Field::GlobalBatchSize,
                    Refusal::new(
                        "Megatron's validate_args stops with a bare AssertionError at",
                        "assert args.global_batch_size > 0",
                    )
                    .fix(format!("(got {v}). global_batch_size must be positive.")),
                );
                None
            }
            Param::Given(v) => Some(Some(v as u128)),
            Param::Absent => Some(None),
            Param::Invalid => None,
        }
    }

    /// 0.19.2: `--rampup-batch-size` is still an argparse flag (`nargs=3, type=int`), and
    /// nothing reads it. Whether argparse accepts it.
    fn ramp_ignored(&mut self) -> bool {
        let Param::Given(text) = self.i.rampup_batch_size.clone() else {
            return self.i.rampup_batch_size != Param::Invalid;
        };
        let f = Field::RampupBatchSize;
        let body = text.trim().trim_start_matches('[').trim_end_matches(']');
        let tokens: Vec<&str> = body
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .collect();
        let by = "Megatron-LM's argument parser stops (it still reads three whole numbers)";
        if tokens.len() < 3 {
            self.r.refuse(
                f,
                Refusal::new(by, "argument --rampup-batch-size: expected 3 arguments").fix(
                    "Megatron-LM 0.19.2 ignores the ramp-up anyway: remove rampup_batch_size, or use \
                     step_batch_size_schedule.",
                ),
            );
            return false;
        }
        if tokens.len() > 3 {
            self.r.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "unrecognized arguments: {}",
                        crate::calc::parse::shorten(&tokens[3..].join(" "))
                    ),
                )
                .fix("Give three numbers, or remove rampup_batch_size (0.19.2 ignores it)."),
            );
            return false;
        }
        if let Some(t) = tokens.iter().find(|t| python_int(t).is_none()) {
            self.r.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "argument --rampup-batch-size: invalid int value: '{}'",
                        crate::calc::parse::shorten(t)
                    ),
                )
                .fix("Give three whole numbers, or remove rampup_batch_size (0.19.2 ignores it)."),
            );
            return false;
        }
        // measured (command megatron19-27, cases gpt3_175b_128gpus_rampup, rampup_samples): the
        // calculator is ConstantNumMicroBatchesCalculator and nothing is printed
        let then = if matches!(self.i.step_batch_size_schedule, Param::Given(_)) {
            "the step schedule sets the batch"
        } else {
            "there is no ramp-up: every step trains the full global_batch_size from the first \
             sample (ConstantNumMicroBatchesCalculator), and train_iters and the warmup count that batch"
        };
        self.r.diag(
            f,
            Level::Warning,
            format!(
                "Megatron-LM 0.19.2 parses --rampup-batch-size and ignores it, without a message \
                 (global_vars.set_global_variables no longer passes it to the calculator). Instead, {then}. \
                 For a ramp, write it as a step_batch_size_schedule (or choose release 0.16.1)."
            ),
        );
        true
    }

    /// 0.19.2's validate_args: `eval_global_batch_size % (eval_micro_batch_size ×
    /// data_parallel_size) == 0`, defaults the training batch's; before the calculator.
    fn eval_batch(&mut self, gbs: u128, mbs: u128, dp: u128, decrease: bool) -> bool {
        let i = self.i.clone();
        let eg = match i.eval_global_batch_size {
            Param::Given(v) => v as i128,
            Param::Absent => gbs as i128,
            Param::Invalid => return false,
        };
        let em = match i.eval_micro_batch_size {
            Param::Given(v) => v as i128,
            Param::Absent => mbs as i128,
            Param::Invalid => return false,
        };
        let Some(div) = em.checked_mul(dp as i128) else {
            return false;
        };
        let by = "Megatron-LM refuses this in validate_args, before the microbatch calculator";
        if div == 0 {
            self.r.refuse(
                Field::EvalMicroBatchSize,
                Refusal::new(by, "ZeroDivisionError: integer modulo by zero")
                    .fix("eval_micro_batch_size must not be 0 (unset, it is micro_batch_size)."),
            );
            return false;
        }
        if eg % div == 0 {
            return true;
        }
        let field = if i.eval_global_batch_size.is_given() {
            Field::EvalGlobalBatchSize
        } else if i.eval_micro_batch_size.is_given() {
            Field::EvalMicroBatchSize
        } else {
            Field::GlobalBatchSize
        };
        let d = div.unsigned_abs();
        let near = nearest_multiples(eg.unsigned_abs(), d);
        let fix = if i.eval_global_batch_size.is_given() {
            format!(
                "Nearest valid eval_global_batch_size: {near} (multiples of {em} × {dp} = {d})."
            )
        } else if decrease {
            format!(
                "eval_global_batch_size defaults to global_batch_size {eg}, and this check runs before \
                 decrease_batch_size_if_needed can round the training batch: give eval_global_batch_size \
                 (a multiple of {em} × {dp} = {d}, e.g. {}), or a global batch of {near}.",
                (eg.unsigned_abs() / d * d).max(d)
            )
        } else {
            format!(
                "eval_global_batch_size defaults to global_batch_size ({eg}) and eval_micro_batch_size to \
                 micro_batch_size, so the global batch must be a multiple of {em} × {dp} = {d}: nearest {near}."
            )
        };
        self.r.refuse(
            field,
            Refusal::new(
                by,
                format!(
                    "AssertionError: eval_global_batch_size ({eg}) must be divisible by eval_micro_batch_size \
                     ({em}) * data_parallel_size ({dp})"
                ),
            )
            .fix(fix),
        );
        false
    }

    /// `ConstantNumMicroBatchesCalculator.__init__` (with `decrease_batch_size_if_needed`):
    /// whether megatron-core accepts the global batch.
    fn constant(&mut self, gbs: u128, mbs: u128, dp: u128, m: u128, decrease: bool) -> bool {
        if decrease {
            let running = gbs / m * m;
            if running / m < 1 {
                self.r.refuse(
                    Field::GlobalBatchSize,
                    Refusal::new(
                        "megatron-core refuses it",
                        "AssertionError: number of microbatches should be at least 1, got 0.",
                    )
                    .fix(format!(
                        "decrease_batch_size_if_needed rounds global_batch_size {gbs} down to a multiple of \
                         micro_batch_size × data_parallel_size = {mbs} × {dp} = {m}, which is 0. \
                         Use a global batch of at least {m}."
                    )),
                );
                return false;
            }
            if running != gbs {
                self.r.diag(
                    Field::DecreaseBatchSizeIfNeeded,
                    Level::Warning,
                    format!(
                        "Megatron decreases the batch: each step trains {running} samples, not global_batch_size \
                         {gbs} (rounded down to a multiple of micro_batch_size × data_parallel_size = {m})."
                    ),
                );
            }
        } else if gbs % m != 0 {
            self.r.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "megatron-core refuses it",
                    format!(
                        "AssertionError: global batch size ({gbs}) is not divisible by micro batch size \
                         ({mbs}) times data parallel size ({dp})"
                    ),
                )
                .fix(format!(
                    "Nearest valid global_batch_size: {} (multiples of {mbs} × {dp} = {m}); or set \
                     decrease_batch_size_if_needed to train {} per step.",
                    nearest_multiples(gbs, m),
                    gbs / m * m
                )),
            );
            return false;
        }
        true
    }

    /// `_build_num_microbatches_calculator` and `RampupBatchsizeNumMicroBatchesCalculator.__init__`
    /// (0.16.1), in their order of assertions.
    fn parse_ramp(&mut self, text: &str, gbs: u128, m: u128) -> Option<Sched> {
        let f = Field::RampupBatchSize;
        let body = text.trim().trim_start_matches('[').trim_end_matches(']');
        let tokens: Vec<&str> = body
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .collect();
        let refuse = |r: &mut Report, what: String, fix: &str| {
            r.refuse(
                f,
                Refusal::new("megatron-core refuses this ramp-up", what).fix(fix),
            );
        };
        if tokens.len() != 3 {
            refuse(
                self.r,
                "AssertionError: expected the following format: --rampup-batch-size <start batch size> \
                 <batch size incerement> <ramp-up samples>"
                    .into(),
                &format!(
                    "Give three whole numbers, e.g. \u{201c}{} {} 100000\u{201d} (got {}).",
                    m,
                    m,
                    tokens.len()
                ),
            );
            return None;
        }
        let mut v = [0i128; 3];
        for (k, t) in tokens.iter().enumerate() {
            match python_int(t) {
                Some(x) => v[k] = x,
                None => {
                    self.r.refuse(
                        f,
                        Refusal::new(
                            "Megatron reads each value with int() and stops with",
                            "ValueError: invalid literal for int() with base 10",
                        )
                        .fix(format!(
                            "rampup_batch_size: \u{201c}{}\u{201d} is not a whole number.",
                            crate::calc::parse::shorten(t)
                        )),
                    );
                    return None;
                }
            }
        }
        let [start, inc, samples] = v;
        if start <= 0 {
            refuse(
                self.r,
                format!("AssertionError: start batch size should be positive, got {start}."),
                &format!("Start at a multiple of micro_batch_size × data_parallel_size = {m}."),
            );
            return None;
        }
        if inc <= 0 {
            refuse(
                self.r,
                format!("AssertionError: batch size increment should be positive, got {inc}."),
                &format!("Use an increment that is a multiple of {m}."),
            );
            return None;
        }
        if samples < 0 {
            refuse(
                self.r,
                format!("AssertionError: ramp-up samples should be non-negative, got {samples}."),
                "Give the number of samples over which the batch grows.",
            );
            return None;
        }
        let (start, inc, samples) = (start as u128, inc as u128, samples as u128);
        if start > gbs {
            refuse(
                self.r,
                format!(
                    "AssertionError: expected global batch size to be greater than or equal to start batch size, \
                     got {gbs} and {start}"
                ),
                &format!("The start batch must be at most global_batch_size {gbs}."),
            );
            return None;
        }
        let diff = gbs - start;
        if diff % inc != 0 {
            let below = start + diff / inc * inc;
            let above = below + inc;
            refuse(
                self.r,
                format!(
                    "AssertionError: expected global batch size interval ({diff}) to be divisible by global batch \
                     size increment ({inc})"
                ),
                &format!(
                    "Nearest valid global_batch_size for this ramp: {}{above}; or an increment that divides {diff}.",
                    if below > start {
                        format!("{below} or ")
                    } else {
                        String::new()
                    }
                ),
            );
            return None;
        }
        let num_inc = diff / inc;
        if num_inc == 0 {
            refuse(
                self.r,
                "ZeroDivisionError: division by zero".into(),
                &format!(
                    "The ramp starts at the global batch ({gbs}), so it has no increments \
                     (rampup_samples_per_increment = samples / 0). Remove rampup_batch_size, or start below {gbs}."
                ),
            );
            return None;
        }
        if samples >= EXACT_FLOAT || num_inc >= EXACT_FLOAT {
            self.r.diag(
                f,
                Level::Error,
                "dpcalc follows ramp-ups of fewer than 2^53 samples only (beyond that Python's float steps are \
                 not reproduced exactly)",
            );
            return None;
        }
        let per = samples as f64 / num_inc as f64;
        if per == 0.0 {
            refuse(
                self.r,
                "ZeroDivisionError: float division by zero".into(),
                "With 0 ramp-up samples, rampup_samples_per_increment is 0.0 and the first update divides by it. \
                 Give at least 1 ramp-up sample, or remove rampup_batch_size.",
            );
            return None;
        }
        self.r
            .set(Output::RampupSamplesPerIncrement, Num::Float(per));
        self.r.explain(
            Output::RampupSamplesPerIncrement,
            "rampup_samples_per_increment = ramp-up samples / ((global_batch_size − start) // increment)",
            format!(
                "rampup_samples_per_increment = {samples} / (({gbs} − {start}) // {inc}) = {samples} / {num_inc} = {}",
                num::float_repr(per)
            ),
        );
        Some(Sched::Ramp {
            start,
            inc,
            samples,
            per,
            gbs,
        })
    }

    /// HEAD's `_parse_schedule` and `_validate_schedule`.
    fn parse_schedule(&mut self, text: &str) -> Option<Vec<(u128, u128)>> {
        let f = Field::StepBatchSizeSchedule;
        let seq = match self.i.seq_length {
            Param::Given(0) => {
                self.r.refuse(
                    Field::SeqLength,
                    Refusal::new(
                        "Megatron converts the schedule's token thresholds with threshold // seq_length \
                         and stops with",
                        "ZeroDivisionError: integer division or modulo by zero",
                    )
                    .fix("seq_length must be at least 1."),
                );
                return None;
            }
            Param::Given(s) => Some(s as i128),
            Param::Absent => None,
            Param::Invalid => return None,
        };
        let refuse = |r: &mut Report, what: String, fix: &str| {
            r.refuse(
                f,
                Refusal::new("Megatron-LM refuses this schedule", what).fix(fix),
            );
        };
        let mut levels: Vec<(i128, i128)> = Vec::new();
        let replaced = text.replace(',', " ");
        for entry in replaced.split_whitespace() {
            let Some((t, b)) = entry.split_once(':') else {
                refuse(
                    self.r,
                    format!(
                        "ValueError: Invalid schedule entry \"{}\". Expected format: \"THRESHOLD:BATCH_SIZE\"",
                        crate::calc::parse::shorten(entry)
                    ),
                    "Write each step as THRESHOLD:BATCH_SIZE, e.g. \u{201c}0:256 100B:512\u{201d}.",
                );
                return None;
            };
            let mut parsed = [0i128; 2];
            for (k, part) in [t, b].iter().enumerate() {
                match schedule_number(part) {
                    Ok(x) => parsed[k] = x,
                    Err(NumParse::Bad(msg)) => {
                        refuse(
                            self.r,
                            msg,
                            "Numbers may have a K, M, B or T suffix (10^3 … 10^12).",
                        );
                        return None;
                    }
                    Err(NumParse::TooLarge) => {
                        self.r.diag(
                            f,
                            Level::Error,
                            format!(
                                "step_batch_size_schedule: \u{201c}{}\u{201d} is too large to count",
                                crate::calc::parse::shorten(part)
                            ),
                        );
                        return None;
                    }
                }
            }
            let [mut threshold, batch] = parsed;
            if let Some(s) = seq {
                // Python's floor division (a negative threshold rounds down).
                threshold = threshold.div_euclid(s);
            }
            levels.push((threshold, batch));
        }
        levels.sort_by_key(|l| l.0);
        if levels.is_empty() {
            refuse(
                self.r,
                "AssertionError: schedule must have at least one entry".into(),
                "Give at least \u{201c}0:BATCH_SIZE\u{201d}.",
            );
            return None;
        }
        if levels[0].0 != 0 {
            refuse(
                self.r,
                format!(
                    "AssertionError: first schedule entry must have threshold 0, got {}",
                    levels[0].0
                ),
                "Start the schedule with \u{201c}0:BATCH_SIZE\u{201d}.",
            );
            return None;
        }
        for w in levels.windows(2) {
            if w[1].0 <= w[0].0 {
                let unit = if seq.is_some() {
                    " (in samples: token thresholds are divided by seq_length)"
                } else {
                    ""
                };
                refuse(
                    self.r,
                    format!(
                        "AssertionError: schedule thresholds must be strictly increasing, got {} before {}",
                        w[0].0, w[1].0
                    ),
                    &format!("Make every threshold larger than the previous one{unit}."),
                );
                return None;
            }
        }
        if let Some(&(_, b)) = levels.iter().find(|l| l.1 <= 0) {
            refuse(
                self.r,
                format!("AssertionError: batch size must be positive, got {b}"),
                "Every batch size must be at least 1.",
            );
            return None;
        }
        let unit = if seq.is_some() {
            "tokens // seq_length"
        } else {
            "samples"
        };
        self.r.diag(
            f,
            Level::Note,
            format!(
                "Thresholds are read as {unit}; only the batch size in use is checked against micro_batch_size × \
                 data_parallel_size (each iteration, by the training loop)."
            ),
        );
        Some(
            levels
                .into_iter()
                .map(|(t, b)| (t as u128, b as u128))
                .collect(),
        )
    }

    fn batch_outputs(&mut self, p: &Plan) {
        let (mbs, dp, m) = (p.mbs, p.dp, p.m);
        let fin = p.sched.final_gbs();
        let running = p.running(fin);
        let new = self.v == Version::Core0192;
        // args.global_batch_size: at HEAD a schedule leaves it unset (dpcalc shows the last size)
        let shown = p.gbs_arg.unwrap_or(fin);
        self.r.set(Output::GlobalBatchSize, Num::Int(shown as i128));
        match &p.sched {
            Sched::Constant { .. } => {
                if p.gbs_arg.is_some() && self.i.global_batch_size.is_given() {
                    self.r.explain(
                        Output::GlobalBatchSize,
                        "global_batch_size (as given)",
                        format!("global_batch_size = {fin}"),
                    );
                }
            }
            Sched::Ramp { start, inc, .. } => self.r.explain(
                Output::GlobalBatchSize,
                "the ramp-up grows the batch from its start to global_batch_size",
                format!("global batch: {start} + k × {inc} … {fin}"),
            ),
            Sched::Step { levels } => self.r.explain(
                if new {
                    Output::RunningGlobalBatchSize
                } else {
                    Output::GlobalBatchSize
                },
                if new {
                    "with a schedule, the batch each step trains follows it; at the full batch it is the last size"
                } else {
                    "with a schedule, the global batch is its last batch size"
                },
                format!(
                    "global batch: {}",
                    levels
                        .iter()
                        .map(|l| l.1.to_string())
                        .collect::<Vec<_>>()
                        .join(" → ")
                ),
            ),
        }
        self.r
            .set(Output::RunningGlobalBatchSize, Num::Int(running as i128));
        if p.decrease {
            self.r.explain(
                Output::RunningGlobalBatchSize,
                "decrease_batch_size_if_needed: running batch = (global // (micro_batch_size × data_parallel_size)) × (micro_batch_size × data_parallel_size)",
                format!("running = ({fin} // {m}) × {m} = {running}"),
            );
        } else {
            self.r.explain(
                Output::RunningGlobalBatchSize,
                "the running batch is the global batch (no decrease_batch_size_if_needed)",
                format!("running = {running}"),
            );
        }
        let nm = running / m;
        self.r.plan.publish_batch(mbs, nm, running);
        self.r.set(Output::NumMicrobatches, Num::Int(nm as i128));
        self.r.explain(
            Output::NumMicrobatches,
            "num_microbatches = running global batch // (micro_batch_size × data_parallel_size)",
            format!("num_microbatches = {running} // ({mbs} × {dp}) = {nm}"),
        );
        self.r
            .set(Output::GradientAccumulationSteps, Num::Int(nm as i128));
        if !p.sched.varying() {
            return;
        }
        let b0 = p.sched.current(0);
        let r0 = p.running(b0);
        self.r
            .set(Output::InitialGlobalBatchSize, Num::Int(b0 as i128));
        self.r.explain(
            Output::InitialGlobalBatchSize,
            "the global batch after update(0 consumed samples)",
            format!("initial global batch = {b0}"),
        );
        self.r
            .set(Output::InitialNumMicrobatches, Num::Int((r0 / m) as i128));
        self.r.explain(
            Output::InitialNumMicrobatches,
            "num_microbatches at the first step = running batch // (micro_batch_size × data_parallel_size)",
            format!("initial num_microbatches = {r0} // {m} = {}", r0 / m),
        );
        if r0 / m == 0 && !new {
            let why = if p.decrease {
                "megatron-core accepts this with no error (decrease_batch_size_if_needed rounds it to 0), so the \
                 first steps train no microbatch"
            } else {
                "megatron-core builds it (the first update skips the consistency check), but the training loop's \
                 check at the first iteration fails (see below)"
            };
            let field = match p.sched {
                Sched::Step { .. } => Field::StepBatchSizeSchedule,
                _ => Field::RampupBatchSize,
            };
            self.r.diag(
                field,
                Level::Warning,
                format!(
                    "The first global batch {b0} is smaller than micro_batch_size × data_parallel_size = {m}: \
                     num_microbatches is 0. {why}."
                ),
            );
        }
        // The first iteration (1-based) whose batch is the full batch.
        let mut first = None;
        let res = walk(&p.sched, None, None, |_, cur, done| {
            if cur == fin {
                first = Some(done + 1);
                false
            } else {
                true
            }
        });
        match (res, first) {
            (Ok(_), Some(k)) => {
                self.r.set(Output::FullBatchIteration, Num::Int(k as i128));
                self.r.explain(
                    Output::FullBatchIteration,
                    "iterations run with consumed_samples += current global batch until the batch is the full one",
                    format!("the batch is {fin} from iteration {k} on"),
                );
            }
            _ => self.too_long(p),
        }
    }

    fn too_long(&mut self, p: &Plan) {
        let field = match p.sched {
            Sched::Step { .. } => Field::StepBatchSizeSchedule,
            _ => Field::RampupBatchSize,
        };
        self.r.diag(
            field,
            Level::Warning,
            format!(
                "This batch-size ramp has more than {MAX_SEGMENTS} distinct steps; dpcalc does not follow it to \
                 the end, so the values that need it are not shown."
            ),
        );
    }

    // ---- training length -----------------------------------------------------------------

    /// validate_args' iteration-based / sample-based assertions, in its order.
    fn mode(&mut self) -> Option<Mode> {
        let i = self.i.clone();
        let (ti, ts) = (i.train_iters, i.train_samples);
        if ti == Param::Invalid || ts == Param::Invalid {
            return None;
        }
        let (lwi, lws) = (i.lr_warmup_iters.or(0), i.lr_warmup_samples.or(0));
        let frac = i.lr_warmup_fraction;
        let refuse = |r: &mut Report, field: Field, text: &str, fix: &str| {
            r.refuse(
                field,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    format!("AssertionError: {text}"),
                )
                .fix(fix),
            );
        };
        let ramp_active =
            self.v == Version::Core0161 && matches!(i.rampup_batch_size, Param::Given(_));
        if let Some(n) = ti.given().filter(|&n| n != 0) {
            if ts.is_given() {
                refuse(
                    self.r,
                    Field::TrainSamples,
                    "expected iteration-based training",
                    "Give only one of train_iters or train_samples.",
                );
                return None;
            }
            if i.lr_decay_samples != Param::Absent {
                if i.lr_decay_samples.is_given() {
                    refuse(
                        self.r,
                        Field::LrDecaySamples,
                        "expected iteration-based learning rate decay",
                        "With train_iters, give the decay as lr_decay_iters.",
                    );
                }
                return None;
            }
            if lws != Some(0) {
                if lws.is_some() {
                    refuse(
                        self.r,
                        Field::LrWarmupSamples,
                        "expected iteration-based learning rate warmup",
                        "With train_iters, give the warmup as lr_warmup_iters or lr_warmup_fraction.",
                    );
                }
                return None;
            }
            if ramp_active {
                refuse(
                    self.r,
                    Field::RampupBatchSize,
                    "expected no batch-size rampup for iteration-based training",
                    "A ramp-up needs sample-based training: give train_samples instead of train_iters.",
                );
                return None;
            }
            if frac.is_given() && lwi != Some(0) {
                if lwi.is_some() {
                    refuse(
                        self.r,
                        Field::LrWarmupFraction,
                        "can only specify one of lr-warmup-fraction and lr-warmup-iters",
                        "Keep one of lr_warmup_fraction or lr_warmup_iters.",
                    );
                }
                return None;
            }
            return Some(Mode::Iters(n));
        }
        if let Some(n) = ts.given().filter(|&n| n != 0) {
            if ti.is_given() {
                refuse(
                    self.r,
                    Field::TrainIters,
                    "expected sample-based training",
                    "train_iters 0 still counts as given here: remove it and keep train_samples.",
                );
                return None;
            }
            if i.lr_decay_iters != Param::Absent {
                if i.lr_decay_iters.is_given() {
                    refuse(
                        self.r,
                        Field::LrDecayIters,
                        "expected sample-based learning rate decay",
                        "With train_samples, give the decay as lr_decay_samples.",
                    );
                }
                return None;
            }
            if lwi != Some(0) {
                if lwi.is_some() {
                    refuse(
                        self.r,
                        Field::LrWarmupIters,
                        "expected sample-based learnig rate warmup",
                        "With train_samples, give the warmup as lr_warmup_samples or lr_warmup_fraction.",
                    );
                }
                return None;
            }
            if frac.is_given() && lws != Some(0) {
                if lws.is_some() {
                    refuse(
                        self.r,
                        Field::LrWarmupFraction,
                        "can only specify one of lr-warmup-fraction and lr-warmup-samples",
                        "Keep one of lr_warmup_fraction or lr_warmup_samples.",
                    );
                }
                return None;
            }
            return Some(Mode::Samples(n));
        }
        // Neither is truthy: get_optimizer_param_scheduler raises.
        let text = "Megatron-LM stops in get_optimizer_param_scheduler: \u{201c}Exception: either train-iters or \
                    train-samples should be provided.\u{201d}";
        if ti.is_given() || ts.is_given() {
            let field = if ti.is_given() {
                Field::TrainIters
            } else {
                Field::TrainSamples
            };
            self.r.refuse(
                field,
                Refusal::new(
                    "Megatron-LM stops in get_optimizer_param_scheduler",
                    "Exception: either train-iters or train-samples should be provided.",
                )
                .fix("0 counts as not set: give a positive train_iters or train_samples."),
            );
        } else {
            self.r.diag(
                Field::TrainIters,
                Level::Hint,
                format!("Give train_iters or train_samples for the step count. ({text})"),
            );
        }
        None
    }

    /// `update_train_iters`.
    fn train_iters(&mut self, p: &Plan, mode: Mode) -> Option<u128> {
        let (n, rule, worked) = match mode {
            Mode::Iters(n) => (
                n as u128,
                "train_iters (as given)".to_string(),
                format!("train_iters = {n}"),
            ),
            Mode::Samples(ts) => {
                let ts = ts as u128;
                match &p.sched {
                    Sched::Constant { gbs } => {
                        let n = ts / gbs;
                        let running = p.running(*gbs);
                        if running != *gbs {
                            let trained = n * running;
                            self.r.diag(
                                Field::DecreaseBatchSizeIfNeeded,
                                Level::Warning,
                                format!(
                                    "train_iters is computed from the configured --global-batch-size: {ts} // {gbs} = \
                                     {n} iterations, but each trains the decreased batch {running}, so the run \
                                     trains {n} × {running} = {trained} samples, {} fewer than train_samples {ts}.",
                                    ts - trained
                                ),
                            );
                        }
                        (
                            n,
                            "train_iters = train_samples // global_batch_size".to_string(),
                            format!("train_iters = {ts} // {gbs} = {n}"),
                        )
                    }
                    Sched::Ramp { samples, gbs, .. } => {
                        let limit = (*samples).min(ts) + 1;
                        let Ok((c, it)) = walk(&p.sched, Some(limit), None, |_, _, _| true) else {
                            self.too_long(p);
                            return None;
                        };
                        let rest = if ts > c { (ts - c) / gbs } else { 0 };
                        let n = it + rest;
                        (
                            n,
                            "train_iters = ramp-up iterations (while consumed ≤ ramp-up samples and ≤ train_samples) \
                             + (train_samples − consumed) // global_batch_size"
                                .to_string(),
                            format!(
                                "train_iters = {it} + {} = {n} (after the ramp-up {c} samples are consumed)",
                                if ts > c {
                                    format!("({ts} − {c}) // {gbs}")
                                } else {
                                    "0".to_string()
                                }
                            ),
                        )
                    }
                    Sched::Step { .. } => {
                        let Ok((c, n)) = walk(&p.sched, Some(ts), None, |_, _, _| true) else {
                            self.too_long(p);
                            return None;
                        };
                        (
                            n,
                            "train_iters: iterations while consumed < train_samples, each consuming the scheduled batch"
                                .to_string(),
                            format!("train_iters = {n} ({c} samples consumed)"),
                        )
                    }
                }
            }
        };
        self.r.set(Output::TrainIters, Num::Int(n as i128));
        self.r.set(Output::MaxSteps, Num::Int(n as i128));
        self.r.explain(Output::TrainIters, rule, worked);
        if n == 0 {
            self.r.diag(
                Field::TrainSamples,
                Level::Warning,
                "train_iters comes out 0: fewer training samples than one global batch, so Megatron trains no step.",
            );
        }
        Some(n)
    }

    /// The training loop checks, every iteration, that the batch in use divides by
    /// micro_batch_size × data_parallel_size (`update_num_microbatches(consistency_check=True)`).
    fn consistency(&mut self, p: &Plan, n: u128) {
        if !p.sched.varying() || p.decrease {
            return;
        }
        let m = p.m;
        let mut bad = None;
        let res = walk(&p.sched, None, Some(n), |c, cur, done| {
            if cur % m != 0 {
                bad = Some((c, cur, done + 1));
                false
            } else {
                true
            }
        });
        if res.is_err() {
            self.too_long(p);
            return;
        }
        let Some((c, cur, k)) = bad else { return };
        let (mbs, dp) = (p.mbs, p.dp);
        let (field, text) = match p.sched {
            Sched::Step { .. } => (
                Field::StepBatchSizeSchedule,
                format!(
                    "current global batch size ({cur}) is not divisible by micro_batch_size ({mbs}) * \
                     data_parallel_size ({dp})"
                ),
            ),
            _ => (
                Field::RampupBatchSize,
                format!(
                    "current global batch size ({cur}) is not divisible by micro-batch-size ({mbs}) \
                     timesdata parallel size ({dp})"
                ),
            ),
        };
        let fix = match p.sched {
            Sched::Step { .. } => format!(
                "Nearest valid batch sizes for that step: {} (multiples of {mbs} × {dp} = {m}).",
                nearest_multiples(cur, m)
            ),
            _ => format!(
                "Every batch the ramp passes through must be a multiple of {mbs} × {dp} = {m}: make the start and \
                 the increment multiples of {m} (nearest to {cur}: {}), or set decrease_batch_size_if_needed.",
                nearest_multiples(cur, m)
            ),
        };
        self.r.refuse(
            field,
            Refusal::new(
                format!(
                    "The run stops at iteration {k} (after {c} samples), when the training loop checks the batch"
                ),
                format!("AssertionError: {text}"),
            )
            .fix(fix),
        );
    }

    /// 0.19.2, with a schedule: setup_model_and_optimizer's `num_microbatches >= 1` at the first
    /// batch, then each training iteration's checks in the loop's order: the microbatch count may
    /// not decrease, and the batch in use must divide by micro_batch_size × data_parallel_size.
    fn loop_checks(&mut self, p: &Plan, n: u128) {
        if !matches!(p.sched, Sched::Step { .. }) {
            return;
        }
        let (m, mbs, dp) = (p.m, p.mbs, p.dp);
        let b0 = p.sched.current(0);
        if b0 / m == 0 {
            let rep = p.dp_rep;
            self.r.refuse(
                Field::StepBatchSizeSchedule,
                Refusal::new(
                    "setup_model_and_optimizer (training.py) stops before the first iteration",
                    format!(
                        "AssertionError: current global batch size ({b0}) is too small for micro_batch_size \
                         ({mbs}) * data_parallel_size ({rep}) = {}. The world size cannot accommodate the batch \
                         size. This can happen when resuming with more GPUs than the current batch size \
                         schedule entry supports.",
                        mbs * rep
                    ),
                )
                .fix(format!(
                    "The first scheduled batch must be at least micro_batch_size × data_parallel_size = {m} \
                     (and a multiple of it)."
                )),
            );
            return;
        }
        enum Stop {
            Decrease(u128, u128),
            NotDivisible(u128),
        }
        let mut prev = b0 / m;
        let mut bad = None;
        let res = walk(&p.sched, None, Some(n), |c, cur, done| {
            let nm = cur / m;
            if done > 0 && nm < prev {
                bad = Some((c, done + 1, Stop::Decrease(prev, nm)));
                return false;
            }
            prev = nm;
            if cur % m != 0 {
                bad = Some((c, done + 1, Stop::NotDivisible(cur)));
                return false;
            }
            true
        });
        if res.is_err() {
            self.too_long(p);
            return;
        }
        let Some((c, k, stop)) = bad else { return };
        let by = format!(
            "The run stops at iteration {k} (after {c} samples), when the training loop checks the batch"
        );
        let refusal = match stop {
            Stop::Decrease(from, to) => Refusal::new(
                by,
                format!("AssertionError: Number of microbatches should not decrease; going from {from} to {to}"),
            )
            .fix(format!(
                "Megatron-LM's training loop allows the batch to grow only: make the scheduled batch sizes \
                 non-decreasing (in microbatches of {mbs} × {dp} = {m})."
            )),
            Stop::NotDivisible(cur) => Refusal::new(
                by,
                format!(
                    "AssertionError: current global batch size ({cur}) is not divisible by micro_batch_size \
                     ({mbs}) * data_parallel_size ({dp})"
                ),
            )
            .fix(format!(
                "Nearest valid batch sizes for that step: {} (multiples of {mbs} × {dp} = {m}).",
                nearest_multiples(cur, m)
            )),
        };
        self.r.refuse(Field::StepBatchSizeSchedule, refusal);
    }

    /// `get_optimizer_param_scheduler`: the warmup in samples, and `OptimizerParamScheduler`'s
    /// `assert lr_warmup_steps < lr_decay_steps`.
    fn warmup(&mut self, p: &Plan, mode: Mode) {
        let i = self.i.clone();
        let frac = match i.lr_warmup_fraction {
            Param::Invalid => return,
            f => f.given(),
        };
        let (lwi, lws) = match (i.lr_warmup_iters.or(0), i.lr_warmup_samples.or(0)) {
            (Some(a), Some(b)) => (a as u128, b as u128),
            _ => return,
        };
        // --lr-decay-iters / --lr-decay-samples: the decay length, when given (even 0: `is None`)
        let (decay_iters, decay_samples) = match (i.lr_decay_iters, i.lr_decay_samples) {
            (Param::Invalid, _) | (_, Param::Invalid) => return,
            (a, b) => (a.given().map(u128::from), b.given().map(u128::from)),
        };
        let (decay, decay_worked, lw, lw_worked, field) = match mode {
            Mode::Iters(n) => {
                let Some(gbs) = p.gbs_arg else {
                    self.r.diag(
                        Field::LrWarmupIters,
                        Level::Note,
                        "With a schedule and train_iters, Megatron counts warmup and decay as iterations × \
                         args.global_batch_size samples; dpcalc does not show the warmup for this combination.",
                    );
                    return;
                };
                let (len, name) = match decay_iters {
                    Some(d) => (d, "lr_decay_iters"),
                    None => (n as u128, "train_iters"),
                };
                let Some(decay) = len.checked_mul(gbs) else {
                    return;
                };
                let dw = format!(
                    "lr_decay_steps = {name} × global_batch_size = {len} × {gbs} = {decay}"
                );
                match frac {
                    Some(f) => {
                        let lw = f * decay as f64;
                        (
                            decay,
                            dw,
                            Num::Float(lw),
                            format!(
                                "lr_warmup_steps = lr_warmup_fraction × lr_decay_steps = {} × {decay} = {}",
                                num::float_repr(f),
                                num::float_repr(lw)
                            ),
                            Field::LrWarmupFraction,
                        )
                    }
                    None => {
                        let Some(lw) = lwi.checked_mul(gbs) else {
                            return;
                        };
                        (
                            decay,
                            dw,
                            Num::Int(lw as i128),
                            format!(
                                "lr_warmup_steps = lr_warmup_iters × global_batch_size = {lwi} × {gbs} = {lw}"
                            ),
                            Field::LrWarmupIters,
                        )
                    }
                }
            }
            Mode::Samples(ts) => {
                let (decay, name) = match decay_samples {
                    Some(d) => (d, "lr_decay_samples"),
                    None => (ts as u128, "train_samples"),
                };
                let dw = format!("lr_decay_steps = {name} = {decay}");
                match frac {
                    Some(f) => {
                        let lw = f * decay as f64;
                        (
                            decay,
                            dw,
                            Num::Float(lw),
                            format!(
                                "lr_warmup_steps = lr_warmup_fraction × lr_decay_steps = {} × {decay} = {}",
                                num::float_repr(f),
                                num::float_repr(lw)
                            ),
                            Field::LrWarmupFraction,
                        )
                    }
                    None => (
                        decay,
                        dw,
                        Num::Int(lws as i128),
                        format!("lr_warmup_steps = lr_warmup_samples = {lws}"),
                        Field::LrWarmupSamples,
                    ),
                }
            }
        };
        self.r.set(Output::LrWarmupSteps, lw);
        self.r.explain(
            Output::LrWarmupSteps,
            "the scheduler counts samples: warmup and decay lengths are in samples",
            format!("{lw_worked}; {decay_worked}"),
        );
        let given = match mode {
            Mode::Iters(_) => decay_iters.map(|_| Field::LrDecayIters),
            Mode::Samples(_) => decay_samples.map(|_| Field::LrDecaySamples),
        };
        if decay == 0 {
            // only a given length can be 0 (train_iters / train_samples 0 are refused earlier)
            self.r.refuse(
                given.unwrap_or(field),
                Refusal::new(
                    "Megatron stops building the learning-rate scheduler with a bare AssertionError \
                     (optimizer_param_scheduler.py)",
                    "assert self.lr_decay_steps > 0",
                )
                .fix(
                    "A decay length of 0 is taken as given, not as the default (the whole run): \
                     remove it, or give a positive length.",
                ),
            );
            return;
        }
        if num::cmp(lw, Num::Int(decay as i128)) != Ordering::Less {
            self.r.refuse(
                field,
                Refusal::new(
                    "Megatron stops building the learning-rate scheduler with a bare AssertionError \
                     (optimizer_param_scheduler.py)",
                    "assert self.lr_warmup_steps < self.lr_decay_steps",
                )
                .fix(match given {
                    None => format!(
                        "The warmup ({} samples) is not shorter than the decay ({decay} samples, the whole run). \
                         Make the warmup shorter than the training.",
                        lw.raw()
                    ),
                    Some(f) => format!(
                        "The warmup ({} samples) is not shorter than the decay ({decay} samples, from {}). \
                         Make the warmup shorter than the decay.",
                        lw.raw(),
                        f.key()
                    ),
                }),
            );
            return;
        }
        // Optimizer steps until the learning rate peaks: each step adds the running batch.
        let need: u128 = match lw {
            Num::Int(x) => x as u128,
            Num::Float(x) => x.ceil() as u128,
        };
        if p.sched.varying() {
            if self.v != Version::Core0192 {
                return;
            }
            // the loop steps the scheduler by each iteration's batch
            let Ok((c, k)) = walk(&p.sched, Some(need), None, |_, _, _| true) else {
                self.too_long(p);
                return;
            };
            self.r.set(Output::WarmupSteps, Num::Int(k as i128));
            self.r.explain(
                Output::WarmupSteps,
                "warmup steps = iterations until the samples stepped reach lr_warmup_steps (the scheduler \
                 advances by each iteration's scheduled batch)",
                format!("warmup steps = {k} ({c} samples ≥ {})", lw.raw()),
            );
            return;
        }
        let running = p.running(p.sched.final_gbs());
        let k = need.div_ceil(running);
        self.r.set(Output::WarmupSteps, Num::Int(k as i128));
        self.r.explain(
            Output::WarmupSteps,
            "warmup steps = ceil(lr_warmup_steps / running global batch): the scheduler advances by the samples each step trains",
            format!("warmup steps = ceil({} / {running}) = {k}", lw.raw()),
        );
        if p.decrease && matches!(mode, Mode::Iters(_)) && frac.is_none() && k != lwi {
            self.r.diag(
                Field::LrWarmupIters,
                Level::Warning,
                format!(
                    "With decrease_batch_size_if_needed the warmup is lr_warmup_iters × global_batch_size samples, \
                     but each step trains only {running}: the learning rate peaks after {k} steps, not {lwi}."
                ),
            );
        }
    }

    // ---- tokens --------------------------------------------------------------------------

    fn tokens(&mut self, p: &Plan) {
        let seq = match self.i.seq_length {
            Param::Given(s) => s as u128,
            _ => return,
        };
        if seq == 0 {
            if !matches!(p.sched, Sched::Step { .. }) {
                self.r.diag(
                    Field::SeqLength,
                    Level::Error,
                    "seq_length must be at least 1 (tokens per sample)",
                );
            }
            return;
        }
        let running = p.running(p.sched.final_gbs());
        let Some(t) = running.checked_mul(seq) else {
            self.r.diag(
                Field::SeqLength,
                Level::Error,
                "tokens per step are too many to count",
            );
            return;
        };
        self.r.set(Output::TokensPerStep, Num::Int(t as i128));
        self.r.explain(
            Output::TokensPerStep,
            "tokens per step = running global batch × seq_length (at the full batch)",
            format!("tokens per step = {running} × {seq} = {t}"),
        );
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
