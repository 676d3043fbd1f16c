//! torchtitan: everything dpcalc knows about it. Its rules, releases, form and outputs are in
//! [`rules`]; this file describes it to the shared machinery (`SPEC`): its parallel
//! dimensions and rank order, the keys it reads its own way, and its config mapping (job TOML,
//! export and import).

mod model;
mod rules;

use model::settings;
pub use rules::*;

use crate::calc::spec::{
    self, AsBuilt, Axis, Dim, Export, Import, Layout, MemoKey, Mesh, Reads, Spec, Syntax, Written,
};
use crate::calc::{Field, RawInputs};

/// What the planner varies (`Spec::layout.planner`).
const PLANNER_CHOICES: spec::PlannerChoices = spec::PlannerChoices {
    recompute: &[
        ("none", &[(Field::ActivationCheckpointMode, "none")]),
        (
            "selective",
            &[(Field::ActivationCheckpointMode, "selective")],
        ),
        ("full", &[(Field::ActivationCheckpointMode, "full")]),
    ],
    sharding: &[("fsdp", &[])],
    virtual_stages: None,
};

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "torchtitan",
    name: "torchtitan",
    releases: RELEASES,
    unversioned: "0.3.0",
    groups: GROUPS,
    outputs: OUTPUTS,
    key_fields: KEY_FIELDS,
    output_label,
    describe,
    kind: spec::none_kind,
    compute: compute_release,
    legacy: None,
    default_epochs: "1",
    // training.seq_len
    default_sequence_len: Some("2048"),
    link_aliases: &[],
    link_default: spec::no_link_default,
    layout: Layout {
        dims: &[
            (Dim::Tp, Field::TensorParallelDegree),
            (Dim::Cp, Field::ContextParallelDegree),
            (Dim::Pp, Field::PipelineParallelDegree),
        ],
        dims_at: spec::all_dims,
        fills,
        launch_refusal: spec::no_refusal,
        memo,
        planner: PLANNER_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Pp, Axis::Dp, Axis::Cp, Axis::Tp],
        source: "torchtitan 0.3.0 distributed/parallel_dims.py ParallelDims, mesh (pp, dp_replicate, dp_shard, cp, tp)",
        caveat: spec::no_caveat,
    },
    export: Export {
        syntax: Syntax::Toml,
        lang: "toml",
        file_name: "train.toml",
        keys: &[
            Field::DataParallelReplicateDegree,
            Field::DataParallelShardDegree,
            Field::TensorParallelDegree,
            Field::ContextParallelDegree,
            Field::PipelineParallelDegree,
            Field::ExpertParallelDegree,
            Field::PipelineParallelMicrobatchSize,
            Field::NumPpMicrobatches,
            Field::LocalBatchSize,
            Field::GlobalBatchSize,
            Field::SeqLen,
            Field::Steps,
            Field::NumTokensPerMicrobatchPerDpRank,
            Field::NumTokensPerTrainStep,
            Field::MaxContextLength,
        ],
        launcher,
        script: "-m torchtitan.train --job.config_file train.toml",
        in_file,
        derive: spec::derive_nothing,
    },
    import: Some(Import {
        reads: Reads::Toml,
        log: Some(spec::TrainingLog::StepTps),
        alias: import_alias,
        renamed: import_renamed,
        words: spec::all_words,
        // `[model] name = "llama3"`, `flavor = "8B"`: `model=llama3/8B`, a preset's alias
        // (model.rs ALIASES, from torchtitan 0.3.0's flavor table)
        joined: &[("model.name", "model.flavor")],
        file_cluster: None,
        config_json: &spec::CONFIG_JSON_AS_IS,
        accelerate: &[],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Torchtitan,
        settings,
        own: spec::no_own,
        model_key: Field::ModelId,
        typed: crate::calc::model::ModelType::Llama,
    },
    written: &Written {
        place,
        sections: TABLES,
        ..spec::WRITTEN_BY_DOTS
    },
    compared: &spec::COMPARED_PLAINLY,
    guide: &spec::NO_GUIDE,
};

/// A layout leaves `data_parallel_shard_degree = -1`: "the rest of the world".
fn fills(_: u64, _: &[u64]) -> Vec<(Field, String)> {
    vec![(Field::DataParallelShardDegree, "-1".to_string())]
}

/// torchtitan checks the sequence length against `tp × 2·cp` (its sequence/context divisor), so
/// the tensor and context sizes themselves matter when that check (or expert parallelism) makes
/// them, unless the row is refused earlier ([`SizeCheck`]).
fn memo(release: &str, raw: &RawInputs) -> MemoKey {
    let check = SizeCheck::new(release, raw);
    Box::new(move |sizes| {
        let size = |i: usize| sizes.get(i).copied().unwrap_or(1);
        let (tp, cp) = (size(0), size(1));
        if check.products_only(tp, cp, size(2)) {
            spec::RowKey::Sizes(1, 1)
        } else {
            spec::RowKey::Sizes(tp, cp)
        }
    })
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!(
        "torchrun --nnodes {nodes} --nproc-per-node {gpus} -m torchtitan.train --job.config_file train.toml"
    )
}

/// The tables of torchtitan's job TOML whose keys are this form's keys (`[training] steps`,
/// `[lr_scheduler] warmup_steps`; before 0.1 warmup_steps was in `[training]`).
const TABLES: &[&str] = &[
    "parallelism",
    "training",
    "lr_scheduler",
    "activation_checkpoint",
];

