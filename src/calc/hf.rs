//! Hugging Face transformers `Trainer` (5.23 with 5.14–5.23's rules, and 4.57, 4.52, 4.51), over
//! accelerate 1.13's data sharding and `ParallelismConfig`.
//!
//! Mirrors, in this order of execution:
//! - `TrainingArguments.__post_init__` (`training_args.py`): the `--logging_steps` /
//!   `--eval_steps` / `--save_steps` "must be an integer if bigger than 1" refusals and the
//!   negative-warmup refusal; transformers 5 has no `warmup_ratio` argument any more;
//! - accelerate's `ParallelismConfig` (`accelerate/parallelism_config.py`): every size at least 1,
//!   CP and SP mutually exclusive, `total_size` must equal the number of processes (skipped for the
//!   DeepSpeed SP backend);
//! - the per-rank dataloader: torch's `BatchSampler` (`N // b` with `dataloader_drop_last`, else
//!   `ceil(N / b)`), sharded by accelerate's `BatchSamplerShard.__len__`
//!   (`accelerate/data_loader.py`: `len // P` when it divides or with drop_last, else `len // P + 1`
//!   with `even_batches`, the default) over the data-parallel processes (`process_index //= tp*cp`
//!   with a device mesh; with the DeepSpeed SP backend over `world // tp` processes, then the
//!   Ulysses adapter multiplies the length by `sp_size`);
//! - `Trainer.set_initial_training_values` (`trainer.py`): `num_update_steps_per_epoch` (floor up
//!   to 4.51, ceil from 4.52), `max_steps = ceil(num_train_epochs × it)` unless `max_steps > 0`,
//!   the empty-dataloader refusal, and `get_total_train_batch_size` as logged (whole world up to
//!   4.52, `// tp` in 4.53–4.57, `// tp // cp // sp` from 5.14);
//! - `TrainingArguments.get_warmup_steps` (v4: `warmup_steps if > 0 else ceil(steps × ratio)`;
//!   v5: `int(w) if w >= 1 else ceil(steps × w)`) and `TrainerState.compute_steps`
//!   (`trainer_callback.py`: a value below 1 becomes `ceil(max_steps × value)`).
//!
//! The spec is `shared/spec/batch_math.md` §2 as corrected by its §0.1; transformers 5.16.1's code
//! (identical step math to 5.23) was read and run for the checks here.

use super::cluster;
use super::field::Reader;
use super::framework::{Release, CLUSTER};
use super::num::{self, Num};
use super::{Field, Level, Output, Param, RawInputs, Report};

/// The releases modelled, newest (the default) first.
pub const RELEASES: &[Release] = &[
    Release {
        id: "5.23",
        label: "5.14 – 5.23 (dp = world // tp // cp // sp)",
    },
    Release {
        id: "4.57",
        label: "4.53 – 4.57 (logged total // tp)",
    },
    Release {
        id: "4.52",
        label: "4.52 (ceil steps per epoch, whole world logged)",
    },
    Release {
        id: "4.51",
        label: "4.51 and earlier (floor steps per epoch)",
    },
];

/// The form.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism (ParallelismConfig)",
        &[Field::TpSize, Field::CpSize, Field::SpSize],
    ),
    (
        "Batch (TrainingArguments)",
        &[
            Field::PerDeviceTrainBatchSize,
            Field::GradientAccumulationSteps,
            Field::DataloaderDropLast,
        ],
    ),
    (
        "Data & schedule",
        &[
            Field::NumSamples,
            Field::NumTrainEpochs,
            Field::MaxSteps,
            Field::MaxLength,
            Field::WarmupSteps,
            Field::WarmupRatio,
            Field::EvalSteps,
            Field::SaveSteps,
            Field::LoggingSteps,
        ],
    ),
];

/// The results, in page order.
pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TotalTrainBatchSize,
    Output::StepsPerEpoch,
    Output::MaxSteps,
    Output::WarmupSteps,
    Output::EvalSteps,
    Output::SaveSteps,
    Output::TokensPerStep,
];

