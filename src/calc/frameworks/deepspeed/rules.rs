//! DeepSpeed 0.19.8: the batch triple of `ds_config.json` and what a run built on it takes.
//!
//! Mirrors, in this order of execution:
//! - the world size `DeepSpeedConfig.__init__` checks the batch against
//!   (`deepspeed/runtime/config.py`): an mpu's `get_data_parallel_world_size()` (or a
//!   `mesh_param` data-parallel dimension), else `dist.get_world_size() / sequence_parallel_size`
//!   (a float `/`) when the config has that key, else the whole world (TP ranks of AutoTP included);
//! - `DeepSpeedConfig._set_batch_related_parameters` (the two-of-three rule with chained floor
//!   divisions) and `_batch_assertion` (exact messages), same file;
//! - the data-parallel groups the engine then builds (`deepspeed/utils/groups.py::_init_tp_mesh_device`,
//!   `deepspeed/runtime/sequence_parallel/parallel_state_sp.py::initialize_sequence_parallel`);
//! - for the step count, `deepspeed.initialize(training_data=...)`: `DeepSpeedEngine.deepspeed_io`
//!   and `DeepSpeedDataLoader.__len__` (`deepspeed/runtime/dataloader.py`, over torch's
//!   `DistributedSampler`), and `DeepSpeedEngine.is_gradient_accumulation_boundary`
//!   (`deepspeed/runtime/engine.py`).
//!
//! Python's numbers are copied exactly (`//` on ints and on floats, a float world size printed as
//! `repr`). Every rule here was checked by running deepspeed 0.19.8's own code:
//! `tests/fixtures/deepspeed.txt`.

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num, NumError};
use crate::calc::parse::Reader;
use crate::calc::spec::Release;
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};
use std::cmp::Ordering;

/// The releases modelled, newest (the default) first.
pub const RELEASES: &[Release] = &[Release {
    id: "0.19.8",
    label: "0.19.8",
}];

/// The form.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::AutotpSize,
            Field::SequenceParallelSize,
            Field::MpuDataParallelWorldSize,
        ],
    ),
    (
        "Batch (ds_config.json)",
        &[
            Field::TrainBatchSize,
            Field::TrainMicroBatchSizePerGpu,
            Field::GradientAccumulationSteps,
        ],
    ),
    (
        "Data (deepspeed.initialize(training_data=…))",
        &[
            Field::NumSamples,
            Field::NumEpochs,
            Field::DataloaderDropLast,
            Field::MaxLength,
        ],
    ),
    (
        "Model & memory",
        &[
            Field::ModelId,
            Field::GradientCheckpointing,
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
    Output::BatchCheckWorldSize,
    Output::DpWorldSize,
    Output::TrainBatchSize,
    Output::TrainMicroBatchSizePerGpu,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::MicroBatchesPerEpoch,
    Output::StepsPerEpoch,
    Output::MaxSteps,
    Output::TokensPerStep,
];

/// The inputs an embedded view always shows.
pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::AutotpSize,
    Field::TrainBatchSize,
    Field::TrainMicroBatchSizePerGpu,
    Field::GradientAccumulationSteps,
    Field::NumSamples,
];

/// DeepSpeed's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => ("Data-parallel replicas", "engine dp_world_size"),
        Output::BatchCheckWorldSize => (
            "World size the batch check uses",
            "DeepSpeedConfig.world_size",
        ),
        Output::MaxSteps => ("Optimizer steps the run takes", "optimizer steps"),
        Output::StepsPerEpoch => ("Optimizer steps per epoch", "steps per epoch"),
        _ => return None,
    })
}

/// Computes everything by the rules of `release` (only 0.19.8 is modelled).
pub fn compute_release(_release: &str, raw: &RawInputs) -> Report {
    compute(raw)
}

/// The inputs, typed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Inputs {
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    world_size: Param<u64>,
    autotp_size: Param<u64>,
    sequence_parallel_size: Param<u64>,
    mpu_dp: Param<u64>,
    train: Param<u64>,
    micro: Param<u64>,
    ga: Param<u64>,
    num_samples: Param<u64>,
    num_epochs: Param<f64>,
    drop_last: Param<bool>,
    max_length: Param<u64>,
}