/// A pasted TOML key, as its dotted path: `parallelism.tensor_parallel_degree`,
/// `lr_scheduler.warmup_steps`, `activation_checkpoint.mode` (a form key itself).
fn import_alias(path: &str) -> Option<Field> {
    if path == "model.name" {
        return Some(Field::ModelId);
    }
    let (table, key) = path.split_once('.')?;
    if !TABLES.contains(&table) {
        return None;
    }
    <This as AsBuilt>::SPEC
        .fields()
        .filter(|f| !crate::calc::field::CLUSTER.contains(f))
        .find(|f| f.key() == path || f.key() == key)
}

/// The keys torchtitan defaults or reads differently from the other frameworks.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::WarmupSteps => (
            "Warmup steps",
            "200",
            "lr_scheduler.warmup_steps (clamped to training.steps).",
        ),
        Field::GlobalBatchSize => (
            "Global batch size",
            "-1",
            "training.global_batch_size; -1 means local_batch_size × dp (no accumulation).",
        ),
        _ => return None,
    })
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    f != Field::ModelId && !spec::architecture(f)
}

/// Keys its configs carry that it does not read (`Spec::import`'s `renamed`).
fn import_renamed(path: &str) -> Option<&'static str> {
    if let Some(what) = float8_fsdp_key(path) {
        return Some(what);
    }
    match path {
        // torchtitan split `training.batch_size` into local_batch_size and global_batch_size in
        // June 2025 (before 0.3.0)
        "training.batch_size" => Some(
            "torchtitan's releases dpcalc models have no training.batch_size: it became local_batch_size \
             (per GPU) and global_batch_size in 2025. The page uses local_batch_size's default, 8 per GPU; \
             if this is the batch per GPU, write local_batch_size.",
        ),
        _ => None,
    }
}

/// torchao's FSDP settings of the float8 converter, in `[float8]` (the 2024-12 benchmarks'
/// 9dec370, `config_manager.py`) or `[quantize.linear.float8]` (from May 2025, #1198): keys of
/// neither release dpcalc models. torchtitan removed `force_recompute_fp8_weight_in_bwd` in
/// #1452 (July 2025) once torchao had made it a no-op (pytorch/ao#2356, June 2025), and the FSDP
/// float8 all-gather with its precomputed scales and the tensorwise recipe in #3127 (April 2026):
/// 0.3.0's `Float8LinearConverter.Config` has `recipe_name` (rowwise), `filter_fqns` and
/// `emulate` only, and FSDP gathers the 16-bit weights.
fn float8_fsdp_key(path: &str) -> Option<&'static str> {
    let key = path
        .strip_prefix("quantize.linear.float8.")
        .or_else(|| path.strip_prefix("float8."))?;
    Some(match key {
        "enable_fsdp_float8_all_gather" | "precompute_float8_dynamic_scale_for_fsdp" => {
            "torchtitan's releases dpcalc models have no FSDP float8 all-gather: it went with the \
             tensorwise recipe in #3127 (April 2026). FSDP gathers the 16-bit weights; the page counts those."
        }
        "force_recompute_fp8_weight_in_bwd" => {
            "torchtitan removed it in #1452 (July 2025), torchao having made it a no-op (pytorch/ao#2356, \
             June 2025): it changes nothing the page counts."
        }
        _ => return None,
    })
}

/// The table of torchtitan's job TOML a key is written in (`Spec::written`,
/// `torchtitan/config/job_config.py`): `[parallelism]` for the parallel sizes, pipeline
/// microbatching and sequence parallelism, `[lr_scheduler]` for the warmup, the table a dotted key
/// names (`activation_checkpoint.mode`), `[training]` for the rest.
fn place(field: Field) -> (&'static str, &'static str) {
    const PARALLELISM: &[Field] = &[
        Field::DataParallelReplicateDegree,
        Field::DataParallelShardDegree,
        Field::TensorParallelDegree,
        Field::ContextParallelDegree,
        Field::PipelineParallelDegree,
        Field::ExpertParallelDegree,
        Field::PipelineParallelMicrobatchSize,
        Field::NumPpMicrobatches,
        Field::EnableSequenceParallel,
        Field::PipelineParallelSchedule,
    ];
    let key = field.key();
    match key.split_once('.') {
        _ if PARALLELISM.contains(&field) => ("parallelism", key),
        _ if field == Field::WarmupSteps => ("lr_scheduler", key),
        Some(table_and_key) => table_and_key,
        None => ("training", key),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fsdp_float8_keys_are_named_as_keys_the_releases_do_not_have() {
        for table in ["float8", "quantize.linear.float8"] {
            for key in [
                "enable_fsdp_float8_all_gather",
                "precompute_float8_dynamic_scale_for_fsdp",
            ] {
                let what = super::import_renamed(&format!("{table}.{key}")).expect(key);
                assert!(what.contains("#3127"), "{what}");
            }
            let what = super::import_renamed(&format!("{table}.force_recompute_fp8_weight_in_bwd"));
            assert!(what.is_some_and(|w| w.contains("pytorch/ao#2356")));
        }
        // the converter's own keys, and other tables' keys of the same name, are not these
        assert_eq!(
            super::import_renamed("quantize.linear.float8.recipe_name"),
            None
        );
        assert_eq!(
            super::import_renamed("training.enable_fsdp_float8_all_gather"),
            None
        );
    }

    #[test]
    fn default_sequence_len_is_the_rules_default() {
        assert_eq!(
            super::SPEC.default_sequence_len,
            Some(super::DEFAULT_SEQ_LEN.to_string().as_str())
        );
    }
}
