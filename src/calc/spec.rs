//! What dpcalc knows about one framework, as one value: [`Spec`].
//!
//! Each framework's folder (`frameworks/<name>/`) fills a `SPEC` constant; the registry
//! (`frameworks/mod.rs`) lists them; the shared machinery (the explorer, the GPU map, export,
//! import, compare, the page) reads a `Spec` and never names a framework. A `Spec` is plain data
//! and function pointers rather than a trait object: the whole description of a framework is one
//! constant that can be read top to bottom, the compiler checks that no part is forgotten (a new
//! part is a compile error in every folder until it is filled), and a function pointer costs no
//! vtable or generic instantiation in the wasm bundle.
//!
//! This module is vocabulary: it depends on the fields, outputs and reports below it, never on a
//! framework or on the machinery above.

use super::plan::NamedModel;
use super::{Field, Kind, Output, RawInputs, Report};

/// A release whose batch math differs from its neighbours'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The `version=` value in a link.
    pub id: &'static str,
    /// What the version picker shows.
    pub label: &'static str,
}

/// A framework's release table: each release it models with the rules that apply there (the
/// framework's own `Version`), newest (the default) first. It is the one place an id is tied to
/// its rules: [`releases`] gives the framework's [`Spec::releases`], [`release_at`] the rules of
/// an id.
pub type ReleaseTable<V, const N: usize> = [(Release, V); N];

/// The releases of a release table, in its order (what a framework's [`Spec::releases`] lists).
pub const fn releases<V, const N: usize>(table: &ReleaseTable<V, N>) -> [Release; N] {
    assert!(N > 0, "a framework models at least one release");
    let mut out = [Release { id: "", label: "" }; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].0;
        i += 1;
    }
    out
}

/// The release `id` of a release table with its rules. An id the table lacks gets the default
/// (the first, the newest): the one fallback of every framework's rules. No input reaches it:
/// the page, a link (`query::decode`, which reads an unknown `version=` as
/// [`Spec::unversioned`] and says so), a paste and `dpcalc check --version` all pass an id of
/// [`Spec::releases`].
pub fn release_at<V: Copy>(table: &[(Release, V)], id: &str) -> (Release, V) {
    *table.iter().find(|(r, _)| r.id == id).unwrap_or(&table[0])
}

/// What a field means across frameworks, so a switch of framework (and the compare view) can
/// carry a value to the other framework's key for the same thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Concept {
    Nodes,
    GpusPerNode,
    WorldSize,
    /// Tensor parallel size (shares the data).
    Tp,
    /// Context parallel size (shares the data).
    Cp,
    /// Sequence parallel size, Ulysses-style (shares the data).
    Sp,
    /// Pipeline parallel size.
    Pp,
    /// Expert parallel size (folded into the data-parallel ranks).
    Ep,
    /// Samples per GPU per forward pass.
    Micro,
    /// Micro batches per optimizer step.
    Accum,
    /// Samples per optimizer step, all GPUs.
    Global,
    /// Rows in the training set.
    Samples,
    /// Passes over the data.
    Epochs,
    /// Optimizer steps of the run, when set directly.
    Steps,
    /// Tokens per sample.
    SeqLen,
    /// Warmup, in optimizer steps.
    WarmupSteps,
    TokensPerSecondPerGpu,
    SecondsPerStep,
    /// The model preset (a Hub id).
    Model,
    /// The architecture under config.json's and Megatron's names for the same size.
    Layers,
    Ffn,
    Heads,
    KvHeads,
    HeadDim,
    TopK,
    ExpertFfn,
    Optimizer,
}

/// A model-parallel dimension of the layout explorer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// Tensor parallel.
    Tp,
    /// Context parallel (ring attention).
    Cp,
    /// Sequence parallel, Ulysses-style.
    Sp,
    /// Pipeline parallel.
    Pp,
    /// Expert parallel: a mesh axis among the data-parallel ranks (each expert-parallel rank
    /// reads its own batch), so it does not divide the data-parallel size the batch counts.
    Ep,
}

