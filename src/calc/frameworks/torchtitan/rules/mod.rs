//! torchtitan 0.3.0 (the released package, batch based; the default) and HEAD `b5bcd76` (token
//! based, after "fold batch dim" #4121).
//!
//! Mirrors, in torchtitan's order of execution:
//! - `Trainer.Config.__post_init__`, `torchtitan/trainer.py` (0.3.0: the pipeline microbatch size
//!   checks; both: CUDA graphs refuse pipeline parallelism; HEAD: `num_pp_microbatches > 0`);
//! - `ParallelDims._validate`, `torchtitan/distributed/parallel_dims.py` (degrees ≥ 1, the `-1`
//!   fill by floor division, the product assertion; HEAD adds the EP ValueError);
//! - 0.3.0 only: `ParallelDims.build_mesh`, where a bad EP degree fails in `DeviceMesh._unflatten`;
//! - `Trainer.__init__`, `torchtitan/trainer.py`: the sequence (HEAD: token) divisor for SP/CP, the
//!   global batch default and gradient accumulation (0.3.0) or the token budget (HEAD), the
//!   pipeline microbatch count;
//! - `LRSchedulersContainer.Config.build`, `torchtitan/components/optimizer/lr_scheduler.py`
//!   (warmup default 200, clamped to `training.steps`).
//!
//! The run length is `training.steps` optimizer steps (default 10000): torchtitan has no epochs.
//! 0.3.0 was checked by running the released package: `tests/fixtures/torchtitan.txt`.
//!
//! One file per stage: this file holds the release table, the form, the typed inputs and `Calc::run`
//! (the stages in order, with the keys the release ignores); `schedule.rs`, `checks.rs`, `grid.rs`
//! and `batch.rs` hold each stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Num, Output, Param, RawInputs, Refusal, Report, Stage};

mod batch;
mod checks;
mod grid;
mod schedule;

/// The releases dpcalc models with the rules of each, newest release (the default) first.
const TABLE: ReleaseTable<Version, 2> = [
    (
        Release {
            id: "0.3.0",
            label: "0.3.0 (batch sizes)",
        },
        Version::Batch,
    ),
    (
        Release {
            id: "head",
            label: "HEAD b5bcd76 (token counts, after #4121)",
        },
        Version::Tokens,
    ),
];

/// The releases dpcalc models, newest release (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

/// Fields only 0.3.0 reads.
const BATCH_FIELDS: &[Field] = &[
    Field::PipelineParallelMicrobatchSize,
    Field::LocalBatchSize,
    Field::GlobalBatchSize,
    Field::SeqLen,
];

/// Fields only HEAD reads.
const TOKEN_FIELDS: &[Field] = &[
    Field::NumPpMicrobatches,
    Field::NumTokensPerMicrobatchPerDpRank,
    Field::NumTokensPerTrainStep,
    Field::MaxContextLength,
];

pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::DataParallelReplicateDegree,
            Field::DataParallelShardDegree,
            Field::TensorParallelDegree,
            Field::ContextParallelDegree,
            Field::PipelineParallelDegree,
            Field::PipelineParallelSchedule,
            Field::ExpertParallelDegree,
            Field::EnableSequenceParallel,
        ],
    ),
    ("Batch (0.3.0)", BATCH_FIELDS),
    ("Tokens (HEAD)", TOKEN_FIELDS),
    (
        "Schedule",
        &[Field::Steps, Field::WarmupSteps, Field::DisableCudaGraphs],
    ),
    (
        "Model & memory",
        &[
            Field::ModelId,
            Field::ActivationCheckpointMode,
            Field::CompileEnable,
            Field::ModelConverters,
        ],
    ),
    crate::calc::field::ARCHITECTURE,
];

pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DataParallelShardDegree,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::NumPpMicrobatches,
    Output::TokensPerStep,
    Output::MaxSteps,
    Output::WarmupSteps,
];

pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::DataParallelShardDegree,
    Field::TensorParallelDegree,
    Field::PipelineParallelDegree,
    Field::LocalBatchSize,
    Field::GlobalBatchSize,
    Field::Steps,
];

/// torchtitan's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => (
            "Data-parallel degree (batch mesh)",
            "dp_replicate × dp_shard",
        ),
        Output::GlobalBatchSize => (
            "Global batch (samples per optimizer step)",
            "training.global_batch_size",
        ),
        Output::MaxSteps => ("Optimizer steps the run takes", "training.steps"),
        Output::WarmupSteps => ("Warmup steps", "lr_scheduler.warmup_steps"),
        Output::TokensPerStep => ("Tokens per optimizer step", "num_tokens_per_train_step"),
        _ => return None,
    })
}

