//! Megatron-LM (megatron-core and its training code): everything dpcalc knows about it. Its
//! rules, releases, form and outputs are in [`rules`]; this file describes it to the shared
//! machinery (`SPEC`): its parallel dimensions and rank order, the keys it reads its own way,
//! its config mapping (a `pretrain_gpt.py` command line, exported and pasted), what the compare
//! view and the first-visit guide need of its own keys (`--train-samples`, the batch ramp-up) and
//! its one-click example. Releases:
//! megatron-core 0.19.2 (the default), 0.16.1 (links without `version=`) and Megatron-LM HEAD
//! `d98e8a6`; 0.19.2 adds the keys `eval_global_batch_size`, `eval_micro_batch_size`,
//! `expert_tensor_parallel_size` and `tensor_parallel_num_weight_shards` (exported and imported as
//! `--eval-global-batch-size` etc.); `num_experts` (`--num-experts`) is read at every release.

mod model;
mod rules;

pub use rules::*;

use crate::calc::parse;
use crate::calc::spec::{
    self, Axis, Compared, Dim, Entry, Example, Export, Guide, Import, Intent, Layout, MemoKey,
    Mesh, Reads, Spec, Syntax, Value,
};
use crate::calc::{Field, Output, Param, RawInputs, Report};

/// What the planner varies (`Spec::layout.planner`).
const PLANNER_CHOICES: spec::PlannerChoices = spec::PlannerChoices {
    recompute: &[
        (
            "none",
            &[
                (Field::RecomputeGranularity, ""),
                (Field::RecomputeMethod, ""),
                (Field::RecomputeNumLayers, ""),
            ],
        ),
        (
            "selective",
            &[
                (Field::RecomputeGranularity, "selective"),
                (Field::RecomputeMethod, ""),
                (Field::RecomputeNumLayers, ""),
            ],
        ),
        (
            "full",
            &[
                (Field::RecomputeGranularity, "full"),
                (Field::RecomputeMethod, "uniform"),
                (Field::RecomputeNumLayers, "1"),
            ],
        ),
    ],
    sharding: &[
        ("replicated", &[(Field::UseDistributedOptimizer, "false")]),
        (
            "distributed-optimizer",
            &[(Field::UseDistributedOptimizer, "true")],
        ),
    ],
    virtual_stages: Some((
        Field::NumVirtualStagesPerPipelineRank,
        Field::NumLayersPerVirtualPipelineStage,
    )),
};

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "megatron",
    name: "Megatron-LM",
    releases: RELEASES,
    unversioned: "0.16.1",
    groups: GROUPS,
    outputs: OUTPUTS,
    key_fields: KEY_FIELDS,
    output_label,
    describe,
    kind: spec::none_kind,
    compute: compute_release,
    legacy: None,
    default_epochs: "1",
    default_sequence_len: None,
    link_aliases: &[],
    link_default: spec::no_link_default,
    layout: Layout {
        dims: &[
            (Dim::Tp, Field::TensorModelParallelSize),
            (Dim::Cp, Field::ContextParallelSize),
            (Dim::Pp, Field::PipelineModelParallelSize),
        ],
        dims_at: spec::all_dims,
        fills: spec::no_fills,
        launch_refusal: spec::no_refusal,
        memo,
        planner: PLANNER_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Pp, Axis::Dp, Axis::Cp, Axis::Tp],
        source: "Megatron-core 0.16.1 parallel_state.initialize_model_parallel, order=\"tp-cp-ep-dp-pp\" (RankGenerator)",
        caveat: spec::no_caveat,
    },
    export: Export {
        syntax: Syntax::Shell,
        lang: "sh",
        file_name: "train.sh",
        keys: EXPORT_KEYS,
        launcher,
        script: "pretrain_gpt.py",
        in_file,
        derive,
    },
    import: Some(Import {
        reads: Reads::CommandLine,
        log: Some(spec::TrainingLog::ElapsedPerIteration),
        alias: import_alias,
        renamed: spec::no_renamed,
        words: import_words,
        joined: &[],
        file_cluster: None,
        config_json: &model::CONFIG_JSON,
        accelerate: &[],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Megatron,
        settings: model::settings,
        own: model::own,
        model_key: Field::ModelId,
        typed: crate::calc::model::ModelType::MegatronGpt,
    },
    written: &spec::WRITTEN_BY_DOTS,
    compared: &Compared {
        run_length: Some(run_length),
        complete: spec::complete_nothing,
        // its rules explain the step count as train_iters and the accumulation as
        // num_microbatches
        explained_as: &[
            (Output::MaxSteps, Output::TrainIters),
            (Output::GradientAccumulationSteps, Output::NumMicrobatches),
        ],
    },
    guide: &Guide {
        // --train-samples: the rows × epochs
        rows: &[Field::TrainSamples],
        batch_schedule: &[Field::RampupBatchSize, Field::StepBatchSizeSchedule],
        examples: EXAMPLES,
        ..spec::NO_GUIDE
    },
};

/// The arguments in `megatron/training/arguments.py`'s order.
const EXPORT_KEYS: &[Field] = &[
    Field::TensorModelParallelSize,
    Field::PipelineModelParallelSize,
    Field::ContextParallelSize,
    Field::ExpertModelParallelSize,
    Field::ExpertTensorParallelSize,
    Field::TensorParallelNumWeightShards,
    Field::NumExperts,
    Field::MicroBatchSize,
    Field::GlobalBatchSize,
    Field::RampupBatchSize,
    Field::StepBatchSizeSchedule,
    Field::DecreaseBatchSizeIfNeeded,
    Field::EvalGlobalBatchSize,
    Field::EvalMicroBatchSize,
    Field::TrainIters,
    Field::TrainSamples,
    Field::SeqLength,
    Field::LrDecayIters,
    Field::LrDecaySamples,
    Field::LrWarmupIters,
    Field::LrWarmupFraction,
    Field::LrWarmupSamples,
];

