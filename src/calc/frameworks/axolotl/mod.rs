//! axolotl: everything dpcalc knows about it. Its rules, releases, form and outputs are in
//! [`rules`] (axolotl 0.21.0, 0.20.0, 0.19.0, 0.18.0 for 0.15.0 – 0.18.0, and 0.14.0); this file describes it to
//! the shared machinery (`SPEC`): its parallel dimensions and rank order, its config mapping
//! (export and import), its link defaults, the settings its evaluations and saves need (for the
//! first-visit guide) and its one-click examples.

mod model;
mod rules;

pub use rules::*;

use crate::calc::spec::{
    self, Axis, Dim, Dims, Example, Export, Guide, Import, Layout, Legacy, Mesh, Reads, Spec,
    Syntax,
};
use crate::calc::Field;

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "axolotl",
    name: "axolotl",
    releases: RELEASES,
    unversioned: "0.19.0",
    groups: GROUPS,
    outputs: OUTPUTS,
    key_fields: KEY_FIELDS,
    output_label,
    describe,
    kind: spec::none_kind,
    compute: compute_release,
    legacy: Some(legacy),
    default_epochs: "1",
    default_sequence_len: Some("512"),
    link_aliases: LINK_ALIASES,
    link_default,
    layout: Layout {
        dims: DIMS_EP,
        dims_at,
        fills,
        launch_refusal: spec::no_refusal,
        memo,
        planner: crate::calc::parse::settings::DEEPSPEED_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Dp, Axis::Cp, Axis::Ep, Axis::Tp],
        source: "accelerate 1.13 ParallelismConfig._get_mesh (mesh_order dp_replicate, dp_shard, cp, sp, tp), which axolotl builds in utils/distributed.py; \
             with expert parallelism (0.21.0) axolotl's patched _get_mesh (monkeypatch/accelerate/parallelism_config.py, \
             MESH_ORDER dp_replicate, dp_shard, cp, ep, sp, tp), run on accelerate 1.15 for world 8 and 16",
        caveat: spec::no_caveat,
    },
    export: Export {
        syntax: Syntax::Yaml,
        lang: "yaml",
        file_name: "config.yml",
        keys: EXPORT_KEYS,
        launcher,
        script: "-m axolotl.cli.train config.yml",
        in_file,
        derive: spec::derive_nothing,
    },
    import: Some(Import {
        reads: Reads::Yaml,
        log: Some(spec::TrainingLog::TrainMetrics),
        alias: import_alias,
        renamed: import_renamed,
        words: spec::all_words,
        joined: &[],
        file_cluster: None,
        config_json: &spec::CONFIG_JSON_AS_IS,
        accelerate: &[],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Hf,
        settings: model::settings,
        own: model::own,
        model_key: Field::BaseModel,
        typed: crate::calc::model::ModelType::Llama,
    },
    written: &spec::WRITTEN_BY_DOTS,
    compared: &spec::COMPARED_PLAINLY,
    guide: &Guide {
        // val_set_size splits off the evaluation set, evals_per_epoch says how often
        evaluations: &[&[Field::EvalsPerEpoch], &[Field::ValSetSize]],
        saves: &[&[Field::SavesPerEpoch]],
        examples: EXAMPLES,
        ..spec::NO_GUIDE
    },
};

/// 0.21.0's dimensions: expert parallelism is built in (`expert_parallel_size`).
const DIMS_EP: Dims = &[
    (Dim::Tp, Field::TensorParallelSize),
    (Dim::Cp, Field::ContextParallelSize),
    (Dim::Ep, Field::ExpertParallelSize),
];

/// The releases before 0.21.0: tensor and context parallelism (0.20.0 reads
/// `expert_parallel_size` only with the plugin listed, so its explorer leaves it as given).
const DIMS_TP_CP: Dims = &[
    (Dim::Tp, Field::TensorParallelSize),
    (Dim::Cp, Field::ContextParallelSize),
];

/// The explorer's dimensions at a release: expert parallelism from 0.21.0 on.
fn dims_at(release: &str) -> Option<Dims> {
    match Version::at(release) {
        Version::V0_21_0 => None,
        _ => Some(DIMS_TP_CP),
    }
}

