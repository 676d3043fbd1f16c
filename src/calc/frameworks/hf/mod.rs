//! The Hugging Face Trainer (transformers, with accelerate's `ParallelismConfig`): everything
//! dpcalc knows about it. Its rules, releases, form and outputs are in [`rules`]; this file
//! describes it to the shared machinery (`SPEC`): its parallel dimensions and rank order, the
//! keys it reads its own way, and its config mapping (`TrainingArguments` exported as a Python
//! call, with TRL's and accelerate's keys as comments; imported as HfArgumentParser's flags, its
//! JSON or that call).

mod model;
mod rules;

use model::settings;
pub use rules::*;

use crate::calc::spec::{
    self, Axis, Dim, Export, Gathered, Guide, Import, Layout, MemoKey, Mesh, Reads, RowKey, Spec,
    Syntax, Written,
};
use crate::calc::{Field, Kind, RawInputs};

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "hf",
    name: "Hugging Face Trainer",
    releases: RELEASES,
    unversioned: "5.23",
    groups: GROUPS,
    outputs: OUTPUTS,
    key_fields: KEY_FIELDS,
    output_label,
    describe,
    kind,
    compute: compute_release,
    legacy: None,
    // TrainingArguments.num_train_epochs
    default_epochs: "3.0",
    default_sequence_len: None,
    link_aliases: &[],
    link_default: spec::no_link_default,
    layout: Layout {
        dims: &[
            (Dim::Tp, Field::TpSize),
            (Dim::Cp, Field::CpSize),
            (Dim::Sp, Field::SpSize),
        ],
        dims_at,
        fills: spec::no_fills,
        launch_refusal,
        memo,
        planner: crate::calc::parse::settings::DEEPSPEED_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Dp, Axis::Cp, Axis::Sp, Axis::Tp],
        source: "accelerate 1.13 ParallelismConfig._get_mesh (mesh_order dp_replicate, dp_shard, cp, sp, tp)",
        caveat: spec::no_caveat,
    },
    export: Export {
        syntax: Syntax::Python,
        lang: "python",
        file_name: "train.py",
        keys: &[
            Field::PerDeviceTrainBatchSize,
            Field::GradientAccumulationSteps,
            Field::NumTrainEpochs,
            Field::MaxSteps,
            Field::DataloaderDropLast,
            Field::TrainSamplingStrategy,
            Field::WarmupSteps,
            Field::WarmupRatio,
            Field::EvalSteps,
            Field::SaveSteps,
            Field::LoggingSteps,
            Field::TpSize,
            Field::CpSize,
            Field::SpSize,
            Field::MaxLength,
            Field::NumSamples,
        ],
        launcher,
        script: "train.py",
        in_file,
        derive: spec::derive_nothing,
    },
    // TrainingArguments as HfArgumentParser's flags, its JSON, or the exported Python call
    import: Some(Import {
        reads: Reads::TrainingArguments,
        log: Some(spec::TrainingLog::TrainMetrics),
        alias: spec::no_alias,
        renamed: import_renamed,
        words: spec::all_words,
        joined: &[],
        file_cluster: None,
        config_json: &spec::CONFIG_JSON_AS_IS,
        // the Trainer passes TrainingArguments.parallelism_config, or none and accelerate's
        // Accelerator builds one (ACCELERATE_USE_PARALLELISM_CONFIG); either way
        // ParallelismConfig.__post_init__ reads each size not given from PARALLELISM_CONFIG_*,
        // which `accelerate launch` sets from the config's parallelism_config (accelerate
        // utils/launch.py prepare_extend_env_parallelism_config, parallelism_config.py)
        accelerate: &[
            ("tp_size", Field::TpSize),
            ("cp_size", Field::CpSize),
            ("sp_size", Field::SpSize),
        ],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Hf,
        settings,
        own: spec::no_own,
        model_key: Field::ModelNameOrPath,
        typed: crate::calc::model::ModelType::Llama,
    },
    // TrainingArguments(...) takes neither TRL's max_length nor accelerate's sizes as arguments
    written: &Written {
        aside: &[(
            Field::MaxLength,
            "goes in trl.SFTConfig (a TrainingArguments subclass)",
        )],
        gathered: Some(Gathered {
            argument: "parallelism_config",
            class: "ParallelismConfig",
            module: "accelerate",
            fields: &[Field::TpSize, Field::CpSize, Field::SpSize],
        }),
        ..spec::WRITTEN_BY_DOTS
    },
    compared: &spec::COMPARED_PLAINLY,
    guide: &Guide {
        evaluations: &[&[Field::EvalSteps]],
        ..spec::NO_GUIDE
    },
};