// ---- defaults (0.3.0 `config/configs.py`, `components/optimizer/lr_scheduler.py`) -------------
const DEFAULT_LOCAL_BATCH_SIZE: u64 = 8;
pub const DEFAULT_SEQ_LEN: u64 = 2048;
const DEFAULT_STEPS: u64 = 10_000;
const DEFAULT_WARMUP_STEPS: u64 = 200;
// HEAD `config/configs.py`
const DEFAULT_TOKENS_PER_MICROBATCH: u64 = 16_384;

/// Which torchtitan's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    /// 0.3.0: `local_batch_size` / `global_batch_size`.
    Batch,
    /// HEAD: `num_tokens_per_microbatch_per_dp_rank` / `num_tokens_per_train_step`.
    Tokens,
}

impl Version {
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
    }
}

struct Inputs {
    cluster: ClusterInputs,
    dp_replicate: Param<u64>,
    dp_shard: Param<i64>,
    tp: Param<u64>,
    cp: Param<u64>,
    pp: Param<u64>,
    ep: Param<u64>,
    sequence_parallel: Param<bool>,
    pp_microbatch_size: Param<u64>,
    local_batch_size: Param<u64>,
    global_batch_size: Param<i64>,
    seq_len: Param<u64>,
    num_pp_microbatches: Param<u64>,
    tokens_per_microbatch: Param<u64>,
    tokens_per_train_step: Param<i64>,
    max_context_length: Param<u64>,
    steps: Param<u64>,
    warmup_steps: Param<f64>,
    disable_cuda_graphs: Param<bool>,
}

impl Inputs {
    fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        Inputs {
            cluster: ClusterInputs::read(&mut r),
            dp_replicate: r.count(Field::DataParallelReplicateDegree),
            dp_shard: r.int(Field::DataParallelShardDegree),
            tp: r.count(Field::TensorParallelDegree),
            cp: r.count(Field::ContextParallelDegree),
            pp: r.count(Field::PipelineParallelDegree),
            ep: r.count(Field::ExpertParallelDegree),
            sequence_parallel: r.flag(Field::EnableSequenceParallel),
            pp_microbatch_size: r.count(Field::PipelineParallelMicrobatchSize),
            local_batch_size: r.count(Field::LocalBatchSize),
            global_batch_size: r.int(Field::GlobalBatchSize),
            seq_len: r.count(Field::SeqLen),
            num_pp_microbatches: r.count(Field::NumPpMicrobatches),
            tokens_per_microbatch: r.count(Field::NumTokensPerMicrobatchPerDpRank),
            tokens_per_train_step: r.int(Field::NumTokensPerTrainStep),
            max_context_length: r.count(Field::MaxContextLength),
            steps: r.count(Field::Steps),
            warmup_steps: r.real(Field::WarmupSteps),
            disable_cuda_graphs: r.flag(Field::DisableCudaGraphs),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; an unknown id gets the
/// default's, [`spec::release_at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let version = Version::at(release);
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    Calc {
        inputs: i,
        version,
        report: &mut report,
    }
    .run(raw);
    report
}

/// `seq_len_divisor` (`torchtitan/trainer.py`): `(tp if enable_sequence_parallel else 1) ×
/// (2·cp if cp > 1 else 1)`.
fn seq_divisor(sequence_parallel: bool, tp: u64, cp: u64) -> u128 {
    u128::from(if sequence_parallel { tp } else { 1 }) * if cp > 1 { 2 * u128::from(cp) } else { 1 }
}

/// For the layout explorer's memo: which layouts' tensor and context sizes matter only through
/// their products (as they do for the batch, accumulation and steps). They do unless expert
/// parallelism is on or the sequence (0.3.0) or token (HEAD) count fails the divisor check,
/// whose refusal quotes the sizes themselves, and is the layout's first new error: a pipelined
/// layout is refused before it, in the checks stage, for CUDA graphs (the same message for
/// every such layout) unless they are disabled or the current inputs have that error already.
pub struct SizeCheck {
    n: Option<u64>,
    sequence_parallel: Option<bool>,
    ep_off: bool,
    pipelines_refused_first: bool,
}

impl SizeCheck {
    pub fn new(release: &str, raw: &RawInputs) -> SizeCheck {
        let mut scratch = Report::default();
        let i = Inputs::parse(raw, &mut scratch);
        SizeCheck {
            n: match Version::at(release) {
                Version::Tokens => i.tokens_per_microbatch.or(DEFAULT_TOKENS_PER_MICROBATCH),
                Version::Batch => i.seq_len.or(DEFAULT_SEQ_LEN),
            },
            sequence_parallel: i.sequence_parallel.or(true),
            ep_off: i.ep.or(1) == Some(1),
            // `config_checks`: CUDA graphs on (the default) refuse every pipelined layout;
            // with the current inputs pipelined, that refusal is theirs too and not a row's
            pipelines_refused_first: matches!(
                i.disable_cuda_graphs,
                Param::Absent | Param::Given(false)
            ) && matches!(i.pp, Param::Absent | Param::Given(0 | 1)),
        }
    }

