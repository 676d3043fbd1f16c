//! The calculation core: inputs in, every number a framework would compute out, with the reasons.
//!
//! This module tree is plain Rust. It never imports `yew`, `web_sys`, `gloo` or `wasm_bindgen`, so
//! it compiles and is tested natively, and the page renders exactly what it returns: the UI holds
//! no arithmetic of its own. It does not know URLs either (see `crate::query`).
//!
//! - [`field`]: the inputs and their parsing;
//! - [`num`]: Python's integer/float semantics (floor, ceil, `//`, `min`, printing);
//! - [`axolotl`]: axolotl 0.19.0, with 0.14.0 alongside as the legacy reference.

pub mod axolotl;
pub mod cluster;
pub mod compare;
pub mod deepspeed;
pub mod export;
pub mod field;
pub mod framework;
pub mod hf;
pub mod import;
pub mod layout;
pub mod megatron;
pub mod mesh;
pub mod nanotron;
pub mod num;
pub mod schedule;
pub mod torchtitan;
pub mod view;

pub use field::{Field, Kind, Param};
pub use framework::{Framework, Release};
pub use num::Num;

/// How serious a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The framework refuses or crashes, or the input is unreadable.
    Error,
    /// The framework accepts it, but the run will not do what the user most likely means.
    Warning,
    /// A requirement or a fact worth knowing; nothing is wrong.
    Note,
    /// An input is needed before some value can be computed.
    Hint,
}

/// A message attached to the input it concerns.
#[derive(Clone, Debug, PartialEq)]
pub struct Diag {
    pub field: Field,
    pub level: Level,
    pub message: String,
}

impl Diag {
    pub fn new(field: Field, level: Level, message: impl Into<String>) -> Self {
        Diag {
            field,
            level,
            message: message.into(),
        }
    }
}

macro_rules! outputs {
    ($($variant:ident => $name:literal, $label:literal;)*) => {
        /// A computed value, named as in the page's `data-output` contract.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Output { $($variant),* }

        impl Output {
            pub const ALL: &'static [Output] = &[$(Output::$variant),*];

            /// The `data-output` name.
            pub const fn name(self) -> &'static str {
                match self { $(Output::$variant => $name),* }
            }

            /// What the results list calls it (a framework may say it its own way, see
            /// [`Framework::label`]).
            pub const fn label(self) -> &'static str {
                match self { $(Output::$variant => $label),* }
            }
        }
    };
}

outputs! {
    WorldSize => "world_size", "GPUs";
    DpWorldSize => "dp_world_size", "Data-parallel replicas";
    GradientAccumulationSteps => "gradient_accumulation_steps", "Gradient accumulation steps";
    GlobalBatchSize => "global_batch_size", "Global batch (samples per optimizer step)";
    TotalNumSteps => "total_num_steps", "Total steps axolotl logs";
    MaxSteps => "max_steps", "Optimizer steps the run takes";
    StepsPerEpoch => "steps_per_epoch", "Steps per epoch";
    WarmupSteps => "warmup_steps", "Warmup steps";
    EvalSteps => "eval_steps", "Evaluate every";
    SaveSteps => "save_steps", "Save every";
    TokensPerStep => "tokens_per_step", "Token slots per step";
    LegacyGlobalBatchSize => "legacy_global_batch_size", "Global batch";
    LegacyTotalNumSteps => "legacy_total_num_steps", "Total steps";

    // ---- framework-specific values, under the framework's own names ----------------------
    NumMicrobatches => "num_microbatches", "Microbatches per step";
    TotalTrainBatchSize => "total_train_batch_size", "Total train batch size (as the Trainer logs it)";
    LoggingSteps => "logging_steps", "Log every";
    // (hf: add outputs above this line)

    TrainBatchSize => "train_batch_size", "train_batch_size";
    TrainMicroBatchSizePerGpu => "train_micro_batch_size_per_gpu", "Micro batch per GPU";
    BatchCheckWorldSize => "batch_check_world_size", "World size the batch check uses";
    MicroBatchesPerEpoch => "micro_batches_per_epoch", "Micro batches per epoch (each GPU)";
    // (deepspeed: add outputs above this line)

    ExpertDataParallelSize => "expert_data_parallel_size", "Expert data-parallel replicas";
    RunningGlobalBatchSize => "running_global_batch_size", "Global batch trained per step";
    InitialGlobalBatchSize => "initial_global_batch_size", "Global batch at the first step";
    InitialNumMicrobatches => "initial_num_microbatches", "Microbatches at the first step";
    RampupSamplesPerIncrement => "rampup_samples_per_increment", "Samples per batch-size increment";
    FullBatchIteration => "full_batch_iteration", "First iteration at the full batch";
    TrainIters => "train_iters", "Training iterations";
    LrWarmupSteps => "lr_warmup_steps", "Warmup length in samples";
    // (megatron: add outputs above this line)

    DataParallelShardDegree => "data_parallel_shard_degree", "DP shard degree (after the -1 fill)";
    NumPpMicrobatches => "num_pp_microbatches", "Pipeline microbatches per gradient-accumulation step";
    // (torchtitan: add outputs above this line)

    // (nanotron: add outputs above this line)

    // ---- tokens and time (issue 5) -------------------------------------------------------
    TokensPerEpoch => "tokens_per_epoch", "Token slots per epoch";
    TotalTokens => "total_tokens", "Token slots in the run";
    TimePerStepSeconds => "time_per_step_seconds", "Time per optimizer step (s)";
    TotalTimeSeconds => "total_time_seconds", "Wall-clock time of the run (s)";
    GpuHours => "gpu_hours", "GPU-hours";
    // (time: add outputs above this line)
}

