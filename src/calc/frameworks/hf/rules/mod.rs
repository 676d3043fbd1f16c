//! Hugging Face transformers `Trainer` with accelerate's data sharding: transformers 5.25 (the
//! default; 5.17 through 5.25 share this math, `train_sampling_strategy="batch_rebalance"`
//! included), 5.23 (the same rules; old links without `version=` mean it; 5.14–5.16 share the math
//! but have no batch_rebalance), 4.57 (4.53–4.57), 4.52 and 4.51, each with accelerate 1.13
//! (batch_rebalance on more than one data process needs accelerate ≥ 1.14).
//!
//! Mirrors, in the Trainer's order of execution:
//! - `TrainingArguments.__post_init__`, `transformers/training_args.py` (the warmup checks, the
//!   "must be an integer if bigger than 1" checks of logging/eval/save steps, non-zero logging);
//! - `ParallelismConfig.__post_init__` / `_validate_accelerator`, `accelerate/parallelism_config.py`
//!   (sizes ≥ 1, CP and SP exclusive, `total_size == num_processes` except for DeepSpeed SP);
//! - `prepare_data_loader` and `BatchSamplerShard.__len__`, `accelerate/data_loader.py` (TP and CP
//!   ranks share a batch; `even_batches` pads the shard, `drop_last` floors it);
//! - `Trainer._get_train_sampler` and `BatchRebalanceSampler`, `transformers/trainer_pt_utils.py`
//!   (5.17+: global batches of per-device × GA × world_size rows, every rank its own micro-batches,
//!   accelerate's shard switched off; torch's `RandomSampler` refuses an empty dataset);
//! - `Trainer.get_total_train_batch_size` and `Trainer.set_initial_training_values`,
//!   `transformers/trainer.py` (the logged total, SP's dataloader adapter, steps per epoch,
//!   `max_steps`, the empty-dataloader error);
//! - `TrainingArguments.get_warmup_steps` and `TrainerState.compute_steps`,
//!   `transformers/trainer_callback.py` (ratios of `max_steps`).
//!
//! Every release was checked by running its own code: `tests/fixtures/hf.txt`.
//!
//! One file per stage: this file holds the release table, the form, the typed inputs and `Calc::run`
//! (the stages in order); `checks.rs`, `grid.rs`, `batch.rs`, `steps.rs` and `schedule.rs` hold
//! each stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, float_repr};
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Num, Output, Param, RawInputs, Refusal, Report, Stage};

mod batch;
mod checks;
mod grid;
mod schedule;
mod steps;

/// The releases dpcalc models with the rules of each, newest release (the default) first.
const TABLE: ReleaseTable<Version, 5> = [
    (
        Release {
            id: "5.25",
            label: "5.25 (5.17–5.25: dp = world // tp // cp // sp; batch_rebalance sampler)",
        },
        Version::V5,
    ),
    (
        Release {
            id: "5.23",
            label: "5.23 (the same rules as 5.25; also 5.14–5.16, which lack batch_rebalance)",
        },
        Version::V5,
    ),
    (
        Release {
            id: "4.57",
            label: "4.57 (4.53–4.57: logged total uses world // tp)",
        },
        Version::V457,
    ),
    (
        Release {
            id: "4.52",
            label: "4.52 (logged total uses the whole world)",
        },
        Version::V452,
    ),
    (
        Release {
            id: "4.51",
            label: "4.51 (steps per epoch rounded down)",
        },
        Version::V451,
    ),
];

/// The releases dpcalc models, newest release (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism (ParallelismConfig)",
        &[Field::TpSize, Field::CpSize, Field::SpSize],
    ),
    (
        "Batch",
        &[
            Field::PerDeviceTrainBatchSize,
            Field::GradientAccumulationSteps,
            Field::DataloaderDropLast,
            Field::MaxLength,
            Field::TrainSamplingStrategy,
        ],
    ),
    (
        "Schedule",
        &[
            Field::NumSamples,
            Field::NumTrainEpochs,
            Field::MaxSteps,
            Field::WarmupSteps,
            Field::WarmupRatio,
            Field::LoggingSteps,
            Field::EvalSteps,
            Field::SaveSteps,
        ],
    ),
    (
        "Model & memory",
        &[
            Field::ModelNameOrPath,
            Field::GradientCheckpointing,
            Field::TorchCompile,
            Field::Optim,
            Field::ZeroStage,
            Field::OffloadOptimizerDevice,
            Field::OffloadParamDevice,
            Field::ZeroInit,
        ],
    ),
    crate::calc::field::ARCHITECTURE,
];

pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TotalTrainBatchSize,
    Output::StepsPerEpoch,
    Output::MaxSteps,
    Output::WarmupSteps,
    Output::LoggingSteps,
    Output::EvalSteps,
    Output::SaveSteps,
    Output::TokensPerStep,
];

pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::TpSize,
    Field::PerDeviceTrainBatchSize,
    Field::GradientAccumulationSteps,
    Field::NumSamples,
    Field::NumTrainEpochs,
];

/// The Trainer's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => ("Data-parallel replicas", "world_size // tp // cp // sp"),
        Output::StepsPerEpoch => ("Update steps per epoch", "num_update_steps_per_epoch"),
        Output::TotalTrainBatchSize => (
            "Total train batch size (as the Trainer logs it)",
            "total_train_batch_size",
        ),
        Output::WarmupSteps => ("Warmup steps", "get_warmup_steps(max_steps)"),
        _ => return None,
    })
}

// ---- defaults (`training_args.py`) ---------------------------------------------------------
const DEFAULT_PER_DEVICE: u64 = 8;
const DEFAULT_EPOCHS: f64 = 3.0;
const DEFAULT_LOGGING_STEPS: f64 = 500.0;
const DEFAULT_SAVE_STEPS: f64 = 500.0;

/// Which Trainer's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V451,
    V452,
    V457,
    /// 5.14 – 5.25 (the releases 5.25 and 5.23).
    V5,
}

impl Version {
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    pub fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
    }

    /// ParallelismConfig is passed to accelerate (cp_size, sp_size exist).
    fn has_pc(self) -> bool {
        self >= Version::V457
    }
}

struct Inputs {
    cluster: ClusterInputs,
    tp: Param<u64>,
    cp: Param<u64>,
    sp: Param<u64>,
    per_device: Param<u64>,
    ga: Param<u64>,
    drop_last: Param<bool>,
    max_length: Param<u64>,
    num_samples: Param<u64>,
    epochs: Param<f64>,
    max_steps: Param<u64>,
    warmup_steps: Param<f64>,
    warmup_ratio: Param<f64>,
    logging_steps: Param<f64>,
    eval_steps: Param<f64>,
    save_steps: Param<f64>,
    /// `train_sampling_strategy` as typed (checked in `sampling_checks`).
    strategy: Param<String>,
    /// The interval keys written as a float literal (`1.0`, `1e0`): Python keeps such a 1 a
    /// float, while a `1` written as an int stays an int.
    float_written: Vec<Field>,
}

impl Inputs {
    fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        Inputs {
            cluster: ClusterInputs::read(&mut r),
            tp: r.count(Field::TpSize),
            cp: r.count(Field::CpSize),
            sp: r.count(Field::SpSize),
            per_device: r.count(Field::PerDeviceTrainBatchSize),
            ga: r.count(Field::GradientAccumulationSteps),
            drop_last: r.flag(Field::DataloaderDropLast),
            max_length: r.count(Field::MaxLength),
            num_samples: r.count(Field::NumSamples),
            epochs: r.real(Field::NumTrainEpochs),
            // an int whose default is -1: any negative value means "by epochs"
            max_steps: match r.int(Field::MaxSteps) {
                Param::Given(v) if v < 0 => Param::Absent,
                Param::Given(v) => Param::Given(v.unsigned_abs()),
                Param::Absent => Param::Absent,
                Param::Invalid => Param::Invalid,
            },
            warmup_steps: r.real(Field::WarmupSteps),
            warmup_ratio: r.real(Field::WarmupRatio),
            logging_steps: r.real(Field::LoggingSteps),
            eval_steps: r.real(Field::EvalSteps),
            save_steps: r.real(Field::SaveSteps),
            strategy: r.text(Field::TrainSamplingStrategy),
            float_written: [Field::LoggingSteps, Field::EvalSteps, Field::SaveSteps]
                .into_iter()
                .filter(|&f| raw.get(f).trim().contains(['.', 'e', 'E']))
                .collect(),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; an unknown id gets the
/// default's, [`spec::release_at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let (Release { id: name, .. }, v) = spec::release_at(&TABLE, release);
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    (report.plan.rows, report.plan.epochs) = (i.num_samples.given(), i.epochs.given());
    negative_warmup_texts(v, raw, &mut report);
    Calc {
        inputs: i,
        version: v,
        name,
        sampling: Sampling::Random,
        report: &mut report,
    }
    .run();
    report
}

/// A negative warmup is refused by `TrainingArguments.__post_init__`: the parse error at the field
/// quotes the Trainer's own text.
fn negative_warmup_texts(v: Version, raw: &RawInputs, report: &mut Report) {
    // the texts are written only for a field that has such an error (the layout explorer
    // computes every layout's inputs, almost none of which do)
    let text = |field: Field| {
        if field == Field::WarmupRatio {
            "warmup_ratio must lie in range [0,1]".to_string()
        } else if v == Version::V5 {
            // 5.23 (5.16.1 said "warmup_steps must be an integer or a float")
            let shown = raw
                .get(Field::WarmupSteps)
                .trim()
                .parse::<f64>()
                .map_or_else(|_| "…".to_string(), float_repr);
            format!("Got warmup_steps = {shown}, Expected value warmup_steps >= 0")
        } else {
            "warmup_steps must be of type int and must be 0 or a positive integer.".to_string()
        }
    };
    for field in [Field::WarmupSteps, Field::WarmupRatio] {
        if raw.conflict(field).is_some() {
            continue;
        }
        for d in report.diags.iter_mut() {
            if d.field == field
                && d.level == Level::Error
                && d.refusal.is_none()
                && d.message.contains("cannot be negative")
            {
                let refusal = Refusal::new("TrainingArguments raises ValueError", text(field))
                    .fix(format!("{}. Use 0 or a positive value.", d.message));
                d.message = refusal.message();
                d.refusal = Some(refusal);
            }
        }
    }
}

/// The rules at work: the typed inputs and the report being filled.
struct Calc<'a> {
    inputs: Inputs,
    version: Version,
    /// The release id (`5.25`, `5.23`, ...), for messages.
    name: &'static str,
    /// The sampler `Trainer._get_train_sampler` builds (set by `sampling_checks`).
    sampling: Sampling,
    report: &'a mut Report,
}

