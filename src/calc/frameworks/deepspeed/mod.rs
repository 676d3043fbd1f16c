//! DeepSpeed: everything dpcalc knows about it. Its rules, releases, form and outputs are in
//! [`rules`] (DeepSpeed 0.19.8's `runtime/config.py` batch checks and its data loader); this file
//! describes it to the shared machinery (`SPEC`): its parallel dimensions and rank order, the
//! keys it reads its own way, and its config mapping (`ds_config.json` export and import).

mod model;
mod rules;

use model::settings;
pub use rules::*;

use crate::calc::spec::{
    self, Axis, Dim, Entry, Export, Import, Layout, Mesh, Reads, Spec, Syntax, Value, Written,
};
use crate::calc::{Field, Output, RawInputs, Report};

/// This framework, for its own code to read its Spec as this build holds it:
/// `<This as AsBuilt>::SPEC` (the registry implements [`spec::AsBuilt`]).
pub enum This {}

/// The description of this framework, whole: the registry's alone, which holds what a build keeps
/// of it.
pub(super) const SPEC: Spec = Spec {
    id: "deepspeed",
    name: "DeepSpeed",
    releases: RELEASES,
    unversioned: "0.19.8",
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
            (Dim::Tp, Field::AutotpSize),
            (Dim::Sp, Field::SequenceParallelSize),
        ],
        dims_at: spec::all_dims,
        fills: spec::no_fills,
        launch_refusal: spec::no_refusal,
        // DeepSpeed checks the batch against world / sequence_parallel_size and counts AutoTP
        // ranks in it: both sizes matter one by one
        memo: spec::memo_first_two,
        planner: crate::calc::parse::settings::DEEPSPEED_CHOICES,
    },
    mesh: Mesh {
        order: &[Axis::Dp, Axis::Sp, Axis::Tp],
        source: "DeepSpeed 0.19.8 utils/groups.py _init_tp_mesh_device (data_parallel, tensor_parallel) and deepspeed/__init__.py (data_parallel, sequence_parallel)",
        caveat,
    },
    export: Export {
        syntax: Syntax::Json,
        lang: "json",
        file_name: "ds_config.json",
        keys: &[
            Field::TrainBatchSize,
            Field::TrainMicroBatchSizePerGpu,
            Field::GradientAccumulationSteps,
            Field::AutotpSize,
            Field::SequenceParallelSize,
        ],
        launcher,
        script: "train.py --deepspeed ds_config.json",
        in_file,
        derive: deepspeed_triple,
    },
    import: Some(Import {
        reads: Reads::Json,
        log: None,
        alias: import_alias,
        renamed: spec::no_renamed,
        words: spec::all_words,
        joined: &[],
        file_cluster: Some(file_cluster),
        config_json: &spec::CONFIG_JSON_AS_IS,
        accelerate: &[],
    }),
    fit: spec::Fit {
        flops: spec::FlopsConvention::Hf,
        settings,
        own: spec::no_own,
        model_key: Field::ModelId,
        typed: crate::calc::model::ModelType::Llama,
    },
    written: &Written {
        place,
        ..spec::WRITTEN_BY_DOTS
    },
    compared: &spec::COMPARED_PLAINLY,
    guide: &spec::NO_GUIDE,
};

fn caveat(tp: u64, sp: u64) -> Option<&'static str> {
    (tp > 1 && sp > 1).then_some(
        "DeepSpeed builds the AutoTP mesh (dp, tp) and the Ulysses mesh (dp, sp) separately; \
         the picture assumes tp fastest, then sp.",
    )
}

fn launcher(nodes: u64, gpus: u64) -> String {
    format!("deepspeed --num_nodes {nodes} --num_gpus {gpus} train.py --deepspeed ds_config.json")
}

/// The DeepSpeed keys dpcalc reads, also before the DeepSpeed form lists them.
fn import_alias(key: &str) -> Option<Field> {
    Some(match key {
        "train_batch_size" => Field::TrainBatchSize,
        "train_micro_batch_size_per_gpu" => Field::TrainMicroBatchSizePerGpu,
        "gradient_accumulation_steps" => Field::GradientAccumulationSteps,
        "sequence_parallel_size" => Field::SequenceParallelSize,
        _ => return None,
    })
}

/// The keys DeepSpeed's users set in their own training loop, described for it.
fn describe(field: Field) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match field {
        Field::NumSamples => (
            "Training rows",
            "required for steps",
            "len(train_dataset): the rows the dataloader reads.",
        ),
        Field::NumEpochs => (
            "Epochs",
            "1",
            "Passes over the data in your training loop (whole numbers).",
        ),
        _ => return None,
    })
}

