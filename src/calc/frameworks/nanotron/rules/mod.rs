//! nanotron 0.4 (the PyPI release, the default) and nanotron HEAD `2411b02` (2026-04-07, with
//! context parallelism).
//!
//! Mirrors, in `DistributedTrainer.__init__`'s order of execution:
//! - the config parsing, `src/nanotron/config/config.py::get_config_from_dict` (dacite,
//!   `strict=True`) of `ParallelismArgs` (`config/parallelism_config.py`: `dp`, `pp`, `tp` required,
//!   `expert_parallel_size = 1`; HEAD adds `context_parallel_size = 1`) and `TokensArgs`
//!   (`config/config.py`: `sequence_length`, `train_steps`, `micro_batch_size`,
//!   `batch_accumulation_per_replica`, all required, none checked for positivity). dacite stops at
//!   the first missing key, in section then field order (dp, pp, tp; sequence_length,
//!   train_steps, micro_batch_size, batch_accumulation_per_replica), and only that one is named
//!   with its `MissingValueError`. nanotron then computes nothing; dpcalc still shows each value
//!   whose own factors were typed (what nanotron's properties give on the keys given, as recorded
//!   at HEAD), and the world-size check once the parallelism section is complete;
//! - HEAD's `Config.__post_init__` model checks: `num_attention_heads % tp` (tp 0 stops here with
//!   a ZeroDivisionError), `num_attention_heads >= num_key_value_heads`,
//!   `num_key_value_heads >= tp`, `num_attention_heads % num_key_value_heads` (checked when
//!   `model.model_config.num_attention_heads` is typed; 0.4 has none of them);
//! - `Config.global_batch_size` (`config/config.py`) = `micro_batch_size ×
//!   batch_accumulation_per_replica × dp` (cp is not in it), and the tokens per step the trainer
//!   logs (`trainer.py`: `global_batch_size * sequence_length`; HEAD's
//!   `global_batch_size_in_tokens`);
//! - the world-size checks of `ParallelContext.__init__` (`src/nanotron/parallel/context.py`): in
//!   0.4 three checks in order (dp divides the world, `tp·pp·ep` divides the world, `tp·pp·ep·dp`
//!   equals it); at HEAD one assertion, `tp·pp·cp·dp == WORLD_SIZE` (expert parallelism is not in
//!   it), then `_init_parallel_groups`' `arange(world_size).reshape(ep, pp, dp, cp, tp)`, which
//!   refuses any `expert_parallel_size` other than 1;
//! - HEAD with dummy data (`run_train.py`, `dummy_infinite_data_generator`):
//!   `sequence_length % context_parallel_size == 0`;
//! - the training loop `for step in range(start + 1, train_steps + 1)` (`trainer.py`).
//! - the learning rate's warmup, `LRSchedulerArgs.lr_warmup_steps` (`config/config.py`, default
//!   0), which `helpers.py::lr_scheduler_builder` warms up over: `warmup_steps`.
//!
//! Every error text is what Python prints as the last line of the traceback, checked by running
//! nanotron's own code (`tests/fixtures/nanotron.txt`: 0.4 in `nanotron-1`, HEAD 2411b02 in
//! `nanotronhead-1`).
//!
//! One file per stage: this file holds the release table, the form, the typed inputs and
//! `compute_release` (the stages in order); `checks.rs`, `batch.rs` and `grid.rs` hold each
//! stage's rules.

use crate::calc::cluster::{self, ClusterInputs};
use crate::calc::field::CLUSTER;
use crate::calc::num::Num;
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};

mod batch;
mod checks;
mod grid;

use batch::{batch, sequence_check, tokens_checks};
use checks::{model_checks, parse_config};
use grid::{head_assertion, world_check_head, world_checks_04};

/// The releases dpcalc models with the rules of each, newest release (the default) first.
const TABLE: ReleaseTable<Version, 2> = [
    (
        Release {
            id: "0.4",
            label: "0.4 (PyPI)",
        },
        Version::V04,
    ),
    (
        Release {
            id: "head",
            label: "HEAD 2411b02, 2026-04-07 (context parallel)",
        },
        Version::Head,
    ),
];