/// Computes everything for one set of inputs.
pub fn compute(raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let mut r = Reader {
        raw,
        diags: &mut report.diags,
    };
    let i = Inputs {
        nodes: r.count(Field::Nodes),
        gpus_per_node: r.count(Field::GpusPerNode),
        world_size: r.count(Field::WorldSize),
        autotp_size: r.count(Field::AutotpSize),
        sequence_parallel_size: r.count(Field::SequenceParallelSize),
        mpu_dp: r.count(Field::MpuDataParallelWorldSize),
        train: r.count(Field::TrainBatchSize),
        micro: r.count(Field::TrainMicroBatchSizePerGpu),
        ga: r.count(Field::GradientAccumulationSteps),
        num_samples: r.count(Field::NumSamples),
        num_epochs: r.real(Field::NumEpochs),
        drop_last: r.flag(Field::DataloaderDropLast),
        max_length: r.count(Field::MaxLength),
    };
    // one node of 8 GPUs is a fresh page's own cluster, which its link leaves out
    // (`query::is_default`): giving only that is no choice yet
    let anything = raw.given().any(|(f, v)| {
        !matches!(
            (f, v.trim()),
            (Field::Nodes, "1") | (Field::GpusPerNode, "8")
        )
    });
    Calc {
        inputs: i,
        anything,
        report: &mut report,
    }
    .run();
    report
}

/// Python's `f"{x}"` of an int or a float (`2.6666666666666665`, `6.0`).
fn py(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(x) => num::float_repr(x),
    }
}

/// Python's `a // b` for an int or float operand.
fn floordiv(a: Num, b: Num) -> Result<Num, NumError> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => num::ifloordiv(x, y),
        _ => num::ffloordiv(a.to_f64(), b.to_f64()).map(Num::Float),
    }
}

/// Largest integer every step of the float arithmetic here holds exactly (2^53).
const EXACT_FLOAT: u64 = 1 << 53;

/// Who stops at a failed `assert` of `DeepSpeedConfig` (its refusals' `says` keep the
/// `AssertionError: ` that Python prints before the text, as the oracle recorded it).
const STOPS: &str = "DeepSpeed stops";

/// How DeepSpeed picks the world size of the batch check.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    /// `mpu.get_data_parallel_world_size()` (or the mesh's data-parallel dimension).
    Mpu(u64),
    /// `dist.get_world_size() / config["sequence_parallel_size"]`.
    SequenceParallel(u64),
    /// `dist.get_world_size()`.
    World,
}

/// The cluster as DeepSpeed sees it.
struct Cluster {
    world: u64,
    /// The world size of the batch check.
    check: Num,
    source: Source,
    /// Ranks that take distinct samples (the engine's data-parallel size), when known.
    replicas: Option<u64>,
    autotp: u64,
}

/// The batch after `_set_batch_related_parameters` and `_batch_assertion`.
struct Batch {
    train: Num,
    micro: Num,
    ga: Num,
}

/// The rules at work: the typed inputs and the report being filled.
struct Calc<'a> {
    inputs: Inputs,
    /// Some field is filled in (an empty form is waiting for input, not refused).
    anything: bool,
    report: &'a mut Report,
}