/// With expert parallelism, what `ExpertParallelPlugin._validate_mesh_axes` (the config's
/// values: `ep × dp_replicate × dp_shard × tp × cp` = world) and `validate_expert_parallel_topology`
/// (an FSDP2 `fsdp_config` with `state_dict_type: FULL_STATE_DICT`; the block without a version
/// means 2) need: `dp_shard_size` = the rest of the world, and the state dict type. Nothing
/// without it (`sizes` in [`DIMS_EP`] order; shorter at older releases).
fn fills(dp: u64, sizes: &[u64]) -> Vec<(Field, String)> {
    if sizes.get(2).is_some_and(|&ep| ep > 1) {
        vec![
            (Field::DpShardSize, dp.to_string()),
            (Field::FsdpStateDictType, "FULL_STATE_DICT".to_string()),
        ]
    } else {
        Vec::new()
    }
}

/// Old parameter names a link may use: axolotl itself still accepts `sequence_parallel_degree`
/// as the deprecated name of `context_parallel_size` (`utils/schemas/config.py`).
const LINK_ALIASES: &[(&str, Field)] = &[("sequence_parallel_degree", Field::ContextParallelSize)];

/// The config keys in the order axolotl's documentation lists them.
const EXPORT_KEYS: &[Field] = &[
    Field::TensorParallelSize,
    Field::ContextParallelSize,
    Field::MicroBatchSize,
    Field::GradientAccumulationSteps,
    Field::BatchSize,
    Field::NumEpochs,
    Field::MaxSteps,
    Field::SequenceLen,
    Field::SamplePacking,
    Field::SamplePackingEffEst,
    Field::WarmupSteps,
    Field::WarmupRatio,
    Field::ValSetSize,
    Field::EvalsPerEpoch,
    Field::SavesPerEpoch,
    Field::AttnImplementation,
    Field::ExpertParallelSize,
    Field::DpShardSize,
    Field::DpReplicateSize,
    Field::FsdpVersion,
    Field::FsdpConfigFsdpVersion,
    Field::FsdpStateDictType,
    Field::FsdpFinalStateDictType,
    Field::FsdpReshardAfterForward,
    Field::FsdpOffloadParams,
    Field::FsdpShardingStrategy,
    Field::Fsdp,
    Field::Deepspeed,
    Field::Plugins,
];

/// Values a link leaves out because they are what axolotl assumes when the key is absent. Not
/// `micro_batch_size`, `gradient_accumulation_steps` or `batch_size`: axolotl's validators count
/// those when present.
fn link_default(field: Field, text: &str) -> bool {
    match field {
        Field::TensorParallelSize | Field::ContextParallelSize => text == "1",
        Field::NumEpochs => text == "1" || text == "1.0",
        Field::SequenceLen => text == "512",
        Field::SamplePacking => text.eq_ignore_ascii_case("false"),
        _ => false,
    }
}

/// The memo key: dp and the dimensions' on/off, unless expert parallelism, the dp axes or
/// DeepSpeed are given (0.20.0+'s launch checks then quote tp and cp one by one), or a row
/// has expert parallelism (its fills give `dp_shard_size`, and the EP checks quote ep). tp and
/// cp with dp fix ep (`tp × cp × ep × dp` = world).
fn memo(release: &str, raw: &crate::calc::RawInputs) -> spec::MemoKey {
    let one_by_one = [
        Field::ExpertParallelSize,
        Field::DpShardSize,
        Field::DpReplicateSize,
        Field::Deepspeed,
    ]
    .iter()
    .any(|&f| raw.is_given(f));
    let two = spec::memo_first_two(release, raw);
    Box::new(move |sizes| {
        if one_by_one || sizes.get(2).is_some_and(|&ep| ep > 1) {
            two(sizes)
        } else {
            spec::RowKey::Sizes(1, 1)
        }
    })
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!("torchrun --nnodes {nodes} --nproc-per-node {gpus} -m axolotl.cli.train config.yml")
}