/// The releases dpcalc models, newest release (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

/// The form: nanotron's `parallelism` and `tokens` sections.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::Dp,
            Field::Tp,
            Field::Pp,
            Field::ContextParallelSize,
            Field::ExpertParallelSize,
        ],
    ),
    (
        "Tokens",
        &[
            Field::MicroBatchSize,
            Field::BatchAccumulationPerReplica,
            Field::SequenceLength,
            Field::TrainSteps,
        ],
    ),
    ("Learning rate", &[Field::LrSchedulerWarmupSteps]),
    (
        "Model & memory",
        &[
            Field::ModelId,
            Field::RecomputeLayer,
            Field::NanotronZeroStage,
            Field::AccumulateGradInFp32,
            Field::TpMode,
            Field::TpLinearAsyncCommunication,
            Field::PpEngine,
        ],
    ),
    (
        crate::calc::field::ARCHITECTURE_TITLE,
        &[
            Field::ModelType,
            Field::HiddenSize,
            Field::NumHiddenLayers,
            Field::NumAttentionHeads,
            Field::NumKeyValueHeads,
            Field::HeadDim,
            Field::IntermediateSize,
            Field::VocabSize,
            Field::TieWordEmbeddings,
        ],
    ),
];

/// The results, in page order.
pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TokensPerStep,
    Output::MaxSteps,
    Output::WarmupSteps,
    Output::TotalTokens,
];

/// The inputs an embedded view always shows.
pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::Dp,
    Field::Tp,
    Field::Pp,
    Field::MicroBatchSize,
    Field::BatchAccumulationPerReplica,
    Field::SequenceLength,
];

/// nanotron's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => ("Data-parallel replicas", "parallelism.dp"),
        Output::GradientAccumulationSteps => (
            "Micro batches per step",
            "tokens.batch_accumulation_per_replica",
        ),
        Output::GlobalBatchSize => (
            "Global batch (samples per optimizer step)",
            "global_batch_size",
        ),
        Output::TokensPerStep => ("Global batch in tokens", "global_batch_size_in_tokens"),
        Output::MaxSteps => ("Optimizer steps the run takes", "tokens.train_steps"),
        Output::WarmupSteps => (
            "Warmup steps",
            "optimizer.learning_rate_scheduler.lr_warmup_steps",
        ),
        Output::TotalTokens => ("Tokens the run trains on", "total_tokens"),
        _ => return None,
    })
}

/// Which nanotron's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// 0.4: no context parallelism; `tp·pp·ep·dp == world_size`, checked in three steps.
    V04,
    /// HEAD: `tp·pp·cp·dp == world_size`, one assertion; EP not counted.
    Head,
}

impl Version {
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    pub fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
    }
}

/// The inputs, typed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Inputs {
    cluster: ClusterInputs,
    dp: Param<u64>,
    tp: Param<u64>,
    pp: Param<u64>,
    cp: Param<u64>,
    ep: Param<u64>,
    micro_batch_size: Param<u64>,
    batch_accumulation_per_replica: Param<u64>,
    sequence_length: Param<u64>,
    train_steps: Param<u64>,
    num_attention_heads: Param<u64>,
    num_key_value_heads: Param<u64>,
    lr_warmup_steps: Param<u64>,
}