impl Dim {
    /// The short name (`tp`, `cp`, `sp`, `pp`, `ep`).
    pub const fn short(self) -> &'static str {
        match self {
            Dim::Tp => "tp",
            Dim::Cp => "cp",
            Dim::Sp => "sp",
            Dim::Pp => "pp",
            Dim::Ep => "ep",
        }
    }

    /// Whether the dimension's ranks read different data (expert parallelism): the batch's
    /// data-parallel size counts them.
    pub const fn reads_data(self) -> bool {
        matches!(self, Dim::Ep)
    }
}

/// A dimension of the rank mesh (the GPU map).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    Pp,
    Dp,
    Cp,
    Sp,
    /// Expert parallel (axolotl 0.21.0: between cp and tp).
    Ep,
    Tp,
}

/// What a layout row's computed numbers and messages depend on (the explorer's memo key, see
/// `layout.rs`), given its sizes.
pub type MemoKey = Box<dyn Fn(&[u64]) -> RowKey>;

/// What a layout row's computation depends on besides the inputs every row shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowKey {
    /// Its data-parallel size, which dimensions are above 1, and these two sizes (`(1, 1)` when
    /// nothing else matters).
    Sizes(u64, u64),
    /// The framework refuses the row for these two sizes alone, before anything of its batch
    /// is counted: every such row has no values and the same message, whatever its other sizes
    /// and data-parallel size (HF's CP and SP together).
    Refused(u64, u64),
}

/// What a layout sets beyond its sizes, given its data-parallel size and its sizes.
pub type Fills = fn(dp: u64, sizes: &[u64]) -> Vec<(Field, String)>;

/// A framework's model-parallel dimensions with their config keys.
pub type Dims = &'static [(Dim, Field)];

/// The layout explorer's view of a framework.
pub struct Layout {
    /// The model-parallel dimensions and their config keys, in the order the explorer's
    /// columns (and a row's `data-layout`) list them.
    pub dims: Dims,
    /// Fewer dimensions at a release that lacks some (`None`: all of [`Layout::dims`]).
    pub dims_at: fn(release: &str) -> Option<Dims>,
    /// What else a layout sets so the framework fills the data-parallel size `dp`, given the
    /// layout's sizes in the release's dimension order (`Layout::dims_at`).
    pub fills: Fills,
    /// A layout the framework refuses at launch that its rules may not model, given its sizes
    /// in [`Layout::dims`] order.
    pub launch_refusal: fn(sizes: &[u64]) -> Option<String>,
    /// The memo key for the current release and inputs.
    pub memo: fn(release: &str, raw: &RawInputs) -> MemoKey,
    /// What the planner varies beyond the layout and the micro batch.
    pub planner: PlannerChoices,
}

/// A choice the planner makes: its name (a row's `data-recompute` or `data-sharding`) and the
/// framework's own keys that make it.
pub type Choice = (&'static str, &'static [(Field, &'static str)]);

/// What the planner varies beyond the layout and the micro batch, in the framework's own keys.
#[derive(Clone, Copy)]
pub struct PlannerChoices {
    /// Each activation recompute the framework offers (`none`, `selective`, `full`).
    pub recompute: &'static [Choice],
    /// Each sharding of the model states it offers.
    pub sharding: &'static [Choice],
    /// Its key for the virtual pipeline stages per rank (interleaved 1F1B), and the key it
    /// clears (the other way to give them).
    pub virtual_stages: Option<(Field, Field)>,
}

/// The GPU map's view of a framework.
pub struct Mesh {
    /// The mesh order, slowest dimension first (the last varies fastest).
    pub order: &'static [Axis],
    /// Where the order comes from, for the picture's caption.
    pub source: &'static str,
    /// A caveat for the picture, given the tensor and sequence parallel sizes.
    pub caveat: fn(tp: u64, sp: u64) -> Option<&'static str>,
}

/// How an exported fragment is written (the writers are in `export.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Flat `key: value` YAML.
    Yaml,
    /// nanotron's nested YAML (`parallelism:`, `tokens:`).
    YamlNested,
    /// A JSON object, no comments.
    Json,
    /// A launcher command with `--flags`.
    Shell,
    /// TOML tables.
    Toml,
    /// `TrainingArguments(...)`.
    Python,
}

/// A typed value of an exported fragment.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
}

/// One key of an exported fragment.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub field: Field,
    pub value: Value,
    /// Not typed by the user: derived from the report.
    pub derived: bool,
}