impl Calc<'_> {
    /// The stages, in DeepSpeed's order: the world and the mesh (grid), `DeepSpeedConfig`'s batch
    /// parameters and their assertion (batch), the data loader's length (steps).
    fn run(mut self) {
        self.report.plan.seq_len = self.inputs.max_length.positive_or(None);
        self.report.enter(Stage::Grid);
        let cluster = self.cluster();
        self.report.enter(Stage::Batch);
        let batch = cluster.as_ref().and_then(|c| self.batch(c));
        if let (Some(c), Some(b)) = (&cluster, &batch) {
            self.global(c, b);
            self.report.enter(Stage::Steps);
            self.steps(c, b);
        } else {
            self.report.enter(Stage::Steps);
            self.steps_inputs_only();
        }
    }

    // ---- cluster -------------------------------------------------------------------------

    fn cluster(&mut self) -> Option<Cluster> {
        let i = self.inputs;
        let world = cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, self.report);
        let autotp = match i.autotp_size {
            Param::Invalid => None,
            p => p.given(),
        };
        let (sp, mpu) = (i.sequence_parallel_size, i.mpu_dp);
        if [sp, mpu].contains(&Param::Invalid) || i.autotp_size == Param::Invalid {
            return None;
        }
        if mpu == Param::Given(0) {
            self.report.diag(
                Field::MpuDataParallelWorldSize,
                Level::Error,
                "mpu_data_parallel_world_size must be at least 1 (an mpu's data-parallel group has at least one rank)",
            );
            return None;
        }
        let world = world?;
        // tensor_parallel.autotp_size: 0 (the default) and 1 mean no AutoTP.
        let autotp = autotp.unwrap_or(1).max(1);
        let source = match (mpu.given(), sp.given()) {
            (Some(dp), _) => Source::Mpu(dp),
            (None, Some(s)) => Source::SequenceParallel(s),
            (None, None) => Source::World,
        };
        let check = match source {
            Source::Mpu(dp) => {
                if dp > world {
                    self.report.diag(
                        Field::MpuDataParallelWorldSize,
                        Level::Error,
                        format!("mpu_data_parallel_world_size {dp} is more than the world_size {world}: no mpu can report that"),
                    );
                    return None;
                }
                if world % dp != 0 {
                    self.report.diag(
                        Field::MpuDataParallelWorldSize,
                        Level::Warning,
                        format!(
                            "mpu_data_parallel_world_size {dp} does not divide world_size {world}: an mpu's data-parallel \
                             groups split the world evenly (Megatron asserts world_size % (tp × pp) == 0)"
                        ),
                    );
                }
                if sp.is_given() {
                    self.report.diag(
                        Field::SequenceParallelSize,
                        Level::Note,
                        "With an mpu that has get_data_parallel_world_size, DeepSpeedConfig ignores sequence_parallel_size \
                         for the batch check (runtime/config.py).",
                    );
                }
                self.report.explain(
                    Output::BatchCheckWorldSize,
                    "with an mpu: world_size = mpu.get_data_parallel_world_size()",
                    format!("DeepSpeedConfig.world_size = {dp}"),
                );
                Num::Int(dp.into())
            }
            Source::SequenceParallel(s) => {
                if s == 0 {
                    self.report.refuse(
                        Field::SequenceParallelSize,
                        Refusal::new(
                            format!("DeepSpeedConfig stops at world_size = {world} / 0"),
                            "ZeroDivisionError: division by zero",
                        )
                        .fix(format!(
                            "Leave sequence_parallel_size out, or set a divisor of {world}."
                        )),
                    );
                    return None;
                }
                if world > EXACT_FLOAT {
                    self.report.diag(
                        Field::SequenceParallelSize,
                        Level::Error,
                        "world_size is too large for dpcalc to reproduce DeepSpeed's float world size exactly",
                    );
                    return None;
                }
                let w = world as f64 / s as f64;
                self.report.explain(
                    Output::BatchCheckWorldSize,
                    "no mpu, sequence_parallel_size in the config: world_size = dist.get_world_size() / sequence_parallel_size (a float)",
                    format!("DeepSpeedConfig.world_size = {world} / {s} = {}", num::float_repr(w)),
                );
                if world % s != 0 {
                    self.report.diag(
                        Field::SequenceParallelSize,
                        Level::Warning,
                        format!(
                            "world_size / sequence_parallel_size = {world} / {s} = {} is not a whole number. DeepSpeedConfig \
                             still checks the batch against it and derives float values.",
                            num::float_repr(w)
                        ),
                    );
                }
                if s > 1 {
                    self.ulysses_groups(world, s);
                } else {
                    self.report.diag(
                        Field::SequenceParallelSize,
                        Level::Note,
                        format!(
                            "sequence_parallel_size 1 still switches DeepSpeedConfig to the float division: world_size = {}",
                            num::float_repr(w)
                        ),
                    );
                }
                Num::Float(w)
            }
            Source::World => {
                self.report.explain(
                    Output::BatchCheckWorldSize,
                    "no mpu and no sequence_parallel_size: world_size = dist.get_world_size() (TP ranks included)",
                    format!("DeepSpeedConfig.world_size = {world}"),
                );
                Num::Int(world.into())
            }
        };
        self.report.set(Output::BatchCheckWorldSize, check);

        let replicas = self.replicas(world, source, autotp);
        if let Some(dp) = replicas {
            self.report.set(Output::DpWorldSize, Num::Int(dp.into()));
            self.report.publish_grid(crate::calc::Grid {
                tp: autotp,
                sp: i.sequence_parallel_size.given().unwrap_or(1),
                dp,
                ..crate::calc::Grid::data_parallel(world)
            });
        }
        Some(Cluster {
            world,
            check,
            source,
            replicas,
            autotp,
        })
    }

    /// The refusals of `initialize_sequence_parallel` (`runtime/sequence_parallel/parallel_state_sp.py`),
    /// which HF/accelerate call to build the Ulysses groups.
    fn ulysses_groups(&mut self, world: u64, s: u64) {
        let msg = if world < s {
            format!("RuntimeError: world_size ({world}) is less than sequence_parallel_size {s}")
        } else if world % s != 0 {
            format!(
                "RuntimeError: world_size ({world}) is not divisible by sequence_parallel_size {s})"
            )
        } else {
            return;
        };
        let fix = cluster::nearest_valid(world, s, "sequence_parallel_size");
        self.report.refuse(
            Field::SequenceParallelSize,
            Refusal::new(
                "DeepSpeed fails building the Ulysses groups (initialize_sequence_parallel)",
                msg,
            )
            .fix(fix),
        );
    }

    /// The engine's data-parallel size: the ranks that take distinct samples.
    fn replicas(&mut self, world: u64, source: Source, autotp: u64) -> Option<u64> {
        match source {
            Source::Mpu(dp) => {
                self.report.explain(
                    Output::DpWorldSize,
                    "with an mpu, the engine and its data loader use mpu.get_data_parallel_world_size()",
                    format!("dp_world_size = {dp}"),
                );
                Some(dp)
            }
            Source::SequenceParallel(s) => {
                if autotp > 1 {
                    self.report.diag(
                        Field::AutotpSize,
                        Level::Hint,
                        "dpcalc does not model AutoTP together with Ulysses sequence parallelism; no data-parallel size is shown",
                    );
                    return None;
                }
                if s == 0 || world % s != 0 {
                    return None;
                }
                let dp = world / s;
                self.report.explain(
                    Output::DpWorldSize,
                    "Ulysses: the ranks of one sequence-parallel group share each sample, so replicas = world_size // sequence_parallel_size",
                    format!("dp_world_size = {world} // {s} = {dp}"),
                );
                Some(dp)
            }
            Source::World if autotp > 1 => {
                if world % autotp != 0 {
                    let fix = cluster::nearest_valid(world, autotp, "autotp_size");
                    self.report.diag(
                        Field::AutotpSize,
                        Level::Error,
                        format!(
                            "autotp_size {autotp} does not divide world_size {world}: the engine builds a \
                             (world_size // autotp_size, autotp_size) = ({}, {autotp}) device mesh \
                             (utils/groups.py::_init_tp_mesh_device), which needs all {world} ranks. {fix}",
                            world / autotp
                        ),
                    );
                    return None;
                }
                let dp = world / autotp;
                self.report.explain(
                    Output::DpWorldSize,
                    "AutoTP: the engine's data-parallel group is world_size // autotp_size (utils/groups.py::_init_tp_mesh_device)",
                    format!("dp_world_size = {world} // {autotp} = {dp}"),
                );
                Some(dp)
            }
            Source::World => {
                self.report.explain(
                    Output::DpWorldSize,
                    "no model parallelism: every rank is a data-parallel replica",
                    format!("dp_world_size = {world}"),
                );
                Some(world)
            }
        }
    }

    // ---- batch ---------------------------------------------------------------------------

    fn batch(&mut self, c: &Cluster) -> Option<Batch> {
        let i = self.inputs;
        if [i.train, i.micro, i.ga].contains(&Param::Invalid) {
            return None;
        }
        let w = c.check;
        let wp = py(w);
        let int = |p: Param<u64>| p.given().map(|v| Num::Int(v.into()));
        let (t, m, g) = (int(i.train), int(i.micro), int(i.ga));
        // _set_batch_related_parameters (runtime/config.py): 0 counts as given ("is not None").
        let derived: Result<(Num, Num, Num, &str, String, Output), NumError> = match (t, m, g) {
            (Some(t), Some(m), Some(g)) => Ok((t, m, g, "", String::new(), Output::TrainBatchSize)),
            (Some(t), Some(m), None) => floordiv(t, m).and_then(|q| floordiv(q, w)).map(|g| {
                let worked = format!(
                    "gradient_accumulation_steps = {} // {} // {wp} = {}",
                    py(t),
                    py(m),
                    py(g)
                );
                (t, m, g, "gradient_accumulation_steps = train_batch_size // train_micro_batch_size_per_gpu // world_size",
                 worked, Output::GradientAccumulationSteps)
            }),
            (Some(t), None, Some(g)) => floordiv(t, w).and_then(|q| floordiv(q, g)).map(|m| {
                let worked = format!(
                    "train_micro_batch_size_per_gpu = {} // {wp} // {} = {}",
                    py(t),
                    py(g),
                    py(m)
                );
                (t, m, g, "train_micro_batch_size_per_gpu = train_batch_size // world_size // gradient_accumulation_steps",
                 worked, Output::TrainMicroBatchSizePerGpu)
            }),
            (None, Some(m), Some(g)) => num::mul(m, g).and_then(|p| num::mul(p, w)).map(|t| {
                let worked = format!(
                    "train_batch_size = {} × {} × {wp} = {}",
                    py(m),
                    py(g),
                    py(t)
                );
                (t, m, g, "train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size",
                 worked, Output::TrainBatchSize)
            }),
            (Some(t), None, None) => floordiv(t, w).map(|m| {
                let worked = format!(
                    "gradient_accumulation_steps = 1, train_micro_batch_size_per_gpu = {} // {wp} = {}",
                    py(t),
                    py(m)
                );
                (t, m, Num::Int(1),
                 "only train_batch_size: gradient_accumulation_steps = 1, train_micro_batch_size_per_gpu = train_batch_size // world_size",
                 worked, Output::TrainMicroBatchSizePerGpu)
            }),
            (None, Some(m), None) => num::mul(m, w).map(|t| {
                let worked = format!(
                    "train_batch_size = {} × {wp} = {}, gradient_accumulation_steps = 1",
                    py(m),
                    py(t)
                );
                (t, m, Num::Int(1),
                 "only train_micro_batch_size_per_gpu: train_batch_size = train_micro_batch_size_per_gpu × world_size, gradient_accumulation_steps = 1",
                 worked, Output::TrainBatchSize)
            }),
            (None, None, g) => {
                const EITHER: &str =
                    "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided";
                if g.is_some() {
                    self.report.refuse(
                        Field::TrainMicroBatchSizePerGpu,
                        Refusal::new(STOPS, format!("AssertionError: {EITHER}")).fix(
                            "gradient_accumulation_steps alone is not enough. Set train_micro_batch_size_per_gpu \
                             (DeepSpeed then derives train_batch_size).",
                        ),
                    );
                } else if self.anything {
                    self.report.refuse(
                        Field::TrainBatchSize,
                        Refusal::new(STOPS, format!("AssertionError: {EITHER}")).fix(
                            "Set train_micro_batch_size_per_gpu (and gradient_accumulation_steps), or train_batch_size.",
                        ),
                    );
                } else {
                    self.report.diag(
                        Field::TrainBatchSize,
                        Level::Hint,
                        format!("{EITHER} (DeepSpeed stops with this AssertionError otherwise)."),
                    );
                }
                return None;
            }
        };
        let (t, m, g, rule, worked, out) = match derived {
            Ok(v) => v,
            Err(e) => {
                let at = if m == Some(Num::Int(0)) {
                    Field::TrainMicroBatchSizePerGpu
                } else {
                    Field::GradientAccumulationSteps
                };
                match e {
                    NumError::ZeroDivision(_) => self.report.refuse(
                        at,
                        Refusal::new(
                            "DeepSpeedConfig stops in _set_batch_related_parameters",
                            e.to_string(),
                        )
                        .fix(format!("{} must be at least 1.", at.key())),
                    ),
                    _ => self.report.diag(
                        at,
                        Level::Error,
                        "the batch is too large for dpcalc to compute exactly",
                    ),
                }
                return None;
            }
        };
        if !rule.is_empty() {
            self.report.explain(out, rule, worked);
        }
        self.assertion(c, t, m, g)?;
        self.report.set(Output::TrainBatchSize, t);
        self.report.set(Output::TrainMicroBatchSizePerGpu, m);
        self.report.set(Output::GradientAccumulationSteps, g);
        if let (Num::Int(micro), Num::Int(ga), Num::Int(train)) = (m, g, t) {
            self.report.plan.publish_batch(
                micro.unsigned_abs(),
                ga.unsigned_abs(),
                train.unsigned_abs(),
            );
        }
        if w.is_float() {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Note,
                format!(
                    "With the float world size {wp}, DeepSpeed's derived values are floats: train_batch_size {}, \
                     train_micro_batch_size_per_gpu {}, gradient_accumulation_steps {}.",
                    py(t),
                    py(m),
                    py(g)
                ),
            );
        }
        Some(Batch {
            train: t,
            micro: m,
            ga: g,
        })
    }

    /// `_batch_assertion` (runtime/config.py), with the exact messages and a fix. Its `assert`s
    /// stop DeepSpeed with an AssertionError carrying the text (the refusals' `says`).
    fn assertion(&mut self, c: &Cluster, t: Num, m: Num, g: Num) -> Option<()> {
        let i = self.inputs;
        let positive = |n: Num| num::cmp(n, Num::Int(0)) == Ordering::Greater;
        let w = c.check;
        if !positive(t) {
            let fix = if i.train.is_given() {
                "Set train_batch_size to at least 1.".to_string()
            } else {
                "train_micro_batch_size_per_gpu and gradient_accumulation_steps must be at least 1."
                    .to_string()
            };
            let at = if i.train.is_given() {
                Field::TrainBatchSize
            } else if m == Num::Int(0) {
                Field::TrainMicroBatchSizePerGpu
            } else {
                Field::GradientAccumulationSteps
            };
            self.report.refuse(
                at,
                Refusal::new(
                    STOPS,
                    format!(
                        "AssertionError: Train batch size: {} has to be greater than 0",
                        py(t)
                    ),
                )
                .fix(fix),
            );
            return None;
        }
        if !positive(m) {
            let fix = if i.micro.is_given() {
                "Set train_micro_batch_size_per_gpu to at least 1.".to_string()
            } else {
                let per = num::mul(w, g).map(py).unwrap_or_default();
                format!(
                    "train_batch_size // world_size // gradient_accumulation_steps is 0: train_batch_size must be at least \
                     world_size × gradient_accumulation_steps = {} × {} = {per}.",
                    py(w),
                    py(g)
                )
            };
            self.report.refuse(
                if i.micro.is_given() {
                    Field::TrainMicroBatchSizePerGpu
                } else {
                    Field::TrainBatchSize
                },
                Refusal::new(
                    STOPS,
                    format!(
                        "AssertionError: Micro batch size per gpu: {} has to be greater than 0",
                        py(m)
                    ),
                )
                .fix(fix),
            );
            return None;
        }
        if !positive(g) {
            let fix = if i.ga.is_given() {
                "Set gradient_accumulation_steps to at least 1.".to_string()
            } else {
                let per = num::mul(m, w).map(py).unwrap_or_default();
                format!(
                    "train_batch_size // train_micro_batch_size_per_gpu // world_size is 0: train_batch_size must be at least \
                     train_micro_batch_size_per_gpu × world_size = {} × {} = {per}.",
                    py(m),
                    py(w)
                )
            };
            self.report.refuse(
                if i.ga.is_given() {
                    Field::GradientAccumulationSteps
                } else {
                    Field::TrainBatchSize
                },
                Refusal::new(
                    STOPS,
                    format!(
                        "AssertionError: Gradient accumulation steps: {} has to be greater than 0",
                        py(g)
                    ),
                )
                .fix(fix),
            );
            return None;
        }
        let product = match num::mul(m, g).and_then(|p| num::mul(p, w)) {
            Ok(p) => p,
            Err(_) => {
                self.report.diag(
                    Field::TrainBatchSize,
                    Level::Error,
                    "train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size is too large for dpcalc to compute exactly",
                );
                return None;
            }
        };
        if num::cmp(t, product) == Ordering::Equal {
            return Some(());
        }
        let text = format!(
            "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {} != {} * {} * {}",
            py(t),
            py(m),
            py(g),
            py(w)
        );
        let fix = self.mismatch_fix(c, t, m, g, product);
        self.report
            .refuse(Field::TrainBatchSize, Refusal::new(STOPS, text).fix(fix));
        None
    }

    /// The nearest values that pass the check.
    fn mismatch_fix(&self, c: &Cluster, t: Num, m: Num, g: Num, product: Num) -> String {
        let i = self.inputs;
        let Num::Int(w) = c.check else {
            return format!(
                "The float world size {} comes from sequence_parallel_size not dividing world_size {}; with a \
                 divisor the check passes whenever train_batch_size = micro × GA × world_size.",
                py(c.check),
                c.world
            );
        };
        let (Num::Int(t), Num::Int(m), Num::Int(g)) = (t, m, g) else {
            return String::new();
        };
        // The unit train_batch_size must be a multiple of, for what the user gave.
        let (unit, by) = match (i.micro.is_given(), i.ga.is_given()) {
            (true, true) => {
                let mut s = format!(
                    "Nearest valid: train_batch_size {} (= {m} × {g} × {w})",
                    py(product)
                );
                if let Some(d) = g.checked_mul(w).filter(|&d| d > 0 && t % d == 0) {
                    s.push_str(&format!(
                        ", or train_micro_batch_size_per_gpu {} with train_batch_size {t}",
                        t / d
                    ));
                }
                if let Some(d) = m.checked_mul(w).filter(|&d| d > 0 && t % d == 0) {
                    s.push_str(&format!(
                        ", or gradient_accumulation_steps {} with train_batch_size {t}",
                        t / d
                    ));
                }
                s.push_str(", or leave one of the three out so DeepSpeed derives it.");
                return s;
            }
            (true, false) => (
                m.checked_mul(w),
                "train_micro_batch_size_per_gpu × world_size",
            ),
            (false, true) => (g.checked_mul(w), "gradient_accumulation_steps × world_size"),
            (false, false) => (Some(w), "world_size"),
        };
        let Some(unit) = unit.filter(|&u| u > 0) else {
            return String::new();
        };
        let below = t / unit * unit;
        let above = (t / unit + 1).checked_mul(unit);
        let mut sizes: Vec<String> = Vec::new();
        if below >= unit {
            sizes.push(below.to_string());
        }
        if let Some(a) = above {
            sizes.push(a.to_string());
        }
        format!(
            "The floor divisions drop a remainder: train_batch_size must be a multiple of {by} = {unit}. Nearest valid: train_batch_size {}.",
            sizes.join(" or ")
        )
    }

    // ---- what a step consumes ------------------------------------------------------------

    fn global(&mut self, c: &Cluster, b: &Batch) {
        let Some(dp) = c.replicas else { return };
        let Ok(global) = num::mul(b.micro, b.ga).and_then(|p| num::mul(p, Num::Int(dp.into())))
        else {
            return;
        };
        self.report.set(Output::GlobalBatchSize, global);
        self.report.explain(
            Output::GlobalBatchSize,
            "samples per optimizer step = train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel replicas",
            format!(
                "global_batch_size = {} × {} × {dp} = {}",
                py(b.micro),
                py(b.ga),
                py(global)
            ),
        );
        if num::cmp(global, b.train) != Ordering::Equal {
            let why = match c.source {
                Source::World if c.autotp > 1 => format!(
                    "With AutoTP and no mpu, DeepSpeed counts the batch per TP rank: it checks train_batch_size against \
                     world_size {} (the {} ranks of a TP group see the same samples), while the engine's dp_world_size is \
                     {} // {} = {dp}. Each optimizer step takes {} samples, not train_batch_size {} (HF's \"auto\" fills \
                     train_batch_size the same way).",
                    c.world, c.autotp, c.world, c.autotp, py(global), py(b.train)
                ),
                _ => format!(
                    "DeepSpeed checks the batch against world_size {}, but {dp} data-parallel replicas take distinct samples: \
                     each optimizer step takes {} samples, not train_batch_size {}.",
                    py(c.check),
                    py(global),
                    py(b.train)
                ),
            };
            let at = if c.autotp > 1 && c.source == Source::World {
                Field::AutotpSize
            } else {
                Field::TrainBatchSize
            };
            self.report.diag(at, Level::Warning, why);
        }
        if let Some(len) = self.inputs.max_length.given() {
            if let Ok(tokens) = num::mul(global, Num::Int(len.into())) {
                self.report.set(Output::TokensPerStep, tokens);
                self.report.explain(
                    Output::TokensPerStep,
                    "token slots per step = global batch × max_length",
                    format!("tokens_per_step = {} × {len} = {}", py(global), py(tokens)),
                );
            }
        }
    }

    /// Epochs as a whole number: DeepSpeed has none, the user's loop runs `range(num_epochs)`.
    fn epochs(&mut self) -> Option<u64> {
        match self.inputs.num_epochs {
            Param::Absent => Some(1),
            Param::Invalid => None,
            Param::Given(e) if e.fract() == 0.0 && e < EXACT_FLOAT as f64 => Some(e as u64),
            Param::Given(e) => {
                self.report.diag(
                    Field::NumEpochs,
                    Level::Error,
                    format!(
                        "DeepSpeed has no epochs of its own: your loop makes whole passes over the data loader, so num_epochs \
                         must be a whole number (not {})",
                        num::float_repr(e)
                    ),
                );
                None
            }
        }
    }

    /// Without a computable batch: still check the data inputs.
    fn steps_inputs_only(&mut self) {
        let _ = self.epochs();
        let _ = self.samples();
    }

    fn samples(&mut self) -> Option<u64> {
        match self.inputs.num_samples {
            Param::Given(n) if n > EXACT_FLOAT => {
                self.report.diag(
                    Field::NumSamples,
                    Level::Error,
                    "num_samples is above 2^53: dpcalc cannot reproduce DistributedSampler's float rounding exactly",
                );
                None
            }
            p => p.given(),
        }
    }

    fn steps(&mut self, c: &Cluster, b: &Batch) {
        let epochs = self.epochs();
        let samples = self.samples();
        let drop_last = self.inputs.drop_last;
        if self.inputs.num_samples == Param::Absent {
            self.report.diag(
                Field::NumSamples,
                Level::Hint,
                "DeepSpeed has no epochs or step count of its own: your loop decides. Give the training rows to count \
                 what deepspeed.initialize(training_data=…)'s data loader yields per epoch.",
            );
            return;
        }
        let (Some(n), Some(epochs), Some(drop_last)) = (samples, epochs, drop_last.or(false))
        else {
            return;
        };
        if matches!(c.source, Source::SequenceParallel(_)) {
            self.report.diag(
                Field::NumSamples,
                Level::Hint,
                "With Ulysses sequence parallelism the step count depends on the framework's sequence-parallel data \
                 loader (HF's UlyssesSPDataLoaderAdapter), not DeepSpeed's; dpcalc does not count it here.",
            );
            return;
        }
        let (Some(dp), Num::Int(micro), Num::Int(ga)) = (c.replicas, b.micro, b.ga) else {
            return;
        };
        let (Ok(micro), Ok(ga)) = (u64::try_from(micro), u64::try_from(ga)) else {
            return;
        };
        if micro > EXACT_FLOAT || dp > EXACT_FLOAT {
            return;
        }
        // DistributedSampler (drop_last=False): math.ceil(len(dataset) / num_replicas) per rank.
        let per_rank = (n as f64 / dp as f64).ceil() as u64;
        // DeepSpeedDataLoader.__init__: len = len(sampler) // batch, or math.ceil(len(sampler) / batch).
        let len = if drop_last {
            per_rank / micro
        } else {
            (per_rank as f64 / micro as f64).ceil() as u64
        };
        self.report
            .set(Output::MicroBatchesPerEpoch, Num::Int(len.into()));
        self.report.explain(
            Output::MicroBatchesPerEpoch,
            if drop_last {
                "assuming deepspeed.initialize(training_data=…): DistributedSampler gives ceil(rows / dp) rows per rank; \
                 DeepSpeedDataLoader with dataloader_drop_last: len = that // micro"
            } else {
                "assuming deepspeed.initialize(training_data=…): DistributedSampler gives ceil(rows / dp) rows per rank \
                 (padded by repeating rows); DeepSpeedDataLoader: len = ceil(that / micro)"
            },
            if drop_last {
                format!("ceil({n} / {dp}) = {per_rank}; {per_rank} // {micro} = {len}")
            } else {
                format!("ceil({n} / {dp}) = {per_rank}; ceil({per_rank} / {micro}) = {len}")
            },
        );
        // is_gradient_accumulation_boundary: (micro_steps + 1) % GA == 0, and micro_steps is never
        // reset between epochs, so a remainder carries into the next epoch.
        let Some(total_micro) = len.checked_mul(epochs) else {
            self.report.diag(
                Field::NumEpochs,
                Level::Error,
                "num_epochs × micro batches per epoch is too large to count",
            );
            return;
        };
        let steps = total_micro / ga;
        self.report.set(Output::MaxSteps, Num::Int(steps.into()));
        self.report.explain(
            Output::MaxSteps,
            "an optimizer step at every micro step where (micro_steps + 1) % gradient_accumulation_steps == 0; \
             micro_steps runs on across epochs: steps = (epochs × micro batches per epoch) // GA",
            format!("steps = ({epochs} × {len}) // {ga} = {total_micro} // {ga} = {steps}"),
        );
        if len % ga == 0 {
            let per = len / ga;
            self.report.set(Output::StepsPerEpoch, Num::Int(per.into()));
            self.report.explain(
                Output::StepsPerEpoch,
                "steps per epoch = micro batches per epoch // GA (it divides)",
                format!("steps_per_epoch = {len} // {ga} = {per}"),
            );
        } else if epochs > 1 {
            self.report.diag(
                Field::GradientAccumulationSteps,
                Level::Note,
                format!(
                    "{len} micro batches per epoch is not a multiple of gradient_accumulation_steps {ga}: the leftover \
                     {} micro batches of an epoch accumulate into the next epoch's first step, so epochs take different \
                     numbers of steps.",
                    len % ga
                ),
            );
        }
        if steps == 0 {
            self.report.diag(
                Field::NumSamples,
                Level::Warning,
                format!(
                    "{total_micro} micro batches in all is fewer than gradient_accumulation_steps {ga}: the run ends \
                     without a single optimizer step"
                ),
            );
        } else if total_micro % ga != 0 {
            self.report.diag(
                Field::GradientAccumulationSteps,
                Level::Note,
                format!(
                    "The last {} micro batches accumulate gradients that no optimizer step applies.",
                    total_micro % ga
                ),
            );
        }
    }
}