/// The Trainer up to 4.52 passes no `ParallelismConfig` to accelerate, so there only tensor
/// parallelism (the model's tp_plan) is a layout dimension.
fn dims_at(release: &str) -> Option<&'static [(Dim, Field)]> {
    match Version::at(release) {
        Version::V451 | Version::V452 => Some(&[(Dim::Tp, Field::TpSize)]),
        _ => None,
    }
}

/// accelerate 1.13 parallelism_config.py, `ParallelismConfig.__post_init__` (run: it raises).
fn launch_refusal(sizes: &[u64]) -> Option<String> {
    match sizes {
        [_, cp, sp, ..] if *cp > 1 && *sp > 1 => Some(
            "accelerate refuses it: \u{201c}Context Parallelism (CP) and Sequence Parallelism (SP) are mutually \
             exclusive.\u{201d} Set cp_size or sp_size to 1."
                .to_string(),
        ),
        _ => None,
    }
}

/// With SP the Trainer shards over world // tp and multiplies by sp, so tp and sp matter one by
/// one. batch_rebalance needs nothing more: its batch is per-device × GA × world // sp and its
/// steps global batches × sp (the world is the same for every row), and its warning and note
/// use dp, sp and the world only. CP and SP together: accelerate's refusal (`Calc::sizes`,
/// before the grid, so before any batch) quotes cp and sp, and nothing else of the row is
/// counted.
fn memo(_: &str, _: &RawInputs) -> MemoKey {
    Box::new(|sizes| match *sizes {
        [_, cp, sp] if cp > 1 && sp > 1 => RowKey::Refused(cp, sp),
        [tp, cp, sp] if sp > 1 => RowKey::Sizes(tp | (cp << 32), sp),
        _ => RowKey::Sizes(1, 1),
    })
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!("torchrun --nnodes {nodes} --nproc-per-node {gpus} train.py")
}

/// The Trainer's `max_steps` is an int whose default is -1.
fn kind(field: Field) -> Option<Kind> {
    (field == Field::MaxSteps).then_some(Kind::Int)
}

/// The keys the Trainer defaults or reads differently from the other frameworks.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::WarmupSteps => (
            "Warmup steps",
            "0",
            "v5: a step count, or below 1 a ratio of max_steps; v4: a whole number of steps.",
        ),
        Field::WarmupRatio => (
            "Warmup ratio",
            "0",
            "v4 only (transformers 5 removed it): a fraction of max_steps when warmup_steps is 0.",
        ),
        Field::MaxSteps => (
            "Max steps",
            "-1",
            "max_steps; -1 (the default) trains num_train_epochs, a positive value overrides it.",
        ),
        Field::NumSamples => (
            "Training rows",
            "required for steps",
            "len(train_dataset): the rows the dataloader reads.",
        ),
        _ => return None,
    })
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    f != Field::ModelNameOrPath && !spec::architecture(f) && !spec::deepspeed_key(f)
}

/// Keys its configs carry that it does not read (`Spec::import`'s `renamed`).
fn import_renamed(key: &str) -> Option<&'static str> {
    match key {
        // renamed eval_strategy; the old name was announced for removal in transformers 4.46
        "evaluation_strategy" => Some(
            "the releases dpcalc models have no evaluation_strategy (it became eval_strategy): HfArgumentParser \
             refuses it (“ValueError: Some specified arguments are not used by the HfArgumentParser”) and \
             TrainingArguments(evaluation_strategy=…) raises TypeError. Write eval_strategy.",
        ),
        // TRL 0.16 renamed SFTConfig's max_seq_length max_length and read the old name with a
        // DeprecationWarning; 0.20 removed it (trl PR #3704, commit e102ac8) and SFTConfig
        // defaults max_length to 1024
        "max_seq_length" => Some(
            "TRL 0.20 removed max_seq_length (0.16 renamed it max_length; 0.16–0.19 still read the old name): \
             SFTConfig has no such argument, so TRL's scripts (TrlParser, an HfArgumentParser) refuse it \
             (“ValueError: Some specified arguments are not used by the HfArgumentParser”), and a script that \
             passes unknown flags through trains at SFTConfig's max_length, 1024 by default, not at this length. \
             Write max_length.",
        ),
        _ => None,
    }
}