/// Config export of a framework.
pub struct Export {
    pub syntax: Syntax,
    /// A highlighter's language name (`yaml`, `json`, `sh`, `toml`, `python`).
    pub lang: &'static str,
    /// The usual file name.
    pub file_name: &'static str,
    /// The keys the format knows, in its documentation's order; the form's other fields follow.
    pub keys: &'static [Field],
    /// The launch command for `nodes × gpus_per_node`.
    pub launcher: fn(nodes: u64, gpus_per_node: u64) -> String,
    /// The script and its arguments, for a command without a cluster shape.
    pub script: &'static str,
    /// Whether a form field is a key of this file (the model stage's inputs mostly are not: a
    /// Hub id, config.json's architecture, DeepSpeed's keys outside a DeepSpeed JSON); the
    /// others are named in a note instead of written as keys.
    pub in_file: fn(Field) -> bool,
    /// Adds what the framework derives and needs written down to give the same numbers.
    pub derive:
        fn(raw: &RawInputs, report: &Report, entries: &mut Vec<Entry>, notes: &mut Vec<String>),
}

/// The syntax a pasted config is read in (the readers are in `import/`, one file per syntax).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Flat YAML (axolotl's config; a nested block is read as dotted keys).
    Yaml,
    /// Nested YAML sections read as dotted paths (nanotron's `parallelism.dp`, `tokens.…`,
    /// `model.model_config.…`), each mapped by the framework's `Import::alias`.
    YamlNested,
    /// A JSON object (DeepSpeed's `ds_config.json`).
    Json,
    /// A launch command with `--dash-style` flags (Megatron-LM).
    CommandLine,
    /// TOML tables read as dotted `table.key` paths (torchtitan's job config).
    Toml,
    /// The Hugging Face Trainer's `TrainingArguments`: `--under_score` flags (HfArgumentParser),
    /// a JSON dict (`TrainingArguments.to_json_string()`), or a `TrainingArguments(...)` call.
    TrainingArguments,
}

/// The training log a framework prints, whose measured speed calibrates the step time (the
/// reader is `import/log.rs`; each format named by the lines it reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainingLog {
    /// `iteration N/ M | … | elapsed time per iteration (ms): … | global batch size: … |`
    /// (Megatron-LM's `training_log`).
    ElapsedPerIteration,
    /// `step: N  loss: …  tps: 1,234  tflops: …  mfu: …%` (torchtitan's `MetricsProcessor`).
    StepTps,
    /// `{'train_runtime': …, 'train_samples_per_second': …, 'train_steps_per_second': …}` and
    /// `TrainOutput(global_step=N, …)` (the Hugging Face Trainer's `speed_metrics`).
    TrainMetrics,
    /// `iteration: N / M | … | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 |`, numbers
    /// in `human_format` (nanotron's `train_step_logs`).
    TokensPerSecPerGpu,
}

/// Config import of a framework.
pub struct Import {
    pub reads: Reads,
    /// The training log the framework prints (`None`: dpcalc reads none of its logs).
    pub log: Option<TrainingLog>,
    /// The field for a key the framework accepts besides its own form keys (deprecated aliases,
    /// launcher flags, a nested key's dotted path such as `parallelism.tp`), if any.
    pub alias: fn(key: &str) -> Option<Field>,
    /// For a key the framework does not read but configs still carry (an older release's name,
    /// another tool's), what happens to it and what the page uses instead: the import names it
    /// in a warning rather than listing it among the ignored keys.
    pub renamed: fn(key: &str) -> Option<&'static str>,
    /// How many words a command-line flag for `field` takes (argparse's `nargs`): `Some(n)`
    /// and the words after the n-th are argparse's "unrecognized arguments"; `None`, all the
    /// words up to the next flag (joined; the framework's rules check them).
    pub words: fn(field: Field) -> Option<usize>,
    /// Two keys of a nested config that name one thing together, read as one value
    /// `first/second` under the first key's field (torchtitan's `[model] name` and `flavor`).
    pub joined: &'static [(&'static str, &'static str)],
    /// The cluster a config file fixes by itself (`get`: a field's value as the file gives it):
    /// nodes, GPUs per node and the note that says how, or `Err(note)` when this file does not;
    /// `None`: this framework's files never do (DeepSpeed's three batch keys can).
    pub file_cluster: Option<FileCluster>,
    /// How a model's config.json becomes this framework's fields.
    pub config_json: &'static ConfigJson,
    /// accelerate's `ParallelismConfig` sizes (an accelerate config's `parallelism_config_*`
    /// keys, without the prefix: `sp_size`) that this framework's run reads from accelerate's
    /// environment (`PARALLELISM_CONFIG_*`), each with the field it fills where the framework's
    /// own config leaves that field unset; empty: dpcalc applies none (a size above 1 is a
    /// warning at its key).
    pub accelerate: &'static [(&'static str, Field)],
}