/// DeepSpeed: all three batch keys when they are consistent. With all three given, DeepSpeed
/// derives nothing and asserts `train_batch_size == micro × GA × world_size` at launch, so the
/// same file on another GPU count fails loudly instead of silently changing the batch (or the
/// accumulation). The third value is the report's (train_batch_size from global_batch_size, GA
/// from gradient_accumulation_steps) or, for the micro batch, `train // (GA × W)` when exact;
/// the three are written only if they pass DeepSpeed's own equality, with `W = world_size /
/// sequence_parallel_size` (config.py, no mpu). Otherwise only the given keys are written.
fn deepspeed_triple(
    raw: &RawInputs,
    report: &Report,
    entries: &mut Vec<Entry>,
    notes: &mut Vec<String>,
) {
    let batch = [
        Field::TrainBatchSize,
        Field::TrainMicroBatchSizePerGpu,
        Field::GradientAccumulationSteps,
    ];
    let get = |entries: &[Entry], f: Field| {
        entries
            .iter()
            .find(|e| e.field == f)
            .and_then(|e| match e.value {
                Value::Int(v) => u64::try_from(v).ok(),
                _ => None,
            })
    };
    if batch
        .iter()
        .any(|&f| raw.is_given(f) && get(entries, f).is_none())
    {
        return; // a batch key is invalid: DeepSpeed would refuse; write what is valid only
    }
    if batch.iter().all(|&f| get(entries, f).is_some()) {
        return;
    }
    let report_int = |o: Output| report.count(o);
    let Some(world) = report_int(Output::WorldSize) else {
        return;
    };
    let sp = get(entries, Field::SequenceParallelSize).unwrap_or(1);
    if sp == 0 || world % sp != 0 {
        return;
    }
    let w = world / sp;
    let train = get(entries, Field::TrainBatchSize).or_else(|| report_int(Output::GlobalBatchSize));
    let ga = get(entries, Field::GradientAccumulationSteps)
        .or_else(|| report_int(Output::GradientAccumulationSteps));
    let micro = get(entries, Field::TrainMicroBatchSizePerGpu).or_else(|| {
        let (t, g) = (train?, ga?);
        let per = g.checked_mul(w).filter(|&p| p > 0)?;
        (t % per == 0).then_some(t / per)
    });
    let (Some(t), Some(m), Some(g)) = (train, micro, ga) else {
        return;
    };
    let consistent = m
        .checked_mul(g)
        .and_then(|x| x.checked_mul(w))
        .is_some_and(|x| x == t && t > 0);
    if !consistent {
        notes.push(format!(
            "DeepSpeed derives the missing batch keys itself: dpcalc's values (train {t}, micro {m}, GA {g}, world {w}) do not satisfy train = micro × GA × world"
        ));
        return;
    }
    for (f, v) in batch.iter().zip([t, m, g]) {
        if get(entries, *f).is_none() {
            let at = entries
                .iter()
                .position(|e| !batch.contains(&e.field))
                .unwrap_or(entries.len());
            let at = batch
                .iter()
                .position(|b| b == f)
                .map_or(at, |i| i.min(entries.len()));
            entries.insert(
                at,
                Entry {
                    field: *f,
                    value: Value::Int(v.into()),
                    derived: true,
                },
            );
        }
    }
}

/// The form fields that are keys of this framework's config file.
fn in_file(f: Field) -> bool {
    f != Field::ModelId
        && f != Field::GradientCheckpointing
        && f != Field::ZeroInit
        && !spec::architecture(f)
}

/// Where `ds_config.json` holds a key (`Spec::written`): `autotp_size` inside `tensor_parallel`
/// (`tensor_parallel.autotp_size`), the others where their dots say (`zero_optimization.stage`).
fn place(field: Field) -> (&'static str, &'static str) {
    match field {
        Field::AutotpSize => ("tensor_parallel", field.key()),
        f => spec::by_dots(f),
    }
}

/// The cluster a `ds_config.json` fixes (`Import::file_cluster`): DeepSpeed asserts `train_batch_size ==
/// train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size` when all three are
/// given (`runtime/config.py::_batch_assertion`), with `world_size` the whole world, or
/// `dist.get_world_size() / sequence_parallel_size` when the config has that key (AutoTP's ranks
/// are counted in the world). So the three keys give the world exactly: `train ÷ (micro × GA)`,
/// times `sequence_parallel_size`, filled in as nodes × GPUs per node. Otherwise the file does
/// not say it, and the note says so.
fn file_cluster(text: &dyn Fn(Field) -> Option<String>) -> Result<(u64, u64, String), String> {
    let get = |f: Field| text(f).and_then(|v| v.trim().parse::<u64>().ok());
    let (t, m, g) = (
        get(Field::TrainBatchSize),
        get(Field::TrainMicroBatchSizePerGpu),
        get(Field::GradientAccumulationSteps),
    );
    let sp = match text(Field::SequenceParallelSize) {
        None => Some(1),
        Some(v) => v.trim().parse::<u64>().ok().filter(|&s| s > 0),
    };
    let per = m
        .zip(g)
        .and_then(|(m, g)| m.checked_mul(g))
        .filter(|&p| p > 0);
    // with an mpu the check counts its data-parallel ranks, which do not give the world
    let mpu = text(Field::MpuDataParallelWorldSize).is_some();
    let world = match (t, per, sp) {
        (Some(t), Some(per), Some(sp)) if t > 0 && t % per == 0 && !mpu => {
            (t / per).checked_mul(sp)
        }
        _ => None,
    };
    match (world, t, m, g) {
        (Some(world), Some(t), Some(m), Some(g)) => {
            let w = world / sp.unwrap_or(1);
            let via = if sp.unwrap_or(1) > 1 {
                format!(" × sequence_parallel_size {}", sp.unwrap_or(1))
            } else {
                String::new()
            };
            // as nodes × GPUs per node (dpcalc's 8 per node where it divides), so a launcher's
            // --nodes given after still changes the world as it would
            let gpus = crate::calc::cluster::DEFAULT_GPUS_PER_NODE;
            let (nodes, gpus) = if world % gpus == 0 {
                (world / gpus, gpus)
            } else {
                (1, world)
            };
            Ok((
                nodes,
                gpus,
                format!(
                    "The cluster: {world} GPUs ({nodes} node(s) × {gpus}), from DeepSpeed's batch \
                 check train_batch_size = micro × GA × world ({t} = {m} × {g} × {w}){via}."
                ),
            ))
        }
        _ => Err("The cluster is not in this file: only train_batch_size, \
             train_micro_batch_size_per_gpu and gradient_accumulation_steps together (train a \
             multiple of micro × GA, no mpu_data_parallel_world_size) fix it; set nodes and \
             gpus_per_node."
            .into()),
    }
}
