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
//!
//! One file per stage: this file holds the release, the form, the typed inputs and `Calc::run`
//! (the stages in order); `grid.rs`, `batch.rs` and `steps.rs` hold each stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::num::{self, Num, NumError};
use crate::calc::parse::Reader;
use crate::calc::spec::Release;
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};
use std::cmp::Ordering;

mod batch;
mod grid;
mod steps;

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
    cluster: ClusterInputs,
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
        cluster: ClusterInputs::read(&mut r),
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
    (report.plan.rows, report.plan.epochs) = (i.num_samples.given(), i.num_epochs.given());
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
}