/// See [`Import::file_cluster`].
pub type FileCluster =
    fn(get: &dyn Fn(Field) -> Option<String>) -> Result<(u64, u64, String), String>;

/// How a model's `config.json` becomes a framework's fields (see [`Import::config_json`]).
pub struct ConfigJson {
    /// config.json's key under this framework's name (Megatron's `num_layers` for
    /// `num_hidden_layers`); `None`: the key as it is.
    pub key: fn(key: &str) -> Option<&'static str>,
    /// The fields the file gives that no key of it names (Megatron's
    /// `--untie-embeddings-and-output-weights`, `--group-query-attention`), each with the key it
    /// is read from (`get`: a key's scalar value as JSON text).
    pub derived: fn(get: &ConfigValue<'_>) -> Vec<Derived>,
    /// The keys `derived` reads in place of their own field.
    pub consumed: &'static [&'static str],
}

/// A field a config.json gives without a key of its own: the field, its value, the key it is
/// read from.
pub type Derived = (Field, String, &'static str);

/// A config.json key's scalar value: a number or a boolean as JSON text, a string's own text.
pub type ConfigValue<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// config.json's keys as they are.
pub const CONFIG_JSON_AS_IS: ConfigJson = ConfigJson {
    key: |_| None,
    derived: |_| Vec::new(),
    consumed: &[],
};

/// A comparison with another release shown beside the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Legacy {
    /// The other release's `version=` id.
    pub other: &'static str,
    pub title: &'static str,
    pub help: &'static str,
}

/// Whose FLOPs-per-token convention a framework's own code uses (`flops.rs` has all four).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlopsConvention {
    /// transformers' `Trainer.floating_point_ops` (axolotl, HF, DeepSpeed runs of HF models).
    Hf,
    /// megatron-core's `num_floating_point_operations`.
    Megatron,
    /// torchtitan's `get_nparams_and_flops`.
    Torchtitan,
    /// nanotron's `get_flops`.
    Nanotron,
}

impl FlopsConvention {
    /// Of the four conventions' values, this one's.
    pub fn pick<T>(self, hf: T, megatron: T, torchtitan: T, nanotron: T) -> T {
        match self {
            FlopsConvention::Hf => hf,
            FlopsConvention::Megatron => megatron,
            FlopsConvention::Torchtitan => torchtitan,
            FlopsConvention::Nanotron => nanotron,
        }
    }

    /// Whose counter it is.
    pub const fn counter(self) -> &'static str {
        match self {
            FlopsConvention::Hf => "HF Trainer",
            FlopsConvention::Megatron => "Megatron-LM",
            FlopsConvention::Torchtitan => "torchtitan",
            FlopsConvention::Nanotron => "nanotron",
        }
    }

    /// What it counts, with its source.
    pub const fn rule(self) -> &'static str {
        match self {
            FlopsConvention::Hf => "transformers Trainer.floating_point_ops ÷ tokens = 6 × num_parameters(exclude_embeddings=True): no attention term, every expert counted",
            FlopsConvention::Megatron => "megatron-core 0.19.2 num_floating_point_operations ÷ tokens: causal-halved attention, logits over the padded vocabulary (depends on TP)",
            FlopsConvention::Torchtitan => "torchtitan 0.3.0 get_nparams_and_flops: 6 × matmul parameters (active experts) + 6·L·heads·2·head_dim·seq, no causal halving",
            FlopsConvention::Nanotron => "nanotron get_flops ÷ tokens (hidden ÷ heads as the head size, no norms)",
        }
    }
}