/// The inputs an embedded view always shows.
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
        Output::DpWorldSize => ("Data-parallel processes", "dp_world_size"),
        Output::GlobalBatchSize => (
            "Global batch (samples per optimizer step)",
            "per_device × GA × dp",
        ),
        Output::StepsPerEpoch => ("Steps per epoch", "num_update_steps_per_epoch"),
        Output::MaxSteps => ("Optimizer steps the run takes", "max_steps"),
        Output::WarmupSteps => ("Warmup steps", "get_warmup_steps()"),
        Output::TokensPerStep => ("Token slots per step", "global batch × max_length"),
        _ => return None,
    })
}

/// `TrainingArguments` defaults.
const DEFAULT_PER_DEVICE: u64 = 8;
const DEFAULT_EPOCHS: f64 = 3.0;
const DEFAULT_SAVE_STEPS: f64 = 500.0;

/// Which release's rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Version {
    V4_51,
    V4_52,
    V4_57,
    V5,
}

impl Version {
    fn from_id(id: &str) -> Version {
        match id {
            "4.51" => Version::V4_51,
            "4.52" => Version::V4_52,
            "4.57" => Version::V4_57,
            _ => Version::V5,
        }
    }
}

/// The inputs, typed.
#[derive(Clone, Copy, Debug)]
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
    samples: Param<u64>,
    epochs: Param<f64>,
    max_steps: Param<i64>,
    max_length: Param<u64>,
    warmup_steps: Param<f64>,
    warmup_ratio: Param<f64>,
    eval_steps: Param<f64>,
    save_steps: Param<f64>,
    logging_steps: Param<f64>,
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
            samples: r.count(Field::NumSamples),
            epochs: r.real(Field::NumTrainEpochs),
            // TrainingArguments' max_steps is an int whose default is -1 ("use the epochs")
            max_steps: r.int(Field::MaxSteps),
            max_length: r.count(Field::MaxLength),
            warmup_steps: r.real(Field::WarmupSteps),
            warmup_ratio: r.real(Field::WarmupRatio),
            eval_steps: r.real(Field::EvalSteps),
            save_steps: r.real(Field::SaveSteps),
            logging_steps: r.real(Field::LoggingSteps),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    Calc {
        i,
        v: Version::from_id(release),
        release: RELEASES
            .iter()
            .find(|r| r.id == release)
            .map_or(RELEASES[0].id, |r| r.id),
        r: &mut report,
    }
    .run();
    report
}

struct Calc<'a> {
    i: Inputs,
    v: Version,
    release: &'static str,
    r: &'a mut Report,
}

struct Cluster {
    world: u64,
    tp: u64,
    cp: u64,
    sp: u64,
    /// The data-parallel processes (`dp_shard × dp_replicate`).
    dp: u64,
}

