//! nanotron: everything dpcalc knows about it. Its rules, releases, form and outputs are in
//! [`rules`]; this file describes it to the shared machinery (`SPEC`): its parallel dimensions
//! and rank order, the keys it reads its own way, its config mapping (YAML, export and import), and
//! what the compare view and the first-visit guide need of the sizes it has no default for.

mod model;
mod rules;

use model::settings;
pub use rules::*;

use crate::calc::spec::{
    self, AsBuilt, Axis, Compared, Dim, Entry, Export, Guide, Import, Intent, Layout, Mesh, Reads,
    Spec, Syntax, Value, Written,
};
use crate::calc::{Field, Output, RawInputs, Report};

/// What the planner varies (`Spec::layout.planner`).
const PLANNER_CHOICES: spec::PlannerChoices = spec::PlannerChoices {
    recompute: &[
        ("none", &[(Field::RecomputeLayer, "false")]),
        ("full", &[(Field::RecomputeLayer, "true")]),
    ],
    sharding: &[("replicated", &[])],
    virtual_stages: None,
};

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "nanotron",
    name: "nanotron",
    releases: RELEASES,
    unversioned: "0.4",
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
        dims: &[(Dim::Tp, Field::Tp), (Dim::Pp, Field::Pp)],
        dims_at: spec::all_dims,
        fills,
        launch_refusal: spec::no_refusal,
        // nanotron's checks quote tp and pp (0.4 multiplies in EP): both matter one by one
        memo: spec::memo_first_two,
        planner: PLANNER_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Pp, Axis::Dp, Axis::Cp, Axis::Tp],
        source: "nanotron 0.4 parallel/context.py ParallelContext, arange(world).reshape(ep, pp, dp, tp) \
             (HEAD: reshape(ep, pp, dp, cp, tp))",
        caveat: spec::no_caveat,
    },
    export: Export {
        syntax: Syntax::YamlNested,
        lang: "yaml",
        file_name: "config.yaml",
        keys: &[
            Field::Dp,
            Field::Tp,
            Field::Pp,
            Field::ExpertParallelSize,
            Field::MicroBatchSize,
            Field::BatchAccumulationPerReplica,
            Field::SequenceLength,
            Field::TrainSteps,
            Field::LrSchedulerWarmupSteps,
            Field::NumAttentionHeads,
            Field::NumKeyValueHeads,
        ],
        launcher,
        script: "run_train.py --config-file config.yaml",
        in_file,
        derive,
    },
    import: Some(Import {
        reads: Reads::YamlNested,
        log: Some(spec::TrainingLog::TokensPerSecPerGpu),
        alias: import_alias,
        renamed: spec::no_renamed,
        words: spec::all_words,
        joined: &[],
        file_cluster: None,
        config_json: &spec::CONFIG_JSON_AS_IS,
        accelerate: &[],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Nanotron,
        settings,
        own: spec::no_own,
        model_key: Field::ModelId,
        typed: crate::calc::model::ModelType::Llama,
    },
    written: &Written {
        place,
        sections: &[
            "parallelism",
            "tokens",
            "optimizer",
            "optimizer.learning_rate_scheduler",
            "model.model_config",
        ],
        ..spec::WRITTEN_BY_DOTS
    },
    compared: &Compared {
        complete,
        ..spec::COMPARED_PLAINLY
    },
    guide: &Guide {
        // tokens… and parallelism.dp have no defaults: dp × tp × pp must be the world
        data_parallel: &[Field::Dp],
        ..spec::NO_GUIDE
    },
};

/// nanotron's `dp` has no default: a layout sets it.
fn fills(dp: u64, _: &[u64]) -> Vec<(Field, String)> {
    vec![(Field::Dp, dp.to_string())]
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!(
        "torchrun --nnodes {nodes} --nproc-per-node {gpus} run_train.py --config-file config.yaml"
    )
}