/// What the memory and compute stage needs to know about a framework.
pub struct Fit {
    pub flops: FlopsConvention,
    /// The key naming a model preset here (`base_model`, `model_name_or_path`, `model`).
    pub model_key: Field,
    /// The architecture a model typed without a preset has: config.json's keys describe a Llama
    /// (`ModelType::Llama`, unless `model_type` says otherwise); Megatron's own arguments, the GPT
    /// Megatron builds from them (`ModelType::MegatronGpt`), whose absent arguments take
    /// Megatron's defaults.
    pub typed: crate::calc::model::ModelType,
    /// Reads the model stage's settings (the GPU, the model, sharding, recompute, attention,
    /// optimizer, LoRA, the framework's own) and publishes them in `report.plan.settings`
    /// (`parse::settings` has the shared readers).
    pub settings: fn(raw: &RawInputs, report: &mut Report),
    /// What the framework does with the model it builds, after its counts: its own refusals and
    /// estimators (Megatron's `TransformerConfig` checks and `report_theoretical_memory`,
    /// LoRA's trainable parameters for axolotl's LoraConfig).
    pub own: fn(model: &NamedModel, report: &mut Report),
}

/// No model-stage settings: a first view's other frameworks (never computed there).
pub fn no_settings(_: &RawInputs, _: &mut Report) {}

/// Nothing of the framework's own in the model stage.
pub fn no_own(_: &NamedModel, _: &mut Report) {}

/// Everything the shared machinery needs to know about one framework: the framework whole, in
/// every build (what a first view leaves out of it is decided in `first_view.rs`).
pub struct Spec {
    /// The `framework=` value.
    pub id: &'static str,
    /// The name people call it.
    pub name: &'static str,
    /// The releases modelled, newest (the default) first: [`releases`] of the framework's
    /// [`ReleaseTable`]. Every part of the Spec that takes a release reads an id among them as
    /// the table says, and any other id as the default ([`release_at`]).
    pub releases: &'static [Release],
    /// The release a link without `version=` means: the default until 2026-12-03, when links
    /// began always carrying their version. Never change it (old links keep their meaning).
    pub unversioned: &'static str,
    /// The form: titled groups of this framework's fields (the throughput group follows).
    pub groups: &'static [(&'static str, &'static [Field])],
    /// The results this framework's page shows, in order.
    pub outputs: &'static [Output],
    /// The inputs an embedded (compact) view always shows.
    pub key_fields: &'static [Field],
    /// The label and config name the results list shows for an output, when its own.
    pub output_label: fn(Output) -> Option<(&'static str, &'static str)>,
    /// The form's label, placeholder and help for a shared key this framework reads its own way.
    pub describe: fn(Field) -> Option<(&'static str, &'static str, &'static str)>,
    /// The kind of text a shared key takes here, when not the field's own.
    pub kind: fn(Field) -> Option<Kind>,
    /// The framework's own rules at a release (an id of [`Spec::releases`]).
    pub compute: Compute,
    /// The comparison with another release the page shows beside the results, whose numbers
    /// the report carries as `legacy_*` outputs (axolotl's before/after the fix), for a release.
    pub legacy: Option<fn(release: &str) -> Legacy>,
    /// The epochs the framework trains when its epochs key is absent.
    pub default_epochs: &'static str,
    /// The sequence length the framework uses when its key is absent, if it has one.
    pub default_sequence_len: Option<&'static str>,
    /// Old or alternative parameter names a link may use, read as the field they name (kept
    /// forever: old links keep their meaning).
    pub link_aliases: &'static [(&'static str, Field)],
    /// Whether a (trimmed) text is what the framework assumes when the key is absent, so a link
    /// leaves it out (beyond the cluster defaults every framework shares).
    pub link_default: fn(field: Field, text: &str) -> bool,
    pub layout: Layout,
    pub mesh: Mesh,
    pub export: Export,
    /// `None`: its configs cannot be pasted.
    pub import: Option<Import>,
    pub fit: Fit,
    /// Where the export writes this framework's keys within its syntax.
    pub written: &'static Written,
    /// What the compare view gives this framework beyond the values its keys take by concept.
    pub compared: &'static Compared,
    /// What the first-visit guide asks for in this framework's own keys, and its examples.
    pub guide: &'static Guide,
}