impl Output {
    pub const COUNT: usize = Output::ALL.len();

    pub fn from_name(name: &str) -> Option<Output> {
        Output::ALL.iter().copied().find(|o| o.name() == name)
    }
}

/// What the user typed, one text per field (empty = not given). The form and the URL both fill
/// this; nothing here is interpreted yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawInputs {
    values: Vec<String>,
    /// Fields given more than once (a hand-edited link): every value, in order. Such a field is
    /// an error until one value is chosen; dpcalc never picks one silently.
    conflicts: Vec<(Field, Vec<String>)>,
}

impl RawInputs {
    pub fn get(&self, field: Field) -> &str {
        self.values.get(field.index()).map_or("", String::as_str)
    }

    /// Sets a field's text; this also settles a conflict at that field.
    pub fn set(&mut self, field: Field, value: impl Into<String>) {
        if self.values.len() < Field::COUNT {
            self.values.resize(Field::COUNT, String::new());
        }
        self.values[field.index()] = value.into();
        self.conflicts.retain(|(f, _)| *f != field);
    }

    /// Records that a field was given several values; its text becomes empty.
    pub fn set_conflict(&mut self, field: Field, values: Vec<String>) {
        self.set(field, "");
        self.conflicts.push((field, values));
    }

    /// The values of a field given more than once, if it was.
    pub fn conflict(&self, field: Field) -> Option<&[String]> {
        self.conflicts
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_slice())
    }

    /// Builds inputs from `(field, text)` pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (Field, &'a str)>) -> Self {
        let mut raw = RawInputs::default();
        for (f, v) in pairs {
            raw.set(f, v);
        }
        raw
    }

    /// The given (non-empty) fields in form order.
    pub fn given(&self) -> impl Iterator<Item = (Field, &str)> {
        Field::ALL
            .iter()
            .map(|&f| (f, self.get(f)))
            .filter(|(_, v)| !v.trim().is_empty())
    }
}

/// One line of the "how this is computed" panel: the rule, and the same rule with the user's
/// numbers substituted.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub output: Output,
    pub rule: String,
    pub worked: String,
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    values: [Option<Num>; Output::COUNT],
    pub diags: Vec<Diag>,
    pub steps: Vec<Step>,
    /// Lines about the legacy (0.14.0) computation that belong to no single field.
    pub legacy_notes: Vec<String>,
}

impl Default for Report {
    fn default() -> Self {
        Report {
            values: [None; Output::COUNT],
            diags: Vec::new(),
            steps: Vec::new(),
            legacy_notes: Vec::new(),
        }
    }
}

impl Report {
    pub fn value(&self, output: Output) -> Option<Num> {
        self.values[output as usize]
    }

    pub(crate) fn set(&mut self, output: Output, value: Num) {
        self.values[output as usize] = Some(value);
    }

    pub(crate) fn diag(&mut self, field: Field, level: Level, message: impl Into<String>) {
        self.diags.push(Diag::new(field, level, message));
    }

    pub(crate) fn explain(
        &mut self,
        output: Output,
        rule: impl Into<String>,
        worked: impl Into<String>,
    ) {
        self.steps.push(Step {
            output,
            rule: rule.into(),
            worked: worked.into(),
        });
    }

    /// Messages at one field, most serious first.
    pub fn diags_for(&self, field: Field) -> impl Iterator<Item = &Diag> {
        let mut found: Vec<&Diag> = self
            .diags
            .iter()
            .filter(move |d| d.field == field)
            .collect();
        found.sort_by_key(|d| d.level);
        found.into_iter()
    }

    pub fn has_errors(&self) -> bool {
        self.diags.iter().any(|d| d.level == Level::Error)
    }
}