/// The comparison shown beside the results: 0.14.0 (before PRs #3444 and #3462) under the
/// newer releases, 0.19.0 under 0.14.0 ([`Version::other`]).
fn legacy(release: &str) -> Legacy {
    let other = Version::at(release).other();
    let (title, help) = match other {
        Version::V0_14_0 => (
            "Before the fix: axolotl 0.14.0",
            "0.14.0 scaled the batch by the whole world size and multiplied steps by context × tensor parallel size. \
             Use these to audit an older run.",
        ),
        _ => (
            "After the fix: axolotl 0.19.0",
            "0.19.0 (after PRs #3444 and #3462) scales the batch by world_size // cp // tp and adds no step factor: \
             what the same config gives on a current axolotl.",
        ),
    };
    Legacy {
        other: other.id(),
        title,
        help,
    }
}

/// A pasted YAML key: axolotl's deprecated alias (`sequence_parallel_degree`).
fn import_alias(key: &str) -> Option<Field> {
    LINK_ALIASES
        .iter()
        .chain(PREFIXED)
        .find(|(a, _)| *a == key)
        .map(|&(_, f)| f)
}

/// `fsdp_config` keys with their deprecated `fsdp_` prefix, as pasted configs still write them:
/// axolotl strips it (`check_fsdp_config_kwargs_prefix`; 0.21.0 run on such a config read
/// `fsdp_offload_params: true` as `offload_params: True`).
const PREFIXED: &[(&str, Field)] = &[
    ("fsdp_config.fsdp_offload_params", Field::FsdpOffloadParams),
    (
        "fsdp_config.fsdp_sharding_strategy",
        Field::FsdpShardingStrategy,
    ),
    ("fsdp_config.fsdp_state_dict_type", Field::FsdpStateDictType),
    (
        "fsdp_config.fsdp_final_state_dict_type",
        Field::FsdpFinalStateDictType,
    ),
    (
        "fsdp_config.fsdp_reshard_after_forward",
        Field::FsdpReshardAfterForward,
    ),
];

/// The keys axolotl reads its own way.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::ExpertParallelSize => (
            "Expert parallel size",
            "1",
            "expert_parallel_size (0.21.0; 0.20.0 with the expert-parallel plugin): splits the \
             experts over GPUs inside the data-parallel ranks; not in batch_size.",
        ),
        _ => return None,
    })
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    !spec::architecture(f) && !spec::deepspeed_key(f)
}

/// Keys its configs carry that it does not read (`Spec::import`'s `renamed`).
fn import_renamed(key: &str) -> Option<&'static str> {
    match key {
        // an old example's `tensor_parallel: 'auto'`; AxolotlInputConfig declares no such field
        // and pydantic's default (extra="ignore") drops it without a word
        "tensor_parallel" => Some(
            "axolotl reads tensor_parallel_size, not tensor_parallel; its config model drops keys it does not declare, \
             so this run has no tensor parallelism, and the page computes it so (tensor_parallel_size 1). \
             For tensor parallelism write tensor_parallel_size.",
        ),
        _ => None,
    }
}

/// The one-click examples (`guide::examples`): a common fine-tune, and the table of PR #3462
/// (0.19.0, whose batch the fix changed).
const EXAMPLES: &[Example] = &[
    Example {
        label: "Llama-3.1-8B on 1 × 8, ZeRO-3",
        release: "0.21.0",
        inputs: &[
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "8"),
            (Field::NumSamples, "50000"),
            (Field::SequenceLen, "4096"),
            (Field::BaseModel, "meta-llama/Llama-3.1-8B"),
            (Field::ZeroStage, "3"),
            (Field::Gpu, "h100-sxm"),
        ],
    },
    Example {
        label: "axolotl PR #3462's table: 2 nodes, TP 2",
        release: "0.19.0",
        inputs: &[
            (Field::Nodes, "2"),
            (Field::TensorParallelSize, "2"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumSamples, "10000"),
            (Field::SequenceLen, "2048"),
        ],
    },
    Example {
        label: "axolotl PR #3462's table: 2 nodes, TP 4",
        release: "0.19.0",
        inputs: &[
            (Field::Nodes, "2"),
            (Field::TensorParallelSize, "4"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumSamples, "10000"),
            (Field::SequenceLen, "2048"),
        ],
    },
];

#[cfg(test)]
mod tests {
    #[test]
    fn default_sequence_len_is_the_rules_default() {
        assert_eq!(
            super::SPEC.default_sequence_len,
            Some(super::DEFAULT_SEQUENCE_LEN.to_string().as_str())
        );
    }
}