/// No memo (a first view has no explorer: see `first_view.rs`).
pub fn no_memo(_: &str, _: &RawInputs) -> MemoKey {
    Box::new(|_| RowKey::Sizes(1, 1))
}

/// No launcher line (a first view has no export).
pub fn no_launcher(_: u64, _: u64) -> String {
    String::new()
}

/// No key in a file (a first view has no export).
pub fn no_in_file(_: Field) -> bool {
    false
}

/// A framework's [`Spec`] as this build holds it (`first_view::trim` of its `SPEC`), for the
/// framework's own code that reads its Spec at run time (its settings reader, its import
/// aliases): the registry implements it for the marker type `This` of each framework's folder,
/// which reads `<This as AsBuilt>::SPEC`.
pub trait AsBuilt {
    const SPEC: &'static Spec;
}

/// A framework's rules at a release (an id of [`Spec::releases`]).
pub type Compute = fn(release: &str, raw: &RawInputs) -> Report;

/// The rules of a framework this build leaves out (a first view holds one framework's): an
/// empty report, never shown (the first view of another framework is loaded instead).
pub fn not_built(_: &str, _: &RawInputs) -> Report {
    Report::default()
}

/// No own text for any output or field.
pub fn none_output(_: Output) -> Option<(&'static str, &'static str)> {
    None
}

/// No own label for any shared field.
pub fn none_describe(_: Field) -> Option<(&'static str, &'static str, &'static str)> {
    None
}

/// No own kind for any shared field.
pub fn none_kind(_: Field) -> Option<Kind> {
    None
}

/// Every release has all the dimensions.
pub fn all_dims(_: &str) -> Option<Dims> {
    None
}

/// No framework-specific link defaults.
pub fn no_link_default(_: Field, _: &str) -> bool {
    false
}

/// Nothing to fill.
pub fn no_fills(_: u64, _: &[u64]) -> Vec<(Field, String)> {
    Vec::new()
}

/// No refusal beyond the framework's rules.
pub fn no_refusal(_: &[u64]) -> Option<String> {
    None
}

/// The memo key when the first two sizes matter one by one.
pub fn memo_first_two(_: &str, _: &RawInputs) -> MemoKey {
    Box::new(|sizes| {
        RowKey::Sizes(
            sizes.first().copied().unwrap_or(1),
            sizes.get(1).copied().unwrap_or(1),
        )
    })
}

/// No picture caveat.
pub fn no_caveat(_: u64, _: u64) -> Option<&'static str> {
    None
}

/// Whether `field` is one of config.json's architecture keys (the form's architecture group).
pub fn architecture(field: Field) -> bool {
    super::field::ARCHITECTURE.1.contains(&field)
}

/// Whether `field` is one of DeepSpeed's `zero_optimization` keys or `zero_init`.
pub fn deepspeed_key(field: Field) -> bool {
    matches!(
        field,
        Field::ZeroStage
            | Field::OffloadOptimizerDevice
            | Field::OffloadParamDevice
            | Field::ZeroInit
    )
}

/// Nothing to derive.
pub fn derive_nothing(_: &RawInputs, _: &Report, _: &mut Vec<Entry>, _: &mut Vec<String>) {}

/// Reads no alias.
pub fn no_alias(_: &str) -> Option<Field> {
    None
}

/// [`Import::renamed`] for a framework with no such keys.
pub fn no_renamed(_: &str) -> Option<&'static str> {
    None
}

/// A command-line flag takes every word up to the next flag.
pub fn all_words(_: Field) -> Option<usize> {
    None
}