impl Inputs {
    fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        Inputs {
            cluster: ClusterInputs::read(&mut r),
            dp: r.count(Field::Dp),
            tp: r.count(Field::Tp),
            pp: r.count(Field::Pp),
            cp: r.count(Field::ContextParallelSize),
            ep: r.count(Field::ExpertParallelSize),
            micro_batch_size: r.count(Field::MicroBatchSize),
            batch_accumulation_per_replica: r.count(Field::BatchAccumulationPerReplica),
            sequence_length: r.count(Field::SequenceLength),
            train_steps: r.count(Field::TrainSteps),
            num_attention_heads: r.count(Field::NumAttentionHeads),
            num_key_value_heads: r.count(Field::NumKeyValueHeads),
            lr_warmup_steps: r.count(Field::LrSchedulerWarmupSteps),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; an unknown id gets the
/// default's, [`Version::at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    let version = Version::at(release);
    report.plan.seq_len = i.sequence_length.positive_or(None);
    report.enter(Stage::Grid);
    let ws = i.cluster.world_size(&mut report);
    report.enter(Stage::Checks);
    let parsed = parse_config(version, &i, &mut report);
    // HEAD's Config.__post_init__ runs once the whole config parses
    let post_init = version == Version::Head && parsed.complete;
    let tp_refused = post_init && i.tp == Param::Given(0);
    if let (true, Some(p)) = (post_init, parsed.par) {
        let then = ws.map(|ws| head_assertion(ws, &p));
        model_checks(
            p.tp,
            i.num_attention_heads,
            i.num_key_value_heads,
            then,
            &mut report,
        );
    }
    report.enter(Stage::Batch);
    if let Some(g) = &parsed.given {
        batch(g, &mut report);
        tokens_checks(g, &mut report);
        report.enter(Stage::Schedule);
        warmup(i.lr_warmup_steps, &mut report);
    }
    // nanotron parses the whole config first; the world check is shown as soon as the
    // parallelism section is complete, so a layout that cannot launch is visible early.
    report.enter(Stage::Grid);
    if let (Some(p), Some(ws)) = (parsed.par, ws) {
        let errors = report.diags.len();
        match version {
            Version::V04 => world_checks_04(ws, &p, &mut report),
            Version::Head => world_check_head(ws, &p, tp_refused, &mut report),
        }
        let launched = report.diags[errors..]
            .iter()
            .all(|d| d.level != Level::Error);
        if launched {
            report.publish_grid(crate::calc::Grid {
                world: ws,
                dp: p.dp,
                tp: p.tp,
                cp: p.cp,
                sp: 1,
                pp: p.pp,
                ep: p.ep,
            });
        }
        // after ParallelContext, the dummy data generator (HEAD)
        if let (true, Version::Head, Param::Given(seq)) = (launched, version, i.sequence_length) {
            report.enter(Stage::Batch);
            sequence_check(seq, p.cp, &mut report);
        }
    }
    report
}

/// The `parallelism` section after nanotron parsed it.
#[derive(Clone, Copy, Debug)]
struct Par {
    dp: u64,
    tp: u64,
    pp: u64,
    /// 1 in 0.4 (it has no such key).
    cp: u64,
    ep: u64,
}

/// The keys that were typed and read, for the values nanotron's own properties compute from
/// them (`None`: absent). When the whole config parses, every one is given.
#[derive(Clone, Copy, Debug)]
struct Given {
    dp: Option<u64>,
    pp: Option<u64>,
    mbs: Option<u64>,
    accum: Option<u64>,
    seq: Option<u64>,
    steps: Option<u64>,
}

/// What `get_config_from_dict` made of the inputs.
#[derive(Clone, Copy, Debug)]
struct Parsed {
    /// The `parallelism` section, when it parses on its own (ParallelContext can then run).
    par: Option<Par>,
    /// The values typed, unless a value is unreadable or a key is one the release lacks (then
    /// dpcalc shows no value at all).
    given: Option<Given>,
    /// The whole config parses: `Config.__post_init__` runs.
    complete: bool,
}

/// The learning rate's warmup: `LRSchedulerArgs.lr_warmup_steps` (`config/config.py`, an int,
/// default 0), the steps over which `helpers.py::lr_scheduler_builder` raises the learning rate
/// from 0 (linear) before the decay starts; nanotron does not compare it with `train_steps`.
fn warmup(steps: Param<u64>, report: &mut Report) {
    let Some(n) = steps.or(0) else {
        return;
    };
    report.set(Output::WarmupSteps, Num::Int(n.into()));
    report.explain(
        Output::WarmupSteps,
        "warmup_steps = optimizer.learning_rate_scheduler.lr_warmup_steps (default 0)",
        format!("warmup_steps = {n}"),
    );
}
