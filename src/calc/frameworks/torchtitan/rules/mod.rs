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

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Num, Output, Param, RawInputs, Refusal, Report, Stage};

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
        &[Field::ModelId, Field::ActivationCheckpointMode],
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
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    world_size: Param<u64>,
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
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
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
/// whose refusal quotes the sizes themselves.
pub struct SizeCheck {
    n: Option<u64>,
    sequence_parallel: Option<bool>,
    ep_off: bool,
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
        }
    }

    pub fn products_only(&self, tp: u64, cp: u64) -> bool {
        match (self.ep_off, self.sequence_parallel, self.n) {
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
        let ws = cluster::world_size(
            self.inputs.nodes,
            self.inputs.gpus_per_node,
            self.inputs.world_size,
            self.report,
        );
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
            if !raw.get(f).trim().is_empty() {
                self.report.diag(
                    f,
                    Level::Note,
                    format!("torchtitan {this} has no {}; it is ignored here", f.key()),
                );
            }
        }
    }

    // ---- steps and warmup (`training.steps`, `lr_scheduler.warmup_steps`) ------------------

    fn schedule(&mut self) {
        let steps = self.inputs.steps.or(DEFAULT_STEPS);
        if let Some(s) = steps {
            self.report.set(Output::MaxSteps, Num::Int(s.into()));
            self.report.explain(
                Output::MaxSteps,
                "training.steps (optimizer steps; default 10000; torchtitan has no epochs)",
                format!("steps = {s}"),
            );
        }
        let warmup = match self.inputs.warmup_steps {
            Param::Given(w) if w.fract() != 0.0 || w >= 1.8e19 => {
                self.report.diag(
                    Field::WarmupSteps,
                    Level::Error,
                    format!(
                        "lr_scheduler.warmup_steps is an int in torchtitan: \u{201c}{w}\u{201d} is not a whole number of steps it accepts"
                    ),
                );
                None
            }
            Param::Given(w) => Some(w as u64),
            Param::Absent => Some(DEFAULT_WARMUP_STEPS),
            Param::Invalid => None,
        };
        let (Some(s), Some(w)) = (steps, warmup) else {
            return;
        };
        // lr_scheduler.py: warmup_steps > total_steps is clamped with a warning.
        let used = w.min(s);
        if w > s {
            self.report.diag(
                Field::WarmupSteps,
                Level::Warning,
                format!(
                    "torchtitan logs \u{201c}Warmup steps ({w}) exceed total steps ({s}). Adjusting warmup steps to {s}.\u{201d}{}",
                    if self.inputs.warmup_steps.is_given() { "" } else { " (the default warmup is 200 steps)" }
                ),
            );
        }
        if s == 0 {
            self.report.diag(
                Field::Steps,
                Level::Warning,
                "training.steps 0: the training loop runs while step < steps, so nothing trains",
            );
        }
        self.report.set(Output::WarmupSteps, Num::Int(used.into()));
        self.report.explain(
            Output::WarmupSteps,
            "warmup = min(lr_scheduler.warmup_steps (default 200), training.steps)",
            format!("warmup = min({w}, {s}) = {used}"),
        );
    }

    // ---- Trainer.Config.__post_init__ ------------------------------------------------------

    fn config_checks(&mut self) {
        let pp = self.inputs.pp.given().filter(|&p| p > 1);
        if pp.is_some() && self.inputs.disable_cuda_graphs == Param::Absent
            || pp.is_some() && self.inputs.disable_cuda_graphs == Param::Given(false)
        {
            self.report.refuse(
                Field::DisableCudaGraphs,
                Refusal::new(
                    "torchtitan refuses",
                    "CUDA graphs do not support pipeline parallelism yet. Set --training.disable_cuda_graphs.",
                )
                .fix("Fix: disable_cuda_graphs = true (training.disable_cuda_graphs)."),
            );
        }
        match self.version {
            Version::Batch => {
                let Some(mbs) = self.inputs.pp_microbatch_size.or(1) else {
                    return;
                };
                if mbs == 0 {
                    self.report.refuse(
                        Field::PipelineParallelMicrobatchSize,
                        Refusal::new(
                            "torchtitan refuses",
                            "parallelism.pipeline_parallel_microbatch_size must be greater than 0.",
                        ),
                    );
                    return;
                }
                let (Some(_), Some(lbs)) = (
                    pp,
                    self.inputs.local_batch_size.or(DEFAULT_LOCAL_BATCH_SIZE),
                ) else {
                    return;
                };
                if lbs % mbs != 0 {
                    let fix_mbs = divisors_around(lbs.into(), mbs.into());
                    let fix_lbs = multiples_around(lbs.into(), mbs.into());
                    self.report.refuse(
                        Field::PipelineParallelMicrobatchSize,
                        Refusal::new(
                            "torchtitan refuses",
                            format!(
                                "training.local_batch_size ({lbs}) must be evenly divisible by \
                                 parallelism.pipeline_parallel_microbatch_size ({mbs}) when pipeline \
                                 parallelism is enabled."
                            ),
                        )
                        .fix(format!(
                            "Nearest valid: pipeline_parallel_microbatch_size {}, or local_batch_size {}.",
                            join(&fix_mbs),
                            join(&fix_lbs)
                        )),
                    );
                }
            }
            Version::Tokens => {
                if self.inputs.num_pp_microbatches == Param::Given(0) {
                    self.report.refuse(
                        Field::NumPpMicrobatches,
                        Refusal::new(
                            "torchtitan refuses",
                            "parallelism.num_pp_microbatches must be greater than 0.",
                        ),
                    );
                }
            }
        }
    }

    // ---- ParallelDims._validate --------------------------------------------------------------

    fn degree(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p.or(1)? {
            0 => {
                self.report.refuse(
                    field,
                    Refusal::new(
                        format!("{} 0: torchtitan stops with AssertionError", field.key()),
                        "Parallelism degree should be >= 1, except for dp_shard",
                    )
                    .fix("1 means disabled."),
                );
                None
            }
            d => Some(d),
        }
    }

    fn parallel_dims(&mut self, ws: u64) -> Option<Dims> {
        let dp_replicate =
            self.degree(Field::DataParallelReplicateDegree, self.inputs.dp_replicate);
        let cp = self.degree(Field::ContextParallelDegree, self.inputs.cp);
        let tp = self.degree(Field::TensorParallelDegree, self.inputs.tp);
        let pp = self.degree(Field::PipelineParallelDegree, self.inputs.pp);
        let ep = self.degree(Field::ExpertParallelDegree, self.inputs.ep);
        let shard = match self.inputs.dp_shard.or(-1) {
            Some(s) if s == -1 || s >= 1 => Some(s),
            Some(s) => {
                self.report.refuse(
                    Field::DataParallelShardDegree,
                    Refusal::new(
                        format!(
                            "data_parallel_shard_degree {s}: torchtitan stops with AssertionError"
                        ),
                        "dp_shard must -1 or >=1.",
                    )
                    .fix("Use -1 to fill the rest of the world."),
                );
                None
            }
            None => None,
        };
        let (Some(dp_replicate), Some(cp), Some(tp), Some(pp), Some(_), Some(shard)) =
            (dp_replicate, cp, tp, pp, ep, shard)
        else {
            return None;
        };
        let others = [dp_replicate, cp, tp, pp]
            .iter()
            .try_fold(1u128, |acc, &d| acc.checked_mul(d.into()));
        let others_name = "data_parallel_replicate_degree × context_parallel_degree × tensor_parallel_degree × pipeline_parallel_degree";
        let Some(others) = others.filter(|&o| o <= u128::from(u64::MAX)) else {
            self.report.diag(
                Field::WorldSize,
                Level::Error,
                format!("{others_name} is larger than any world size; torchtitan stops with AssertionError: Invalid parallel dims"),
            );
            return None;
        };
        let dp_shard = if shard < 0 {
            // parallel_dims.py: dp_shard = world_size // (dp_replicate * cp * tp * pp)  (floor)
            let fill = u128::from(ws) / others;
            self.report.explain(
                Output::DataParallelShardDegree,
                "data_parallel_shard_degree -1 = world_size // (dp_replicate × cp × tp × pp)",
                format!("dp_shard = {ws} // ({dp_replicate} × {cp} × {tp} × {pp}) = {ws} // {others} = {fill}"),
            );
            if fill == 0 {
                let fix = cluster::nearest_valid(ws, others as u64, others_name);
                self.report.refuse(
                    Field::DataParallelShardDegree,
                    Refusal::new(
                        "torchtitan stops with a bare AssertionError (no message) in ParallelDims._validate",
                        "assert dp_shard >= 1",
                    )
                    .fix(format!(
                        "The -1 fill is world_size // ({dp_replicate} × {cp} × {tp} × {pp}) = {ws} // {others} = 0. {fix}"
                    )),
                );
                return None;
            }
            fill as u64
        } else {
            self.report.explain(
                Output::DataParallelShardDegree,
                "data_parallel_shard_degree (as given)",
                format!("dp_shard = {shard}"),
            );
            shard as u64
        };
        let product = others.checked_mul(dp_shard.into());
        if product != Some(ws.into()) {
            let shown = product.map_or("more than 2^128".to_string(), |p| p.to_string());
            let text = format!(
                "Invalid parallel dims: dp_replicate({dp_replicate}) * dp_shard({dp_shard}) * cp({cp}) * tp({tp}) * pp({pp}) != WORLD_SIZE({ws})"
            );
            let fix = if shard < 0 {
                format!(
                    "With dp_shard -1 the world size must be a multiple of {others_name} = {others}. {}",
                    cluster::nearest_valid(ws, others as u64, others_name)
                )
            } else if u128::from(ws) % others == 0 {
                format!(
                    "Nearest valid: world_size {shown}, or data_parallel_shard_degree {} (or -1) on {ws} GPUs.",
                    u128::from(ws) / others
                )
            } else {
                format!(
                    "Nearest valid: world_size {shown}; {ws} GPUs are not a multiple of {others_name} = {others}. {}",
                    cluster::nearest_valid(ws, others as u64, others_name)
                )
            };
            self.report.refuse(
                Field::WorldSize,
                Refusal::new("torchtitan stops with AssertionError", text)
                    .fix(format!("(the product is {shown}). {fix}")),
            );
            self.report.diag(
                Field::DataParallelShardDegree,
                Level::Error,
                format!("dp_replicate × dp_shard × cp × tp × pp = {shown} must equal world_size {ws} (see world_size)"),
            );
            return None;
        }
        self.report
            .set(Output::DataParallelShardDegree, Num::Int(dp_shard.into()));
        let d = Dims {
            dp_replicate,
            dp_shard,
            tp,
            cp,
            pp,
        };
        let deg = d.batch_degree();
        if let Some(n) = int(deg) {
            self.report.set(Output::DpWorldSize, n);
        }
        if let Ok(dp) = u64::try_from(deg) {
            self.report.publish_grid(crate::calc::Grid {
                world: ws,
                dp,
                tp,
                cp,
                sp: 1,
                pp,
                ep: self.inputs.ep.given().unwrap_or(1),
            });
        }
        self.report.explain(
            Output::DpWorldSize,
            "data-parallel (batch mesh) degree = dp_replicate × dp_shard; cp, tp and pp ranks share a batch",
            format!("dp = {dp_replicate} × {dp_shard} = {deg}"),
        );
        Some(d)
    }

    /// EP borrows ranks from dp_shard × cp × tp. HEAD checks it in `_validate`; 0.3.0 fails when
    /// `build_mesh` unflattens the sparse mesh `(pp, dp_replicate, efsdp, ep)`.
    fn expert_parallel(&mut self, d: Dims) {
        let Some(ep) = self.inputs.ep.or(1) else {
            return;
        };
        if ep <= 1 {
            return;
        }
        let region = u128::from(d.dp_shard) * u128::from(d.cp) * u128::from(d.tp);
        if region % u128::from(ep) == 0 {
            return;
        }
        let fix = format!(
            "Nearest valid: expert_parallel_degree {} (a divisor of dp_shard × cp × tp = {region}).",
            join(&divisors_around(region, ep.into()))
        );
        let refusal = match self.version {
            Version::Tokens => Refusal::new(
                "torchtitan refuses",
                format!("expert_parallel_degree ({ep}) must divide dp_shard * cp * tp ({region})"),
            )
            .fix(fix),
            Version::Batch => {
                let efsdp = region / u128::from(ep);
                let sizes = (d.pp, d.dp_replicate, efsdp, ep);
                let prod = u128::from(d.pp)
                    .checked_mul(d.dp_replicate.into())
                    .and_then(|x| x.checked_mul(efsdp))
                    .and_then(|x| x.checked_mul(ep.into()));
                let ws = u128::from(d.pp) * d.batch_degree() * u128::from(d.cp) * u128::from(d.tp);
                Refusal::new(
                    "torchtitan 0.3.0 does not check this in ParallelDims; building the expert mesh fails \
                     with ValueError",
                    format!(
                        "The product of mesh_sizes=({}, {}, {}, {}) is {}, but the original dimension at \
                         dim=0 has size {ws}. These must be equal for unflatten to work correctly.",
                        sizes.0,
                        sizes.1,
                        sizes.2,
                        sizes.3,
                        prod.map_or("too large".to_string(), |p| p.to_string())
                    ),
                )
                .fix(format!(
                    "The expert degree must divide dp_shard × cp × tp = {region}. {fix}"
                ))
            }
        };
        self.report.refuse(Field::ExpertParallelDegree, refusal);
    }

    /// `seq_len_divisor = (tp if enable_sequence_parallel else 1) * (2 * cp if cp > 1 else 1)`.
    fn sequence_divisor(&mut self, d: Dims) {
        let Some(sp) = self.inputs.sequence_parallel.or(true) else {
            return;
        };
        let divisor = seq_divisor(sp, d.tp, d.cp);
        let (field, n) = match self.version {
            Version::Batch => (Field::SeqLen, self.inputs.seq_len.or(DEFAULT_SEQ_LEN)),
            Version::Tokens => (
                Field::NumTokensPerMicrobatchPerDpRank,
                self.inputs
                    .tokens_per_microbatch
                    .or(DEFAULT_TOKENS_PER_MICROBATCH),
            ),
        };
        let Some(n) = n else { return };
        if u128::from(n) % divisor == 0 {
            return;
        }
        let near = join(&multiples_around(n.into(), divisor));
        let text = match self.version {
            Version::Batch => format!(
                "Training sequence length ({n}) must be divisible by {divisor} for the configured sequence/context parallelism."
            ),
            Version::Tokens => format!(
                "The number of tokens per pipeline microbatch ({n}) must be divisible by {divisor} for the configured \
                 sequence/context parallelism."
            ),
        };
        let why = if sp && d.tp > 1 {
            format!(
                " The divisor is tensor_parallel_degree {} (sequence parallel on)",
                d.tp
            )
        } else {
            " The divisor is".to_string()
        };
        let cp = if d.cp > 1 {
            format!(" × 2 × context_parallel_degree {}", d.cp)
        } else {
            String::new()
        };
        self.report.refuse(
            field,
            Refusal::new("torchtitan refuses", text).fix(format!(
                "{}{cp} = {divisor}. Nearest valid: {} {near}.",
                why.trim_start(),
                field.key()
            )),
        );
    }

    // ---- 0.3.0: global batch and gradient accumulation (trainer.py) ------------------------

    fn batch(&mut self, d: Dims) {
        let deg = d.batch_degree();
        let (Some(lbs), Some(gbs_in), Some(seq)) = (
            self.inputs.local_batch_size.or(DEFAULT_LOCAL_BATCH_SIZE),
            self.inputs.global_batch_size.or(-1),
            self.inputs.seq_len.or(DEFAULT_SEQ_LEN),
        ) else {
            return;
        };
        let per_step = u128::from(lbs) * deg; // u64 × u64 fits u128
        let gbs = if gbs_in < 0 {
            self.report.explain(
                Output::GlobalBatchSize,
                "global_batch_size -1 = local_batch_size × dp (one micro batch per step)",
                format!("global_batch_size = {lbs} × {deg} = {per_step}"),
            );
            per_step
        } else {
            self.report.explain(
                Output::GlobalBatchSize,
                "training.global_batch_size (as given)",
                format!("global_batch_size = {gbs_in}"),
            );
            gbs_in as u128
        };
        if gbs == 0 {
            let why = if gbs_in == 0 {
                "global_batch_size 0"
            } else {
                "local_batch_size 0 makes the default global batch 0"
            };
            let field = if gbs_in == 0 {
                Field::GlobalBatchSize
            } else {
                Field::LocalBatchSize
            };
            self.report.refuse(
                field,
                Refusal::new(
                    format!("{why}: torchtitan stops with a bare AssertionError (no message)"),
                    "assert global_batch_size > 0",
                )
                .fix("Use -1 for local_batch_size × dp."),
            );
            return;
        }
        if per_step == 0 {
            self.report.refuse(
                Field::LocalBatchSize,
                Refusal::new(
                    "local_batch_size 0: torchtitan stops with",
                    "ZeroDivisionError: integer modulo by zero",
                ),
            );
            return;
        }
        if gbs % per_step != 0 {
            let near = join(&multiples_around(gbs, per_step));
            self.report.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "torchtitan stops with AssertionError",
                    format!(
                        "global batch size must be multiple of local batch size times data-parallel degree \
                         ({gbs} % ({lbs} * {deg}) != 0)"
                    ),
                )
                .fix(format!(
                    "Nearest valid: global_batch_size {near} (multiples of {lbs} × {deg} = {per_step}), or -1."
                )),
            );
            return;
        }
        let ga = gbs / per_step;
        let (Some(g), Some(a)) = (int(gbs), int(ga)) else {
            self.report.diag(
                Field::LocalBatchSize,
                Level::Error,
                format!("local_batch_size × dp = {lbs} × {deg} is too large for dpcalc to count exactly"),
            );
            return;
        };
        self.report.set(Output::GlobalBatchSize, g);
        self.report.set(Output::GradientAccumulationSteps, a);
        self.report.explain(
            Output::GradientAccumulationSteps,
            "gradient_accumulation_steps = global_batch_size // (local_batch_size × dp)",
            format!("gradient_accumulation_steps = {gbs} // ({lbs} × {deg}) = {ga}"),
        );
        // pipeline microbatches: local_batch_size // pipeline_parallel_microbatch_size (PP only)
        let mut pp_microbatches = Some(1);
        if d.pp > 1 {
            pp_microbatches = None;
            if let Some(mbs) = self.inputs.pp_microbatch_size.or(1).filter(|&m| m > 0) {
                let n = lbs / mbs;
                pp_microbatches = Some(n);
                self.report
                    .set(Output::NumPpMicrobatches, Num::Int(n.into()));
                self.report.explain(
                    Output::NumPpMicrobatches,
                    "pipeline microbatches = local_batch_size // pipeline_parallel_microbatch_size",
                    format!("microbatches = {lbs} // {mbs} = {n}"),
                );
            }
        } else {
            self.report.set(Output::NumPpMicrobatches, Num::Int(1));
        }
        // each GPU runs local_batch_size ÷ the pipeline's microbatches samples at a time
        if let Some(n) = pp_microbatches.filter(|&n| n > 0 && lbs % n == 0) {
            let n = u128::from(n);
            self.report
                .plan
                .publish_batch(u128::from(lbs) / n, ga.saturating_mul(n), gbs);
        }
        match gbs.checked_mul(seq.into()).and_then(int) {
            Some(t) => {
                self.report.set(Output::TokensPerStep, t);
                self.report.explain(
                    Output::TokensPerStep,
                    "tokens per step = global_batch_size × seq_len",
                    format!("tokens = {gbs} × {seq} = {}", t.raw()),
                );
            }
            None => self.report.diag(
                Field::SeqLen,
                Level::Error,
                "global_batch_size × seq_len is too large to count",
            ),
        }
    }

    // ---- HEAD: token budget (trainer.py after #4121) ---------------------------------------

    fn tokens(&mut self, d: Dims) {
        let deg = d.batch_degree();
        let (Some(per_mb), Some(npp), Some(step_in)) = (
            self.inputs
                .tokens_per_microbatch
                .or(DEFAULT_TOKENS_PER_MICROBATCH),
            self.inputs.num_pp_microbatches.or(1),
            self.inputs.tokens_per_train_step.or(-1),
        ) else {
            return;
        };
        if npp == 0 {
            return; // refused in config_checks
        }
        let npp = if d.pp > 1 { npp } else { 1 };
        self.report
            .set(Output::NumPpMicrobatches, Num::Int(npp.into()));
        let per_dp = u128::from(per_mb) * u128::from(npp);
        let Some(per_iter) = per_dp.checked_mul(deg) else {
            self.report.diag(
                Field::NumTokensPerMicrobatchPerDpRank,
                Level::Error,
                "tokens per gradient-accumulation iteration are too large to count",
            );
            return;
        };
        let step = if step_in < 0 {
            self.report.explain(
                Output::TokensPerStep,
                "num_tokens_per_train_step -1 = num_tokens_per_microbatch_per_dp_rank × num_pp_microbatches (PP only) × dp",
                format!("num_tokens_per_train_step = {per_mb} × {npp} × {deg} = {per_iter}"),
            );
            per_iter
        } else {
            step_in as u128
        };
        if per_iter == 0 {
            self.report.refuse(
                Field::NumTokensPerMicrobatchPerDpRank,
                Refusal::new(
                    "num_tokens_per_microbatch_per_dp_rank 0: torchtitan stops with",
                    "ZeroDivisionError: integer modulo by zero",
                ),
            );
            return;
        }
        if step % per_iter != 0 {
            let near = join(&multiples_around(step, per_iter));
            self.report.refuse(
                Field::NumTokensPerTrainStep,
                Refusal::new(
                    "torchtitan refuses",
                    format!(
                        "training.num_tokens_per_train_step ({step}) must be divisible by the number of \
                         tokens processed globally in one gradient accumulation iteration ({per_iter})."
                    ),
                )
                .fix(format!("Nearest valid: num_tokens_per_train_step {near}, or -1.")),
            );
            return;
        }
        let ga = step / per_iter;
        if ga == 0 {
            self.report.diag(
                Field::NumTokensPerTrainStep,
                Level::Warning,
                "num_tokens_per_train_step 0 is accepted, so gradient accumulation is 0: each optimizer step trains on no data. Use -1 for one microbatch per DP rank.",
            );
        }
        if let (Some(t), Some(a)) = (int(step), int(ga)) {
            self.report.set(Output::TokensPerStep, t);
            self.report.set(Output::GradientAccumulationSteps, a);
        }
        self.report.explain(
            Output::GradientAccumulationSteps,
            "gradient_accumulation_steps = num_tokens_per_train_step // (tokens per microbatch × num_pp_microbatches × dp)",
            format!("gradient_accumulation_steps = {step} // ({per_mb} × {npp} × {deg}) = {ga}"),
        );
        if let Some(ctx) = self.inputs.max_context_length.given() {
            if ctx == 0 {
                self.report.diag(
                    Field::MaxContextLength,
                    Level::Warning,
                    "max_context_length 0 leaves no room for any document",
                );
            }
        }
    }
}