impl Calc<'_> {
    fn run(mut self) {
        self.arguments();
        let cluster = self.cluster();
        let Some(c) = cluster else { return };
        let (Some(b), Some(ga)) = (
            self.positive(
                Field::PerDeviceTrainBatchSize,
                self.i.per_device.or(DEFAULT_PER_DEVICE),
            ),
            self.positive(Field::GradientAccumulationSteps, self.i.ga.or(1)),
        ) else {
            return;
        };
        self.r
            .set(Output::GradientAccumulationSteps, Num::Int(ga.into()));
        self.batch(&c, b, ga);
        let max_steps = self.steps(&c, b, ga);
        if let Some(m) = max_steps {
            self.warmup(m);
            self.intervals(m);
        }
    }

    /// A size the Trainer divides by: 0 is an error at its field.
    fn positive(&mut self, field: Field, value: Option<u64>) -> Option<u64> {
        match value {
            Some(0) => {
                let text = match field {
                    Field::GradientAccumulationSteps => {
                        "gradient_accumulation_steps 0: the Trainer stops with ZeroDivisionError: integer division or modulo by zero"
                    }
                    _ => {
                        "per_device_train_batch_size 0: torch's BatchSampler refuses it (ValueError: batch_size should be a positive integer value, but got batch_size=0)"
                    }
                };
                self.r.diag(field, Level::Error, text);
                None
            }
            v => v,
        }
    }

    // ---- TrainingArguments.__post_init__ -------------------------------------------------

    fn arguments(&mut self) {
        let i = self.i;
        if let Param::Given(r) = i.warmup_ratio {
            if self.v == Version::V5 {
                self.r.diag(
                    Field::WarmupRatio,
                    Level::Error,
                    format!(
                        "transformers 5 has no warmup_ratio: TrainingArguments raises \u{201c}TypeError: TrainingArguments.__init__() got an \
                         unexpected keyword argument 'warmup_ratio'\u{201d}. Fix: warmup_steps={r} (a value below 1 is a ratio of max_steps)."
                    ),
                );
            } else if r > 1.0 {
                self.r.diag(
                    Field::WarmupRatio,
                    Level::Error,
                    "warmup_ratio must lie in range [0,1]",
                );
            }
        }
        if let Param::Given(w) = i.warmup_steps {
            if self.v < Version::V5 && w.fract() != 0.0 {
                self.r.diag(
                    Field::WarmupSteps,
                    Level::Error,
                    format!("transformers {} takes warmup_steps as an int: {w} is not one (use warmup_ratio for a fraction)", self.release),
                );
            }
        }
        for (field, value, name) in [
            (Field::LoggingSteps, i.logging_steps, "logging_steps"),
            (Field::EvalSteps, i.eval_steps, "eval_steps"),
            (Field::SaveSteps, i.save_steps, "save_steps"),
        ] {
            if let Param::Given(x) = value {
                if x > 1.0 && x.fract() != 0.0 {
                    self.r.diag(
                        field,
                        Level::Error,
                        format!(
                            "TrainingArguments refuses: \u{201c}--{name} must be an integer if bigger than 1: {}\u{201d}. \
                             Use a whole number of steps, or a value below 1 (a fraction of max_steps).",
                            num::float_repr(x)
                        ),
                    );
                }
            }
        }
        if i.logging_steps == Param::Given(0.0) {
            self.r.diag(
                Field::LoggingSteps,
                Level::Error,
                "TrainingArguments refuses: \u{201c}logging strategy IntervalStrategy.STEPS requires non-zero --logging_steps\u{201d}",
            );
        }
    }

    // ---- cluster and ParallelismConfig -----------------------------------------------------

    fn size(&mut self, field: Field, p: Param<u64>, name: &str) -> Option<u64> {
        match p {
            Param::Given(0) => {
                self.r.diag(
                    field,
                    Level::Error,
                    format!("accelerate's ParallelismConfig refuses: \u{201c}{name} must be at least 1, but got 0\u{201d}"),
                );
                None
            }
            p => p.or(1),
        }
    }

    fn cluster(&mut self) -> Option<Cluster> {
        let i = self.i;
        let world = cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, self.r);
        let tp = self.size(Field::TpSize, i.tp, "tp_size");
        let cp = self.size(Field::CpSize, i.cp, "cp_size");
        let sp = self.size(Field::SpSize, i.sp, "sp_size");
        let (world, tp, cp, sp) = (world?, tp?, cp?, sp?);
        if cp > 1 && sp > 1 {
            self.r.diag(
                Field::SpSize,
                Level::Error,
                format!(
                    "accelerate's ParallelismConfig refuses: \u{201c}Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive. \
                     Got cp_size={cp} and sp_size={sp}. Please set either cp_size=1 or sp_size=1.\u{201d}"
                ),
            );
            return None;
        }
        if self.v < Version::V5 && (cp > 1 || sp > 1) {
            self.r.diag(
                if cp > 1 { Field::CpSize } else { Field::SpSize },
                Level::Warning,
                format!(
                    "transformers {} does not count context or sequence parallelism in its logged batch (only tp); \
                     dpcalc still shards the data over world_size // (tp × cp × sp) as accelerate does.",
                    self.release
                ),
            );
        }
        let model = tp.checked_mul(cp).and_then(|m| m.checked_mul(sp));
        let Some(model) = model else {
            self.r.diag(
                Field::TpSize,
                Level::Error,
                "tp_size × cp_size × sp_size is too large to count",
            );
            return None;
        };
        let dp = world / model;
        if model > 1 {
            if world % model != 0 || dp == 0 {
                let fix = cluster::nearest_valid(world, model, "tp_size × cp_size × sp_size");
                let total = model.saturating_mul(dp.max(1));
                let what = if sp > 1 {
                    format!(
                        "world_size {world} is not divisible by tp_size × sp_size = {model}: the DeepSpeed Ulysses \
                         groups cannot be built (accelerate skips its size check for the DeepSpeed SP backend). {fix}"
                    )
                } else {
                    format!(
                        "world_size {world} is not divisible by tp_size × cp_size × sp_size = {tp} × {cp} × {sp} = {model}: \
                         with dp_shard_size = {world} // {model} = {dp}, accelerate refuses: \u{201c}ParallelismConfig total_size \
                         ({total}) does not match num_processes ({world}). Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size.\u{201d} {fix}"
                    )
                };
                self.r.diag(Field::WorldSize, Level::Error, what);
                self.r.diag(
                    if tp > 1 {
                        Field::TpSize
                    } else if cp > 1 {
                        Field::CpSize
                    } else {
                        Field::SpSize
                    },
                    Level::Error,
                    format!("tp_size × cp_size × sp_size = {model} must divide world_size {world} (see world_size)"),
                );
                return None;
            }
            if sp == 1 {
                self.r.diag(
                    Field::TpSize,
                    Level::Note,
                    format!(
                        "ParallelismConfig(dp_shard_size={dp}, tp_size={tp}, cp_size={cp}): dp_shard_size × dp_replicate_size must be \
                         world_size // (tp × cp) = {dp}; accelerate's default dp_shard_size 1 would be refused (total_size {model} ≠ {world})."
                    ),
                );
            }
        }
        self.r.set(Output::DpWorldSize, Num::Int(dp.into()));
        self.r.explain(
            Output::DpWorldSize,
            "dp_world_size = world_size // (tp_size × cp_size × sp_size) (accelerate: num_processes = dp_shard × dp_replicate)",
            format!("dp_world_size = {world} // ({tp} × {cp} × {sp}) = {dp}"),
        );
        Some(Cluster {
            world,
            tp,
            cp,
            sp,
            dp,
        })
    }

    // ---- batch -----------------------------------------------------------------------------

    fn batch(&mut self, c: &Cluster, b: u64, ga: u64) {
        let global = u128::from(b) * u128::from(ga);
        let real = global.checked_mul(c.dp.into());
        // get_total_train_batch_size, as the Trainer logs it
        let (w, rule, worked) = match self.v {
            Version::V4_51 | Version::V4_52 => (
                c.world,
                "total_train_batch_size = per_device_train_batch_size × gradient_accumulation_steps × world_size (≤ 4.52)".to_string(),
                format!("{b} × {ga} × {}", c.world),
            ),
            Version::V4_57 => (
                c.world / c.tp,
                "total_train_batch_size = per_device × GA × (world_size // tp) (4.53 – 4.57)".to_string(),
                format!("{b} × {ga} × ({} // {})", c.world, c.tp),
            ),
            Version::V5 => (
                c.world / c.tp / c.cp / c.sp,
                "total_train_batch_size = per_device × GA × (world_size // tp // cp // sp) (≥ 5.14)".to_string(),
                format!("{b} × {ga} × ({} // {} // {} // {})", c.world, c.tp, c.cp, c.sp),
            ),
        };
        let logged = global.checked_mul(w.into());
        match (real, logged) {
            (Some(real), Some(logged)) => {
                let (Ok(real_i), Ok(logged_i)) = (i128::try_from(real), i128::try_from(logged))
                else {
                    self.too_large();
                    return;
                };
                self.r.set(Output::GlobalBatchSize, Num::Int(real_i));
                self.r.explain(
                    Output::GlobalBatchSize,
                    "global batch = per_device_train_batch_size × gradient_accumulation_steps × dp_world_size",
                    format!("global batch = {b} × {ga} × {} = {real}", c.dp),
                );
                self.r.set(Output::TotalTrainBatchSize, Num::Int(logged_i));
                self.r.explain(
                    Output::TotalTrainBatchSize,
                    rule,
                    format!("total_train_batch_size = {worked} = {logged}"),
                );
                if logged != real {
                    self.r.diag(
                        Field::TpSize,
                        Level::Warning,
                        format!(
                            "transformers {} logs \u{201c}Total train batch size (w. parallel, distributed & accumulation) = {logged}\u{201d}, \
                             but each optimizer step trains {real} samples ({b} × {ga} × {} data-parallel processes): ranks of one \
                             tensor/context group see the same batch.",
                            self.release, c.dp
                        ),
                    );
                }
                if let Param::Given(len) = self.i.max_length {
                    match real
                        .checked_mul(len.into())
                        .and_then(|t| i128::try_from(t).ok())
                    {
                        Some(t) => {
                            self.r.set(Output::TokensPerStep, Num::Int(t));
                            self.r.explain(
                                Output::TokensPerStep,
                                "tokens per step = global batch × max_length (token slots; padding included)",
                                format!("tokens = {real} × {len} = {t}"),
                            );
                        }
                        None => self.r.diag(
                            Field::MaxLength,
                            Level::Error,
                            "global batch × max_length is too large to count",
                        ),
                    }
                }
            }
            _ => self.too_large(),
        }
    }

    fn too_large(&mut self) {
        self.r.diag(
            Field::PerDeviceTrainBatchSize,
            Level::Error,
            "per_device_train_batch_size × gradient_accumulation_steps × dp is too large to count",
        );
    }

    // ---- steps -----------------------------------------------------------------------------

    /// The optimizer steps (`max_steps` as the Trainer resolves it), when computable.
    fn steps(&mut self, c: &Cluster, b: u64, ga: u64) -> Option<i128> {
        let i = self.i;
        let given_max = match i.max_steps {
            Param::Invalid => return None,
            Param::Given(m) => Some(m),
            Param::Absent => None,
        };
        let Some(n) = i.samples.given() else {
            if i.samples == Param::Absent {
                if let Some(m) = given_max.filter(|&m| m > 0) {
                    self.set_max(
                        m.into(),
                        "max_steps (as given: it overrides num_train_epochs)",
                    );
                    return Some(m.into());
                }
                self.r.diag(
                    Field::NumSamples,
                    Level::Hint,
                    "Enter the number of training rows to get the steps.",
                );
            }
            return None;
        };
        let drop_last = i.drop_last.or(false)?;
        let epochs = i.epochs.or(DEFAULT_EPOCHS)?;
        // torch's BatchSampler over the whole dataset, then accelerate's shard of it
        let torch_len = if drop_last { n / b } else { n.div_ceil(b) };
        let (procs, how) = if c.sp > 1 {
            (c.world / c.tp, "world_size // tp (DeepSpeed SP backend)")
        } else {
            (c.dp, "dp processes")
        };
        let shard = if torch_len % procs == 0 || drop_last {
            torch_len / procs
        } else {
            torch_len / procs + 1
        };
        let len = u128::from(shard) * u128::from(c.sp);
        let sampler = if drop_last {
            format!("{n} // {b} = {torch_len}")
        } else {
            format!("ceil({n} / {b}) = {torch_len}")
        };
        let shard_rule = if torch_len % procs == 0 {
            format!("{torch_len} // {procs} = {shard}")
        } else if drop_last {
            format!("{torch_len} // {procs} = {shard} (drop_last)")
        } else {
            format!("{torch_len} // {procs} + 1 = {shard} (even_batches pads the last)")
        };
        let sp_part = if c.sp > 1 {
            format!("; × sp_size {} = {len}", c.sp)
        } else {
            String::new()
        };
        self.r.explain(
            Output::StepsPerEpoch,
            format!("batches per rank: torch's BatchSampler, then accelerate's BatchSamplerShard over the {how}"),
            format!("len(dataloader) = {sampler}; shard: {shard_rule}{sp_part}"),
        );
        let positive_max = given_max.filter(|&m| m > 0);
        if len == 0 {
            match positive_max {
                Some(m) => {
                    self.r.set(Output::StepsPerEpoch, Num::Int(m.into()));
                    self.set_max(
                        m.into(),
                        "the dataloader is empty, so the Trainer relies on max_steps",
                    );
                    self.r.diag(
                        Field::NumSamples,
                        Level::Warning,
                        "Each rank's dataloader is empty: the Trainer runs max_steps steps over an iterator with no batches.",
                    );
                    return Some(m.into());
                }
                None => {
                    self.r.diag(
                        Field::NumSamples,
                        Level::Error,
                        format!(
                            "Each rank's dataloader is empty ({n} rows, per-device batch {b}{}), so the Trainer raises \u{201c}args.max_steps must be set \
                             to a positive value if dataloader does not have a length, was {}\u{201d}. Fix: more rows, a smaller \
                             per_device_train_batch_size{}, or max_steps > 0.",
                            if drop_last { ", drop_last" } else { "" },
                            given_max.unwrap_or(-1),
                            if drop_last { ", dataloader_drop_last false" } else { "" },
                        ),
                    );
                    return None;
                }
            }
        }
        let ga128 = u128::from(ga);
        let nupe = if self.v == Version::V4_51 {
            (len / ga128).max(1)
        } else {
            (len / ga128 + u128::from(len % ga128 > 0)).max(1)
        };
        let Ok(nupe_i) = i128::try_from(nupe) else {
            return None;
        };
        self.r.set(Output::StepsPerEpoch, Num::Int(nupe_i));
        self.r.explain(
            Output::StepsPerEpoch,
            if self.v == Version::V4_51 {
                "num_update_steps_per_epoch = max(len // GA, 1) (floor, ≤ 4.51)"
            } else {
                "num_update_steps_per_epoch = max(len // GA + int(len % GA > 0), 1) (ceil, ≥ 4.52)"
            },
            format!("num_update_steps_per_epoch = {nupe} (len {len}, GA {ga})"),
        );
        if let Some(m) = positive_max {
            self.set_max(
                m.into(),
                "max_steps (as given: it overrides num_train_epochs)",
            );
            return Some(m.into());
        }
        if given_max == Some(0) {
            self.r.diag(
                Field::MaxSteps,
                Level::Warning,
                "max_steps 0 is not \u{201c}unset\u{201d} for the Trainer (only a negative value, its default -1, is): it keeps max_steps 0 and stops at once. Leave the field empty to train by epochs.",
            );
            self.set_max(0, "max_steps (as given)");
            return Some(0);
        }
        let product = epochs * nupe as f64;
        match num::ceil(product) {
            Ok(Num::Int(m)) => {
                self.r.set(Output::MaxSteps, Num::Int(m));
                self.r.explain(
                    Output::MaxSteps,
                    "max_steps = ceil(num_train_epochs × num_update_steps_per_epoch)",
                    format!(
                        "max_steps = ceil({} × {nupe}) = {m}",
                        num::float_repr(epochs)
                    ),
                );
                Some(m)
            }
            _ => {
                self.r.diag(
                    Field::NumTrainEpochs,
                    Level::Error,
                    "num_train_epochs × steps per epoch is too large to count",
                );
                None
            }
        }
    }

    fn set_max(&mut self, m: i128, rule: &str) {
        self.r.set(Output::MaxSteps, Num::Int(m));
        self.r.explain(
            Output::MaxSteps,
            rule.to_string(),
            format!("max_steps = {m}"),
        );
    }

    // ---- warmup, eval, save ----------------------------------------------------------------

    fn warmup(&mut self, max_steps: i128) {
        let i = self.i;
        let (Some(w), Some(ratio)) = (i.warmup_steps.or(0.0), i.warmup_ratio.or(0.0)) else {
            return;
        };
        let steps = max_steps as f64;
        let (value, rule, worked) = if self.v == Version::V5 {
            if i.warmup_ratio.is_given() {
                return; // refused above
            }
            if w >= 1.0 {
                let v = num::int_of(w);
                let shown = v.as_ref().map(|n| n.raw()).unwrap_or_default();
                (
                    v,
                    "warmup = int(warmup_steps) (≥ 1: a step count)",
                    format!("warmup = int({}) = {shown}", num::float_repr(w)),
                )
            } else {
                let v = num::ceil(steps * w);
                let shown = v.as_ref().map(|n| n.raw()).unwrap_or_default();
                (
                    v,
                    "warmup = ceil(max_steps × warmup_steps) (below 1: a ratio)",
                    format!(
                        "warmup = ceil({max_steps} × {}) = {shown}",
                        num::float_repr(w)
                    ),
                )
            }
        } else if w > 0.0 {
            if w.fract() != 0.0 {
                return; // refused above
            }
            let v = num::int_of(w);
            let shown = v.as_ref().map(|n| n.raw()).unwrap_or_default();
            (
                v,
                "warmup = warmup_steps (> 0)",
                format!("warmup = {shown}"),
            )
        } else {
            let v = num::ceil(steps * ratio);
            let shown = v.as_ref().map(|n| n.raw()).unwrap_or_default();
            (
                v,
                "warmup = ceil(max_steps × warmup_ratio) (warmup_steps 0)",
                format!(
                    "warmup = ceil({max_steps} × {}) = {shown}",
                    num::float_repr(ratio)
                ),
            )
        };
        match value {
            Ok(v) => {
                self.r.set(Output::WarmupSteps, v);
                self.r.explain(Output::WarmupSteps, rule, worked);
            }
            Err(_) => self.r.diag(
                Field::WarmupSteps,
                Level::Error,
                "warmup_steps is too large to count",
            ),
        }
    }

    /// `TrainerState.compute_steps`: a value below 1 is a fraction of max_steps.
    fn intervals(&mut self, max_steps: i128) {
        let i = self.i;
        for (output, field, value, default) in [
            (Output::EvalSteps, Field::EvalSteps, i.eval_steps, None),
            (
                Output::SaveSteps,
                Field::SaveSteps,
                i.save_steps,
                Some(DEFAULT_SAVE_STEPS),
            ),
        ] {
            let x = match value {
                Param::Given(x) => x,
                Param::Absent => match default {
                    Some(d) => d,
                    None => continue,
                },
                Param::Invalid => continue,
            };
            if x > 1.0 && x.fract() != 0.0 {
                continue; // refused above
            }
            let name = field.key();
            if x < 1.0 {
                if let Ok(v) = num::ceil(max_steps as f64 * x) {
                    self.r.set(output, v);
                    self.r.explain(
                        output,
                        format!("{name} below 1 = ceil(max_steps × {name})"),
                        format!(
                            "{name} = ceil({max_steps} × {}) = {}",
                            num::float_repr(x),
                            v.raw()
                        ),
                    );
                }
            } else {
                match num::int_of(x) {
                    Ok(v) => {
                        self.r.set(output, v);
                        self.r.explain(
                            output,
                            format!("{name} (a whole number of steps)"),
                            format!("{name} = {}", v.raw()),
                        );
                    }
                    Err(_) => {
                        self.r
                            .diag(field, Level::Error, format!("{name} is too large to count"))
                    }
                }
            }
        }
    }
}