/// `TrainingArguments.train_sampling_strategy` (transformers 5; v4 always samples randomly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sampling {
    /// torch's `RandomSampler` (the default, and what any unchecked string gets).
    Random,
    Sequential,
    /// `LengthGroupedSampler`: the same counts as random.
    GroupByLength,
    /// `BatchRebalanceSampler` (5.17+).
    BatchRebalance,
}

/// The values 5.17–5.25 list as the field's `choices`.
const STRATEGIES: &str = "'random', 'sequential', 'group_by_length', 'batch_rebalance'";

/// accelerate 1.13's `BatchSamplerShard.__init__` check, gone in 1.14.
const EVEN_BATCHES: &str =
    "ValueError: You need to use `even_batches=False` when the batch sampler has no batch size. \
If you are not calling this method directly, set `accelerator.even_batches=False` instead.";

fn int(x: u128) -> Option<Num> {
    i128::try_from(x).ok().map(Num::Int)
}

/// The resolved parallel layout.
#[derive(Clone, Copy)]
struct Dims {
    ws: u64,
    tp: u64,
    cp: u64,
    sp: u64,
    /// world // tp // cp // sp.
    dp: u64,
}

impl Calc<'_> {
    /// The stages, in the Trainer's order: `TrainingArguments.__post_init__` (checks), the world
    /// and accelerate's `ParallelismConfig` (grid), the batch, `set_initial_training_values`
    /// (steps), `get_warmup_steps` and `TrainerState.compute_steps` (schedule).
    fn run(mut self) {
        self.report.plan.seq_len = self.inputs.max_length.positive_or(None);
        self.report.enter(Stage::Grid);
        let ws = self.inputs.cluster.world_size(self.report);
        self.report.enter(Stage::Checks);
        self.args_checks();
        self.sampling = self.sampling_checks();
        self.report.enter(Stage::Grid);
        let dims = ws.and_then(|ws| self.dims(ws));
        self.report.enter(Stage::Batch);
        let batch = self.batch(dims);
        self.report.enter(Stage::Steps);
        let max_steps = self.steps(dims);
        self.report.enter(Stage::Schedule);
        if let Some(m) = max_steps {
            self.warmup(m);
            self.intervals(m);
        }
        self.report.enter(Stage::Tokens);
        if let (Some(g), Some(len)) = (batch, self.inputs.max_length.given()) {
            match g.checked_mul(len.into()).and_then(int) {
                Some(t) => {
                    self.report.set(Output::TokensPerStep, t);
                    self.report.explain_with(
                        Output::TokensPerStep,
                        "token slots per step = global batch × max_length",
                        || format!("tokens = {g} × {len} = {}", t.raw()),
                    );
                }
                None => self.report.diag(
                    Field::MaxLength,
                    Level::Error,
                    "global batch × max_length is too large to count",
                ),
            }
        }
    }
}

trait FilterPos {
    fn filter_pos(self) -> Param<u64>;
}

impl FilterPos for Param<u64> {
    fn filter_pos(self) -> Param<u64> {
        match self {
            Param::Given(m) if m > 0 => Param::Given(m),
            Param::Given(_) => Param::Absent,
            p => p,
        }
    }
}