/// `parallelism.dp` is required: dp × tp × pp must equal the world size.
fn derive(raw: &RawInputs, report: &Report, entries: &mut Vec<Entry>, _: &mut Vec<String>) {
    let untouched = !raw.is_given(Field::Dp) && raw.conflict(Field::Dp).is_none();
    if untouched
        && !entries.iter().any(|e| e.field == Field::Dp)
        && report.error_at(Field::Dp).is_none()
    {
        if let Some(dp) = report.count(Output::DpWorldSize) {
            entries.insert(
                0,
                Entry {
                    field: Field::Dp,
                    value: Value::Int(dp.into()),
                    derived: true,
                },
            );
        }
    }
}

/// A pasted YAML key, as its dotted path: `parallelism.dp`, `tokens.micro_batch_size`,
/// `model.model_config.hidden_size` (the two head keys are form keys with that path).
fn import_alias(path: &str) -> Option<Field> {
    let key = [
        "parallelism.",
        "tokens.",
        "optimizer.",
        "model.model_config.",
    ]
    .iter()
    .find_map(|p| path.strip_prefix(p))?;
    <This as AsBuilt>::SPEC
        .fields()
        .filter(|f| !crate::calc::field::CLUSTER.contains(f))
        .find(|f| f.key() == key)
}

/// The keys nanotron requires or describes its own way.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::MicroBatchSize => ("Micro batch size", "required", "tokens.micro_batch_size."),
        Field::ContextParallelSize => (
            "Context parallel size",
            "1",
            "parallelism.context_parallel_size (HEAD only; 0.4 has no such key).",
        ),
        Field::ExpertParallelSize => (
            "Expert parallel size",
            "1",
            "parallelism.expert_parallel_size (0.4 counts it in the GPUs per model; HEAD does not).",
        ),
        _ => return None,
    })
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    f != Field::ModelId && f != Field::ModelType
}

/// The section of nanotron's config YAML a key is written in (`Spec::written`,
/// `src/nanotron/config/config.py`): `parallelism` for the parallel sizes and
/// `recompute_layer` and the pipeline engine and TP mode, `optimizer` for `zero_stage` and
/// `accumulate_grad_in_fp32`, `model.model_config` for the architecture (its LlamaConfig reads
/// config.json's names), the section a dotted key names (`model.model_config.num_attention_heads`),
/// `tokens` for the batch and steps.
fn place(field: Field) -> (&'static str, &'static str) {
    const PARALLELISM: &[Field] = &[
        Field::Dp,
        Field::Tp,
        Field::Pp,
        Field::ExpertParallelSize,
        Field::ContextParallelSize,
        Field::RecomputeLayer,
        Field::TpMode,
        Field::TpLinearAsyncCommunication,
        Field::PpEngine,
    ];
    let key = field.key();
    match key.rsplit_once('.') {
        Some(section_and_key) => section_and_key,
        None if PARALLELISM.contains(&field) => ("parallelism", key),
        None if matches!(
            field,
            Field::NanotronZeroStage | Field::AccumulateGradInFp32
        ) =>
        {
            ("optimizer", key)
        }
        None if spec::architecture(field) => ("model.model_config", key),
        None => ("tokens", key),
    }
}

/// The compare view's intent for nanotron (`Spec::compared`), which has no defaults for its
/// sizes or its sequence length: the selected framework's default sequence length (when none was
/// carried), tp and pp of 1 unless carried, and `dp = world // (tp × pp)`.
fn complete(intent: &Intent, inputs: &mut RawInputs) {
    if !inputs.is_given(Field::SequenceLength) {
        if let Some(d) = intent.default_sequence_len {
            inputs.set(Field::SequenceLength, d);
        }
    }
    for f in [Field::Tp, Field::Pp] {
        if !inputs.is_given(f) {
            inputs.set(f, "1");
        }
    }
    if !inputs.is_given(Field::Dp) {
        let size = |f: Field| inputs.get(f).trim().parse::<u64>().unwrap_or(1).max(1);
        let model = size(Field::Tp).checked_mul(size(Field::Pp));
        if let Some(dp) = intent
            .world
            .zip(model)
            .map(|(w, m)| w / m)
            .filter(|&d| d > 0)
        {
            inputs.set(Field::Dp, dp.to_string());
        }
    }
}