/// Megatron's expert grid (expert tensor, by default tensor) × expert × pipeline must divide the
/// world: with expert parallelism on (its size given and not 1; an unreadable size counts as on),
/// tp and pp matter one by one. 0.19.2 also reads them with `expert_tensor_parallel_size` or
/// `tensor_parallel_num_weight_shards` given (the expert grid, and `shards // tp` in the model
/// size), and the context size with `seq_length` given (a multiple of 2 × CP): then (tp, pp),
/// which with dp fix the whole layout.
fn memo(release: &str, raw: &RawInputs) -> MemoKey {
    let on = |f: Field, off: &[Param<u64>]| {
        let p = parse::count(f, raw.get(f), &mut Vec::new());
        !(p == Param::Absent || off.contains(&p))
    };
    let new = Version::at(release) == Version::Core0192;
    let expert = on(Field::ExpertModelParallelSize, &[Param::Given(1)])
        || (new
            && (on(Field::ExpertTensorParallelSize, &[])
                || on(Field::TensorParallelNumWeightShards, &[])
                || on(Field::SeqLength, &[])));
    Box::new(move |sizes| {
        if expert {
            spec::RowKey::Sizes(
                sizes.first().copied().unwrap_or(1),
                sizes.get(2).copied().unwrap_or(1),
            )
        } else {
            spec::RowKey::Sizes(1, 1)
        }
    })
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!("torchrun --nnodes {nodes} --nproc-per-node {gpus} pretrain_gpt.py")
}

/// `--global-batch-size` is required without a schedule; the default is one microbatch per
/// replica (arguments.py). Not with a ramp-up or schedule (they set it per step).
fn derive(raw: &RawInputs, report: &Report, entries: &mut Vec<Entry>, _: &mut Vec<String>) {
    let untouched = |f: Field| !raw.is_given(f) && raw.conflict(f).is_none();
    let schedule = !untouched(Field::RampupBatchSize) || !untouched(Field::StepBatchSizeSchedule);
    if untouched(Field::GlobalBatchSize)
        && !schedule
        && report.error_at(Field::GlobalBatchSize).is_none()
    {
        if let Some(g) = report.count(Output::GlobalBatchSize) {
            let at = entries
                .iter()
                .position(|e| e.field == Field::MicroBatchSize)
                .map_or(entries.len(), |i| i + 1);
            entries.insert(
                at,
                Entry {
                    field: Field::GlobalBatchSize,
                    value: Value::Int(g.into()),
                    derived: true,
                },
            );
        }
    }
}

/// The Megatron-LM arguments dpcalc reads, also before the Megatron form lists them.
fn import_alias(key: &str) -> Option<Field> {
    Field::from_key(key).filter(|f| EXPORT_KEYS.contains(f))
}

/// argparse's `nargs` for the flags dpcalc reads (`megatron/training/config/training_config.py`):
/// one word each (`--step-batch-size-schedule` is a `str`), except `--rampup-batch-size`
/// (`nargs=3`, whose words the rules check).
fn import_words(field: Field) -> Option<usize> {
    (field != Field::RampupBatchSize).then_some(1)
}

/// The keys Megatron requires or describes its own way.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::GlobalBatchSize => (
            "Global batch size",
            "mbs × dp",
            "--global-batch-size: samples per iteration, all GPUs.",
        ),
        Field::MicroBatchSize => (
            "Micro batch size",
            "required",
            "--micro-batch-size: samples per GPU per forward pass.",
        ),
        Field::ContextParallelSize => ("Context parallel size", "1", "--context-parallel-size."),
        _ => return None,
    })
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    f != Field::ModelId
}

/// The one-click example (`guide::examples`): a large pretraining layout.
const EXAMPLES: &[Example] = &[Example {
    label: "70B on 4 × 8, TP 8",
    release: "0.19.2",
    inputs: &[
        (Field::Nodes, "4"),
        (Field::TensorModelParallelSize, "8"),
        (Field::MicroBatchSize, "1"),
        (Field::GlobalBatchSize, "128"),
        (Field::TrainIters, "1000"),
        (Field::SeqLength, "8192"),
        (Field::ModelId, "meta-llama/Llama-3.1-70B"),
        (Field::UseDistributedOptimizer, "true"),
        (Field::Gpu, "h100-sxm"),
    ],
}];

/// The compare view's run length (`Spec::compared`): Megatron counts a run in iterations or
/// samples, so it gets `--train-samples` = rows × epochs when both are whole (and no
/// `--train-iters` was carried), else neither.
fn run_length(intent: &Intent, inputs: &mut RawInputs) {
    inputs.set(Field::TrainSamples, String::new());
    let epochs = intent
        .epochs
        .filter(|e| e.fract() == 0.0 && *e >= 0.0 && *e < 1e15)
        .map(|e| e as u64);
    if let Some(total) = intent.rows.zip(epochs).and_then(|(s, e)| s.checked_mul(e)) {
        if !inputs.is_given(Field::TrainIters) {
            inputs.set(Field::TrainSamples, total.to_string());
        }
    }
}
