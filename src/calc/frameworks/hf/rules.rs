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

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, float_repr};
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Num, Output, Param, RawInputs, Refusal, Report, Stage};

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
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    world_size: Param<u64>,
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
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
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
        let ws = cluster::world_size(
            self.inputs.nodes,
            self.inputs.gpus_per_node,
            self.inputs.world_size,
            self.report,
        );
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
                    self.report.explain(
                        Output::TokensPerStep,
                        "token slots per step = global batch × max_length",
                        format!("tokens = {g} × {len} = {}", t.raw()),
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

    // ---- TrainingArguments.__post_init__ ---------------------------------------------------

    fn args_checks(&mut self) {
        // logging/eval/save: "must be an integer if bigger than 1"
        for (field, p) in [
            (Field::LoggingSteps, self.inputs.logging_steps),
            (Field::EvalSteps, self.inputs.eval_steps),
            (Field::SaveSteps, self.inputs.save_steps),
        ] {
            if let Param::Given(x) = p {
                if x > 1.0 && x.fract() != 0.0 {
                    let floor = x.floor();
                    self.report.refuse(
                        field,
                        Refusal::new(
                            "TrainingArguments refuses",
                            format!(
                                "--{} must be an integer if bigger than 1: {}",
                                field.key(),
                                float_repr(x)
                            ),
                        )
                        .fix(format!(
                            "Use a whole number ({} or {}) or a ratio below 1.",
                            float_repr(floor),
                            float_repr(floor + 1.0)
                        )),
                    );
                }
            }
        }
        if self.inputs.logging_steps == Param::Given(0.0) {
            self.report.refuse(
                Field::LoggingSteps,
                Refusal::new(
                    "TrainingArguments refuses",
                    "logging strategy IntervalStrategy.STEPS requires non-zero --logging_steps",
                )
                .fix("Use a positive interval (default 500)."),
            );
        }
        match self.version {
            Version::V5 => {
                if self.inputs.warmup_ratio.is_given() {
                    let shown = self
                        .inputs
                        .warmup_ratio
                        .given()
                        .map_or(String::new(), float_repr);
                    self.report.refuse(
                        Field::WarmupRatio,
                        Refusal::new(
                            format!(
                                "transformers {} has no warmup_ratio, and TrainingArguments refuses it",
                                self.name
                            ),
                            "TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'",
                        )
                        .fix(format!(
                            "Fix: warmup_steps = {shown} (below 1 it is a ratio of max_steps). From the command line \
                             HfArgumentParser stops first: “ValueError: Some specified arguments are not used by the \
                             HfArgumentParser: ['--warmup_ratio', '{shown}']”."
                        )),
                    );
                }
            }
            _ => {
                if let Param::Given(w) = self.inputs.warmup_steps {
                    if w.fract() != 0.0 || w >= 9.2e18 {
                        self.report.refuse(
                            Field::WarmupSteps,
                            Refusal::new(
                                "TrainingArguments refuses",
                                "warmup_steps must be of type int and must be 0 or a positive integer.",
                            )
                            .fix(format!(
                                "({}). For a fraction of the steps use warmup_ratio.",
                                float_repr(w)
                            )),
                        );
                    }
                }
                if let Param::Given(r) = self.inputs.warmup_ratio {
                    if r > 1.0 {
                        self.report.refuse(
                            Field::WarmupRatio,
                            Refusal::new(
                                "TrainingArguments refuses",
                                "warmup_ratio must lie in range [0,1]",
                            )
                            .fix(format!("(got {}).", float_repr(r))),
                        );
                    } else if r > 0.0 && self.inputs.warmup_steps.given().is_some_and(|w| w > 0.0) {
                        self.report.diag(
                            Field::WarmupRatio,
                            Level::Note,
                            "The Trainer logs \u{201c}Both warmup_ratio and warmup_steps given, warmup_steps will override any \
                             effect of warmup_ratio during training\u{201d}.",
                        );
                    }
                }
            }
        }
    }

    // ---- train_sampling_strategy (TrainingArguments, Trainer._get_train_sampler) ------------

    /// The sampler the Trainer builds. transformers 4 has no such key (its `TrainingArguments`
    /// refuses the keyword); in 5.x only the command-line parser checks the `choices`: in Python
    /// (and `parse_dict`/YAML) any other string is kept and samples randomly.
    fn sampling_checks(&mut self) -> Sampling {
        let Param::Given(given) = &self.inputs.strategy else {
            return Sampling::Random;
        };
        let given = given.clone();
        if self.version < Version::V5 {
            self.report.refuse(
                Field::TrainSamplingStrategy,
                Refusal::new(
                    format!(
                        "transformers {} has no train_sampling_strategy (transformers 5 replaced group_by_length with it), \
                         and TrainingArguments refuses it",
                        self.name
                    ),
                    "TrainingArguments.__init__() got an unexpected keyword argument 'train_sampling_strategy'",
                )
                .fix("Leave it out: v4 samples randomly (group_by_length=True groups by length; batch_rebalance came in 5.17)."),
            );
            return Sampling::Random;
        }
        let sampling = match given.as_str() {
            "random" => Sampling::Random,
            "sequential" => Sampling::Sequential,
            "group_by_length" => Sampling::GroupByLength,
            "batch_rebalance" => Sampling::BatchRebalance,
            other => {
                self.report.refuse(
                    Field::TrainSamplingStrategy,
                    Refusal::new(
                        "HfArgumentParser (the command line) refuses",
                        format!(
                            "argument --train_sampling_strategy/--train-sampling-strategy: invalid choice: '{}' \
                             (choose from {STRATEGIES})",
                            crate::calc::parse::shorten(other)
                        ),
                    )
                    .fix(
                        "The check is case-sensitive. TrainingArguments(...) in Python (and parse_dict or YAML) keeps any \
                         string unchecked and then samples randomly, as shown. Use random, sequential, group_by_length or \
                         batch_rebalance.",
                    ),
                );
                return Sampling::Random;
            }
        };
        if sampling == Sampling::BatchRebalance && self.name == "5.23" {
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Note,
                "batch_rebalance exists since transformers 5.17 (5.17–5.25 compute as shown). 5.14–5.16 have no such value: \
                 TrainingArguments(...) keeps the string unchecked and samples randomly (their command line refuses it), \
                 so for those releases leave it out.",
            );
        }
        sampling
    }

    // ---- ParallelismConfig (accelerate) and the data-parallel size --------------------------

    fn size(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        let v = p.or(1)?;
        if v == 0 {
            self.report.refuse(
                field,
                Refusal::new(
                    "accelerate refuses",
                    format!("{} must be at least 1, but got 0", field.key()),
                )
                .fix("Use 1 for none."),
            );
            return None;
        }
        Some(v)
    }

    fn dims(&mut self, ws: u64) -> Option<Dims> {
        let tp = self.size(Field::TpSize, self.inputs.tp);
        let (cp, sp) = if self.version.has_pc() {
            (
                self.size(Field::CpSize, self.inputs.cp),
                self.size(Field::SpSize, self.inputs.sp),
            )
        } else {
            for f in [Field::CpSize, Field::SpSize] {
                let p = if f == Field::CpSize {
                    self.inputs.cp
                } else {
                    self.inputs.sp
                };
                if p.given().is_some_and(|x| x != 1) {
                    self.report.diag(
                        f,
                        Level::Note,
                        format!(
                            "transformers {} passes no ParallelismConfig to accelerate: {} is not read (treated as 1)",
                            self.name,
                            f.key()
                        ),
                    );
                }
            }
            (Some(1), Some(1))
        };
        let (tp, cp, sp) = (tp?, cp?, sp?);
        if cp > 1 && sp > 1 {
            self.report.refuse(
                Field::CpSize,
                Refusal::new(
                    "accelerate refuses",
                    format!(
                        "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive. \
                         Got cp_size={cp} and sp_size={sp}. Please set either cp_size=1 or sp_size=1."
                    ),
                ),
            );
            return None;
        }
        let model = u128::from(tp) * u128::from(cp) * u128::from(sp);
        let (model_name, model_desc) = match (cp > 1, sp > 1) {
            (true, _) => ("tp_size × cp_size", format!("{tp} × {cp}")),
            (_, true) => ("tp_size × sp_size", format!("{tp} × {sp}")),
            _ => ("tp_size", tp.to_string()),
        };
        if u128::from(ws) % model != 0 {
            let fix = match u64::try_from(model) {
                Ok(m) => cluster::nearest_valid(ws, m, model_name),
                Err(_) => "Use smaller parallel sizes.".to_string(),
            };
            let floored = u128::from(ws) / model;
            // The Trainer's own functions still run on the floored sizes (what it would log);
            // dpcalc shows those values beside the refusal, as for axolotl.
            let shown = if floored == 0 {
                String::new()
            } else {
                format!(
                    " The values shown are what the Trainer's step functions compute with dp = {ws} // {model} = {floored}; no run starts."
                )
            };
            if !self.version.has_pc() {
                self.report.diag(
                    Field::WorldSize,
                    Level::Error,
                    format!(
                        "world_size {ws} is not a multiple of tp_size {tp}: torch cannot build the (dp, tp) device mesh for \
                         the model's tp_plan. {fix}{shown}"
                    ),
                );
            } else if sp > 1 {
                self.report.diag(
                    Field::WorldSize,
                    Level::Error,
                    format!(
                        "world_size {ws} is not a multiple of {model_name} = {model_desc}: accelerate skips its size check for \
                         DeepSpeed sequence parallelism, but DeepSpeed cannot split {ws} ranks into sequence-parallel groups of \
                         that size. {fix}{shown}"
                    ),
                );
            } else {
                let total = floored.max(1) * model;
                self.report.refuse(
                    Field::WorldSize,
                    Refusal::new(
                        "accelerate refuses",
                        format!(
                            "ParallelismConfig total_size ({total}) does not match num_processes ({ws}). \
                             Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size."
                        ),
                    )
                    .fix(format!(
                        "world_size must be a multiple of {model_name} = {model_desc}. {fix}{shown}"
                    )),
                );
            }
            if floored == 0 {
                return None;
            }
        }
        let dp = (u128::from(ws) / model) as u64;
        self.report.set(Output::DpWorldSize, Num::Int(dp.into()));
        self.report.explain(
            Output::DpWorldSize,
            if self.sampling == Sampling::BatchRebalance {
                "dp = world_size // tp_size // cp_size // sp_size (the Trainer's dp_world_size; batch_rebalance still \
                 gives every rank its own rows)"
            } else {
                "dp = world_size // tp_size // cp_size // sp_size (TP, CP and SP ranks share a batch)"
            },
            format!("dp = {ws} // {tp} // {cp} // {sp} = {dp}"),
        );
        self.report.publish_grid(crate::calc::Grid {
            tp,
            cp,
            sp,
            dp,
            ..crate::calc::Grid::data_parallel(ws)
        });
        Some(Dims { ws, tp, cp, sp, dp })
    }

    // ---- the batch: real global batch and the logged total ---------------------------------

    fn batch(&mut self, dims: Option<Dims>) -> Option<u128> {
        let b = self.inputs.per_device.or(DEFAULT_PER_DEVICE)?;
        let ga = self.inputs.ga.or(1)?;
        let rebalance = self.sampling == Sampling::BatchRebalance;
        if rebalance && (b == 0 || ga == 0) {
            // BatchRebalanceSampler.__init__: bare asserts, checked in this order
            let ws = dims.map_or("world_size".to_string(), |d| d.ws.to_string());
            if ga == 0 {
                self.report.refuse(
                    Field::GradientAccumulationSteps,
                    Refusal::new(
                        "BatchRebalanceSampler.__init__ stops at `assert grad_accum >= 1` (a bare assert, no message)",
                        "AssertionError",
                    )
                    .fix("gradient_accumulation_steps 0: use at least 1."),
                );
            } else {
                self.report.refuse(
                    Field::PerDeviceTrainBatchSize,
                    Refusal::new(
                        "BatchRebalanceSampler.__init__ stops at `assert effective_batch_size >= dp_size * grad_accum` \
                         (a bare assert, no message)",
                        "AssertionError",
                    )
                    .fix(format!(
                        "(effective_batch_size = 0 × {ga} × {ws} = 0, below {ws} × {ga}). per_device_train_batch_size 0: \
                         use at least 1."
                    )),
                );
            }
            return None;
        }
        if b == 0 {
            self.report.refuse(
                Field::PerDeviceTrainBatchSize,
                Refusal::new(
                    "torch's DataLoader raises",
                    "batch_size should be a positive integer value, but got batch_size=0",
                )
                .fix("per_device_train_batch_size 0: use at least 1."),
            );
        }
        if ga == 0 {
            self.report.refuse(
                Field::GradientAccumulationSteps,
                Refusal::new(
                    "the Trainer stops in num_update_steps_per_epoch with ZeroDivisionError",
                    "integer division or modulo by zero",
                )
                .fix("gradient_accumulation_steps 0: use at least 1."),
            );
        }
        if b == 0 || ga == 0 {
            return None;
        }
        self.report
            .set(Output::GradientAccumulationSteps, Num::Int(ga.into()));
        let d = dims?;
        let per_replica = u128::from(b) * u128::from(ga);
        // batch_rebalance: every one of the world_size ranks gets its own micro-batches (the SP
        // adapter then spreads each rank's batch over sp_size steps)
        let replicas = if rebalance { d.ws / d.sp } else { d.dp };
        let global = per_replica.checked_mul(replicas.into())?;
        self.report.plan.publish_batch(b.into(), ga.into(), global);
        let logged_dp = match self.version {
            Version::V5 => d.dp,
            Version::V457 => d.ws / d.tp,
            _ => d.ws,
        };
        let logged = per_replica.checked_mul(logged_dp.into())?;
        let (Some(g), Some(l)) = (int(global), int(logged)) else {
            self.report.diag(
                Field::PerDeviceTrainBatchSize,
                Level::Error,
                "per_device_train_batch_size × gradient_accumulation_steps × dp is too large to count exactly",
            );
            return None;
        };
        self.report.set(Output::GlobalBatchSize, g);
        if !rebalance {
            self.report.explain(
                Output::GlobalBatchSize,
                "global batch = per_device_train_batch_size × gradient_accumulation_steps × dp",
                format!("global batch = {b} × {ga} × {} = {global}", d.dp),
            );
        } else if d.sp > 1 {
            self.report.explain(
                Output::GlobalBatchSize,
                "batch_rebalance: global batch = effective_batch_size / sp_size, effective_batch_size = per_device × GA × \
                 world_size (every rank its own rows; the SP adapter spreads each rank's batch over sp_size steps)",
                format!(
                    "global batch = {b} × {ga} × {} / {} = {global}",
                    d.ws, d.sp
                ),
            );
        } else {
            self.report.explain(
                Output::GlobalBatchSize,
                "batch_rebalance: global batch = effective_batch_size = per_device × GA × world_size (BatchRebalanceSampler; \
                 every rank, tensor- and context-parallel ranks included, gets its own rows)",
                format!("global batch = {b} × {ga} × {} = {global}", d.ws),
            );
        }
        self.report.set(Output::TotalTrainBatchSize, l);
        let (rule, who) = match self.version {
            Version::V5 => ("world_size // tp // cp // sp", "dp"),
            Version::V457 => ("world_size // tp_size", "world_size // tp"),
            _ => ("world_size", "world_size"),
        };
        self.report.explain(
            Output::TotalTrainBatchSize,
            format!("total_train_batch_size (logged) = per_device × GA × {rule}"),
            format!("total_train_batch_size = {b} × {ga} × {logged_dp} = {logged}"),
        );
        if rebalance && logged != global {
            let per_step = if d.sp > 1 {
                format!("{b} × {ga} × world_size {} / sp_size {}", d.ws, d.sp)
            } else {
                format!("effective_batch_size = {b} × {ga} × world_size {}", d.ws)
            };
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Warning,
                format!(
                    "transformers {} logs \u{201c}Total train batch size (w. parallel, distributed & accumulation) = {logged}\u{201d} \
                     ({b} × {ga} × dp {}), but with batch_rebalance each optimizer step takes {global} samples ({per_step}): \
                     BatchRebalanceSampler gives every one of the {} ranks its own micro-batches, so tensor- and \
                     context-parallel ranks get different rows. The docs say tensor parallelism is not yet supported; \
                     nothing refuses it. The step count shown is what the Trainer runs.",
                    self.name, d.dp, d.ws
                ),
            );
        } else if logged != global {
            self.report.diag(
                Field::WorldSize,
                Level::Warning,
                format!(
                    "transformers {} logs \u{201c}Total train batch size (w. parallel, distributed & accumulation) = {logged}\u{201d} \
                     (it multiplies by {who} = {logged_dp}), but each optimizer step trains on {global} samples \
                     ({b} × {ga} × dp {}). The logged value is wrong, the step count is not.",
                    self.name,
                    d.dp
                ),
            );
        }
        if self.version == Version::V457 && d.sp > 1 {
            self.report.diag(
                Field::SpSize,
                Level::Warning,
                "transformers 4.57 has no sequence-parallel dataloader adapter (it came in 5.x): the Trainer's step count \
                 is computed from each rank's own shard, as shown",
            );
        }
        // accelerate 1.13 BatchSamplerShard.__init__ refuses a batch sampler without batch_size
        // when it shards over more than one process (1.14 dropped the check)
        let processes = if d.sp > 1 {
            d.ws / d.tp
        } else {
            d.ws / d.tp / d.cp
        };
        if rebalance && processes > 1 {
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Note,
                format!(
                    "batch_rebalance needs accelerate ≥ 1.14 here ({processes} data processes): accelerate 1.13 and older \
                     stop in accelerator.prepare with \u{201c}{EVEN_BATCHES}\u{201d} (transformers only requires \
                     accelerate>=1.1.0). The numbers shown are accelerate ≥ 1.14's."
                ),
            );
        }
        Some(global)
    }

    // ---- set_initial_training_values ---------------------------------------------------------

    /// The per-rank dataloader length (accelerate `BatchSamplerShard.__len__`), SP adapter included.
    fn dataloader_len(&mut self, d: Dims, n: u64, b: u64, drop_last: bool) -> u128 {
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
        self.report.explain(
            Output::StepsPerEpoch,
            "per-rank batches = shard of the torch DataLoader over the data-parallel processes (accelerate BatchSamplerShard)",
            format!("torch batches = {how}; per rank = {shard}{sp_part}"),
        );
        out
    }

    /// An empty training set: torch's `RandomSampler` refuses it; `LengthGroupedSampler` and
    /// batch_rebalance's length inference read `train_dataset[0]` first.
    fn empty_dataset_refusal(&mut self) {
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
    fn rebalance_len(&mut self, d: Dims, n: u64, b: u64, ga: u64, drop_last: bool) -> u128 {
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
        self.report.explain(
            Output::StepsPerEpoch,
            "batch_rebalance: global batches = N // effective_batch_size (+1 for the tail unless drop_last), \
             effective_batch_size = per_device × GA × world_size; each rank's dataloader = global batches × GA \
             (the Trainer switches accelerate's shard off)",
            format!(
                "effective_batch_size = {b} × {ga} × {} = {e}; global batches = {how}; per rank = {g} × {ga} = {}{sp_part}",
                d.ws,
                g * u128::from(ga)
            ),
        );
        out
    }

    fn steps(&mut self, dims: Option<Dims>) -> Option<Num> {
        let epochs = self.inputs.epochs.or(DEFAULT_EPOCHS);
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
                        return None;
                    }
                } else {
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
                    self.report.explain(
                        Output::StepsPerEpoch,
                        if self.version == Version::V451 {
                            "num_update_steps_per_epoch = max(batches // GA, 1) (4.51 rounds down)"
                        } else {
                            "num_update_steps_per_epoch = max(ceil(batches / GA), 1)"
                        },
                        format!("num_update_steps_per_epoch = {rule} = {steps}"),
                    );
                    Some((steps, false))
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
        // with an empty dataloader the Trainer sets num_update_steps_per_epoch = max_steps
        if let Some((s, _)) = nupe {
            if let Some(n) = int(s) {
                self.report.set(Output::StepsPerEpoch, n);
            }
        }
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
                self.report.explain(
                    Output::MaxSteps,
                    "max_steps (as given; it overrides num_train_epochs)",
                    format!("max_steps = {m}"),
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
                self.report.explain(
                    Output::MaxSteps,
                    "max_steps = ceil(num_train_epochs × num_update_steps_per_epoch)",
                    format!(
                        "max_steps = ceil({} × {steps}) = {}",
                        float_repr(e),
                        m.raw()
                    ),
                );
                m
            }
        };
        self.report.set(Output::MaxSteps, m);
        Some(m)
    }

    // ---- get_warmup_steps -----------------------------------------------------------------------

    fn ratio_of(m: Num, x: f64) -> Option<Num> {
        num::ceil(m.to_f64() * x).ok()
    }

    fn warmup(&mut self, m: Num) {
        let w = self.inputs.warmup_steps;
        let value =
            match self.version {
                Version::V5 => {
                    let Some(w) = w.or(0.0) else { return };
                    if w >= 1.0 {
                        let Ok(n) = num::int_of(w) else { return };
                        self.report.explain(
                        Output::WarmupSteps,
                        "warmup = int(warmup_steps) when ≥ 1, else ceil(max_steps × warmup_steps)",
                        format!("warmup = int({}) = {}", float_repr(w), n.raw()),
                    );
                        n
                    } else {
                        let Some(n) = Self::ratio_of(m, w) else {
                            return;
                        };
                        self.report.explain(
                        Output::WarmupSteps,
                        "warmup = int(warmup_steps) when ≥ 1, else ceil(max_steps × warmup_steps)",
                        format!("warmup = ceil({} × {}) = {}", m.raw(), float_repr(w), n.raw()),
                    );
                        n
                    }
                }
                _ => {
                    let Some(w) = w.or(0.0) else { return };
                    if w.fract() != 0.0 || w >= 9.2e18 {
                        return;
                    }
                    if w > 0.0 {
                        self.report.explain(
                            Output::WarmupSteps,
                            "warmup = warmup_steps if > 0 else ceil(max_steps × warmup_ratio)",
                            format!("warmup = {}", w as u64),
                        );
                        Num::Int(i128::from(w as u64))
                    } else {
                        let Some(r) = self.inputs.warmup_ratio.or(0.0) else {
                            return;
                        };
                        if r > 1.0 {
                            return;
                        }
                        let Some(n) = Self::ratio_of(m, r) else {
                            return;
                        };
                        self.report.explain(
                            Output::WarmupSteps,
                            "warmup = warmup_steps if > 0 else ceil(max_steps × warmup_ratio)",
                            format!(
                                "warmup = ceil({} × {}) = {}",
                                m.raw(),
                                float_repr(r),
                                n.raw()
                            ),
                        );
                        n
                    }
                }
            };
        self.report.set(Output::WarmupSteps, value);
    }

    // ---- TrainerState.compute_steps ---------------------------------------------------------------

    fn intervals(&mut self, m: Num) {
        let logging = self.inputs.logging_steps.or(DEFAULT_LOGGING_STEPS);
        let items = [
            (Field::LoggingSteps, Output::LoggingSteps, logging),
            (
                Field::EvalSteps,
                Output::EvalSteps,
                match self.inputs.eval_steps {
                    // eval_strategy "steps" with eval_steps unset or 0 takes logging_steps.
                    Param::Given(0.0) => {
                        self.report.diag(
                            Field::EvalSteps,
                            Level::Note,
                            "eval_steps 0 with eval_strategy \u{201c}steps\u{201d}: the Trainer uses logging_steps instead",
                        );
                        logging
                    }
                    Param::Given(x) => Some(x),
                    _ => None,
                },
            ),
            (
                Field::SaveSteps,
                Output::SaveSteps,
                self.inputs.save_steps.or(DEFAULT_SAVE_STEPS),
            ),
        ];
        for (field, out, x) in items {
            let Some(x) = x else { continue };
            if (x > 1.0 && x.fract() != 0.0) || (field == Field::LoggingSteps && x == 0.0) {
                continue; // refused in args_checks
            }
            let (value, worked) = if x < 1.0 {
                let Some(n) = Self::ratio_of(m, x) else {
                    continue;
                };
                (
                    n,
                    format!(
                        "{} = ceil({} × {}) = {}",
                        field.key(),
                        m.raw(),
                        float_repr(x),
                        n.raw()
                    ),
                )
            } else if x == 1.0 && self.inputs.float_written.contains(&field) {
                // __post_init__ makes a whole value int() only when it is above 1, and
                // compute_steps keeps a ratio of 1 as it is: a 1.0 given stays a float.
                let n = Num::Float(x);
                (n, format!("{} = {}", field.key(), n.raw()))
            } else {
                let Ok(n) = num::int_of(x) else { continue };
                (n, format!("{} = {}", field.key(), n.raw()))
            };
            if field == Field::SaveSteps && value == Num::Int(0) {
                self.report.diag(
                    field,
                    Level::Warning,
                    "save_steps comes out 0: no step-based checkpoint is saved",
                );
            }
            self.report.set(out, value);
            self.report.explain(
                out,
                format!(
                    "{} (a ratio of max_steps when below 1: ceil(max_steps × x))",
                    field.key()
                ),
                worked,
            );
        }
        if self.inputs.eval_steps.is_given() {
            self.report.diag(
                Field::EvalSteps,
                Level::Note,
                "eval_steps is used with eval_strategy=\u{201c}steps\u{201d} (the default strategy \u{201c}no\u{201d} never evaluates)",
            );
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