impl Field {
    /// What this field means in any framework, if it has an equivalent elsewhere.
    pub const fn concept(self) -> Option<Concept> {
        use Concept as C;
        Some(match self {
            Field::Nodes => C::Nodes,
            Field::GpusPerNode => C::GpusPerNode,
            Field::WorldSize => C::WorldSize,
            Field::TensorParallelSize
            | Field::TpSize
            | Field::AutotpSize
            | Field::TensorModelParallelSize
            | Field::TensorParallelDegree
            | Field::Tp => C::Tp,
            Field::ContextParallelSize | Field::CpSize | Field::ContextParallelDegree => C::Cp,
            Field::SpSize | Field::SequenceParallelSize => C::Sp,
            Field::PipelineModelParallelSize | Field::PipelineParallelDegree | Field::Pp => C::Pp,
            Field::ExpertModelParallelSize
            | Field::ExpertParallelDegree
            | Field::ExpertParallelSize => C::Ep,
            Field::MicroBatchSize
            | Field::PerDeviceTrainBatchSize
            | Field::TrainMicroBatchSizePerGpu
            | Field::LocalBatchSize => C::Micro,
            Field::GradientAccumulationSteps | Field::BatchAccumulationPerReplica => C::Accum,
            Field::TrainBatchSize | Field::GlobalBatchSize => C::Global,
            Field::NumSamples => C::Samples,
            Field::NumEpochs | Field::NumTrainEpochs => C::Epochs,
            Field::MaxSteps | Field::TrainIters | Field::Steps | Field::TrainSteps => C::Steps,
            Field::SequenceLen
            | Field::MaxLength
            | Field::SeqLength
            | Field::SeqLen
            | Field::SequenceLength => C::SeqLen,
            Field::WarmupSteps | Field::LrWarmupIters => C::WarmupSteps,
            Field::TokensPerSecondPerGpu => C::TokensPerSecondPerGpu,
            Field::SecondsPerStep => C::SecondsPerStep,
            Field::BaseModel | Field::ModelNameOrPath | Field::ModelId => C::Model,
            Field::NumHiddenLayers | Field::NumLayers => C::Layers,
            Field::IntermediateSize | Field::FfnHiddenSize => C::Ffn,
            Field::ModelNumAttentionHeads | Field::NumAttentionHeads => C::Heads,
            Field::ModelNumKeyValueHeads | Field::NumKeyValueHeads | Field::NumQueryGroups => {
                C::KvHeads
            }
            Field::HeadDim | Field::KvChannels => C::HeadDim,
            Field::NumExpertsPerTok | Field::MoeRouterTopk => C::TopK,
            Field::MoeIntermediateSize | Field::MoeFfnHiddenSize => C::ExpertFfn,
            Field::Optimizer | Field::Optim => C::Optimizer,
            _ => return None,
        })
    }
}

impl Spec {
    /// Every field this framework reads, in form order (its groups, then the throughput group).
    pub fn fields(&'static self) -> impl Iterator<Item = Field> {
        self.groups
            .iter()
            .chain(std::iter::once(&super::field::THROUGHPUT))
            .flat_map(|(_, f)| f.iter().copied())
    }

    /// This framework's field for `concept`, if it has one.
    pub fn field_for(&'static self, concept: Concept) -> Option<Field> {
        self.fields().find(|f| f.concept() == Some(concept))
    }
}

/// Where an exported fragment writes a framework's keys within its [`Syntax`] (`export.rs`
/// writes the syntax).
pub struct Written {
    /// The section (a dotted path; empty: the top level) and the key in it under which a format
    /// with sections (nested YAML, JSON, TOML) writes `field`: [`by_dots`], unless the framework
    /// files some keys elsewhere.
    pub place: fn(field: Field) -> (&'static str, &'static str),
    /// The sections a nested YAML or a TOML fragment writes, in this order; a key placed in
    /// another section is not written.
    pub sections: &'static [&'static str],
    /// Keys a Python call cannot take (another class's), each written as a comment where it
    /// stands, followed by these words.
    pub aside: &'static [(Field, &'static str)],
    /// Keys a Python call takes in one argument object, written together as a comment after
    /// the other arguments.
    pub gathered: Option<Gathered>,
}