    pub fn products_only(&self, tp: u64, cp: u64, pp: u64) -> bool {
        match (self.ep_off, self.sequence_parallel, self.n) {
            (true, _, _) if pp > 1 && self.pipelines_refused_first => true,
            (true, Some(sp), Some(n)) => u128::from(n) % seq_divisor(sp, tp, cp) == 0,
            _ => false,
        }
    }
}

/// The resolved parallel dimensions (after `_validate`).
#[derive(Clone, Copy)]
struct Dims {
    dp_replicate: u64,
    dp_shard: u64,
    tp: u64,
    cp: u64,
    pp: u64,
}

impl Dims {
    /// The "batch" mesh: data loading and the global batch (`dp_replicate * dp_shard`).
    fn batch_degree(self) -> u128 {
        u128::from(self.dp_replicate) * u128::from(self.dp_shard)
    }
}

/// The rules at work: the typed inputs and the report being filled.
struct Calc<'a> {
    inputs: Inputs,
    version: Version,
    report: &'a mut Report,
}

/// `x` as a Python int result.
fn int(x: u128) -> Option<Num> {
    i128::try_from(x).ok().map(Num::Int)
}

/// The nearest multiples of `unit` around `x` (below only when positive).
fn multiples_around(x: u128, unit: u128) -> Vec<u128> {
    let below = x / unit * unit;
    let mut out = Vec::new();
    if below > 0 {
        out.push(below);
    }
    if let Some(above) = below.checked_add(unit) {
        out.push(above);
    }
    out
}

/// The divisors of `n` nearest to `x`, one below and one above (bounded scan).
fn divisors_around(n: u128, x: u128) -> Vec<u128> {
    const SCAN: u128 = 100_000;
    let lower = (1..x.min(n + 1))
        .rev()
        .take(SCAN as usize)
        .find(|d| n % d == 0);
    let upper = (x.saturating_add(1)..=n.min(x.saturating_add(SCAN))).find(|d| n % d == 0);
    lower.into_iter().chain(upper).collect()
}

fn join(v: &[u128]) -> String {
    v.iter()
        .map(u128::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

impl Calc<'_> {
    /// The stages, in torchtitan's order: the config (its ignored keys, the step count and the
    /// scheduler's warmup are read first), `JobConfig` checks, `ParallelDims` (grid), the
    /// trainer's batch (0.3.0) or token budget (HEAD).
    fn run(mut self, raw: &RawInputs) {
        self.report.plan.seq_len = self.inputs.seq_len.positive_or(Some(DEFAULT_SEQ_LEN));
        self.ignored_fields(raw);
        self.report.enter(Stage::Schedule);
        self.schedule();
        self.report.enter(Stage::Grid);
        let ws = self.inputs.cluster.world_size(self.report);
        self.report.enter(Stage::Checks);
        self.config_checks();
        self.report.enter(Stage::Grid);
        let dims = ws.and_then(|ws| self.parallel_dims(ws));
        if let Some(d) = dims {
            self.expert_parallel(d);
            self.sequence_divisor(d);
            self.report.enter(Stage::Batch);
            match self.version {
                Version::Batch => self.batch(d),
                Version::Tokens => self.tokens(d),
            }
        }
    }

    fn ignored_fields(&mut self, raw: &RawInputs) {
        let (other, this) = match self.version {
            Version::Batch => (TOKEN_FIELDS, "0.3.0"),
            Version::Tokens => (BATCH_FIELDS, "HEAD (after #4121)"),
        };
        for &f in other {
            if raw.is_given(f) {
                self.report.diag(
                    f,
                    Level::Note,
                    format!("torchtitan {this} has no {}; it is ignored here", f.key()),
                );
            }
        }
    }
}