/// An argument object of a Python call (accelerate's `ParallelismConfig`, see [`Written`]).
pub struct Gathered {
    /// The argument's name (`parallelism_config`).
    pub argument: &'static str,
    /// Its class (`ParallelismConfig`).
    pub class: &'static str,
    /// The module the class is imported from (`accelerate`).
    pub module: &'static str,
    /// The keys it takes, in the call's order.
    pub fields: &'static [Field],
}

/// A key in the section its dots name (`zero_optimization.stage`: `stage` in
/// `zero_optimization`); a key without a dot at the top level.
pub fn by_dots(field: Field) -> (&'static str, &'static str) {
    let key = field.key();
    key.rsplit_once('.').unwrap_or(("", key))
}

/// No placement (a first view has no export).
pub fn no_place(_: Field) -> (&'static str, &'static str) {
    ("", "")
}

/// Keys written where their dots say, no sections listed, nothing aside.
pub const WRITTEN_BY_DOTS: Written = Written {
    place: by_dots,
    sections: &[],
    aside: &[],
    gathered: None,
};

/// The selected framework's intent as the compare view hands it to another framework's
/// [`Compared`] (beyond the values carried by concept).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Intent {
    /// The training rows, when given as a whole number.
    pub rows: Option<u64>,
    /// The passes over the data: as given, or the selected framework's default.
    pub epochs: Option<f64>,
    /// The world size the selected framework computed.
    pub world: Option<u64>,
    /// The sequence length the selected framework uses when its key is absent, if it has one.
    pub default_sequence_len: Option<&'static str>,
}

/// What the compare view (`compare.rs`) gives a framework beyond the values carried to its keys
/// by concept.
pub struct Compared {
    /// How the framework takes the run's length when it has neither an epochs nor a rows key:
    /// `None`, as the selected framework's step count under its steps key.
    pub run_length: Option<fn(intent: &Intent, inputs: &mut RawInputs)>,
    /// What else the framework needs to compute the intent (sizes it has no default for).
    pub complete: fn(intent: &Intent, inputs: &mut RawInputs),
    /// Compared outputs whose rule the framework's report records under an output of its own:
    /// `(the compared output, the framework's)`.
    pub explained_as: &'static [(Output, Output)],
}

/// Nothing to complete.
pub fn complete_nothing(_: &Intent, _: &mut RawInputs) {}

/// The run's length as a step count, nothing else to fill, every rule under its own output.
pub const COMPARED_PLAINLY: Compared = Compared {
    run_length: None,
    complete: complete_nothing,
    explained_as: &[],
};

/// What the first-visit guide (`guide.rs`) asks for in a framework's own keys, beyond the
/// concepts every framework shares (each list of alternatives is one requirement: any one of its
/// fields given is enough), and the framework's one-click examples.
pub struct Guide {
    /// Keys that give the training rows another way: alternatives wherever the rows, or the
    /// run's length, are needed.
    pub rows: &'static [Field],
    /// The data-parallel size, when the framework takes it as an input: needed with the tensor
    /// and pipeline sizes.
    pub data_parallel: &'static [Field],
    /// The settings evaluations during training exist only with, each a requirement.
    pub evaluations: &'static [&'static [Field]],
    /// The settings saves during training exist only with, each a requirement.
    pub saves: &'static [&'static [Field]],
    /// A batch-size ramp-up or schedule (any one): the ramp-up's outputs exist only with one,
    /// and the warmup in steps only without.
    pub batch_schedule: &'static [Field],
    /// The framework's examples (the page offers each framework's first, then each one's
    /// second, …, in registry order).
    pub examples: &'static [Example],
}

/// A complete example configuration of a framework (see [`Guide::examples`]).
pub struct Example {
    pub label: &'static str,
    /// Its release (`version=`), so the link keeps its meaning.
    pub release: &'static str,
    pub inputs: &'static [(Field, &'static str)],
}

/// No keys of its own for the guide, and no examples.
pub const NO_GUIDE: Guide = Guide {
    rows: &[],
    data_parallel: &[],
    evaluations: &[],
    saves: &[],
    batch_schedule: &[],
    examples: &[],
};
