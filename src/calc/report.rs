//! What a computation returns: the values under their `data-output` names ([`Output`]), the
//! messages at the fields they concern ([`Diag`], with a framework's [`Refusal`] as data), the
//! worked steps, the stage each came from ([`Stage`]) and the parallel layout the framework
//! resolved ([`Grid`]).

use std::cell::Cell;

use super::field::Field;
use super::num::Num;

thread_local! {
    /// Set while [`quietly`] runs: the rules record no worked steps.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn quiet() -> bool {
    QUIET.with(Cell::get)
}

/// Runs `f` with worked steps off: every [`Report`] computed inside records none
/// ([`Report::explain`], [`Report::explain_with`] return at once), nor the warnings and notes
/// made with [`Report::diag_with`]. For the many computations
/// whose steps nobody reads: the explorer's rows and the planner's candidates, which keep only
/// values and messages. The flag is restored afterwards, also when `f` panics.
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(self.0));
        }
    }
    let _restore = Restore(QUIET.with(|q| q.replace(true)));
    f()
}

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

/// The stages every framework's rules run through, in this order (each framework's `run` marks
/// where each begins with [`Report::enter`]); every message and worked step carries the stage
/// that produced it, so the explanation, the explorer and the memory model can tell the parallel
/// grid from the batch from the step count without re-entering the rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Reading what was typed (unreadable values, keys the release lacks).
    #[default]
    Inputs,
    /// The framework's config validators (checks that run before any size is computed).
    Checks,
    /// The parallel grid: world size, the model-parallel sizes, the data-parallel size.
    Grid,
    /// Micro batch, accumulation, global batch.
    Batch,
    /// Steps per epoch and the run's optimizer steps.
    Steps,
    /// Warmup, evaluation, saving and logging intervals.
    Schedule,
    /// The model, its memory per GPU and its FLOPs (the frameworks' estimators, `fit/mod.rs`).
    Model,
    /// Tokens and time (dpcalc's own arithmetic over the framework's numbers).
    Tokens,
}

impl Stage {
    pub const ALL: &'static [Stage] = &[
        Stage::Inputs,
        Stage::Checks,
        Stage::Grid,
        Stage::Batch,
        Stage::Steps,
        Stage::Schedule,
        Stage::Model,
        Stage::Tokens,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Stage::Inputs => "inputs",
            Stage::Checks => "config checks",
            Stage::Grid => "parallel grid",
            Stage::Batch => "batch",
            Stage::Steps => "steps",
            Stage::Schedule => "warmup, eval and save",
            Stage::Model => "model, memory and compute",
            Stage::Tokens => "tokens and time",
        }
    }
}

/// The parallel layout as the framework resolved it (defaults and fills applied): what the grid
/// stage publishes for the stages and views after it. A size the framework lacks is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    pub world: u64,
    /// Data-parallel replicas (what the batch is multiplied by).
    pub dp: u64,
    pub tp: u64,
    pub cp: u64,
    /// Ulysses-style sequence parallelism.
    pub sp: u64,
    pub pp: u64,
    /// Expert parallelism (inside the data-parallel ranks in every framework modelled).
    pub ep: u64,
}

impl Grid {
    /// A grid of `world` GPUs, all data-parallel, to be narrowed with the struct update syntax.
    pub const fn data_parallel(world: u64) -> Grid {
        Grid {
            world,
            dp: world,
            tp: 1,
            cp: 1,
            sp: 1,
            pp: 1,
            ep: 1,
        }
    }
}

/// A message attached to the input it concerns.
#[derive(Clone, Debug, PartialEq)]
pub struct Diag {
    pub field: Field,
    pub level: Level,
    /// The stage that produced it.
    pub stage: Stage,
    /// The text shown everywhere (page, explanation, export notes); for a refusal, its
    /// [`Refusal::message`].
    pub message: String,
    /// When the framework itself refuses the inputs: what it says and what to change.
    pub refusal: Option<Refusal>,
}

impl Diag {
    pub fn new(field: Field, level: Level, message: impl Into<String>) -> Self {
        Diag {
            field,
            level,
            stage: Stage::Inputs,
            message: message.into(),
            refusal: None,
        }
    }
}

/// A framework refusing the inputs, as data: who stops the run and how, the framework's own
/// message verbatim, and what to change. Every framework's refusals are built with
/// [`Refusal::new`] and shown with [`Refusal::message`], the one way they are rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// Who stops the run, and where or how (`accelerate refuses`, `torchtitan stops with
    /// AssertionError`, `Megatron-LM refuses this in validate_args`).
    pub by: String,
    /// The framework's message, verbatim (the text its exception carries).
    pub says: String,
    /// What dpcalc adds: context, and what to change so the framework accepts the inputs
    /// (empty when there is nothing to add).
    pub fix: String,
}

impl Refusal {
    // Out of line: a refusal is built at about a hundred places, and inlining the conversions
    // at each would cost kilobytes of wasm.
    #[inline(never)]
    pub fn new(by: impl Into<String>, says: impl Into<String>) -> Self {
        Refusal {
            by: by.into(),
            says: says.into(),
            fix: String::new(),
        }
    }

    /// What to change (context and the nearest valid values).
    #[inline(never)]
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }

    /// `BY: “SAYS”. FIX`: the framework's words quoted, then dpcalc's (no second full stop when
    /// the quote ends a sentence; context that starts with a bracket or a comma follows the quote).
    pub fn message(&self) -> String {
        // built in one allocation (the explorer makes one for each refused layout)
        let fix = self.fix.trim();
        let mut m = String::with_capacity(self.by.len() + self.says.len() + fix.len() + 12);
        m.push_str(&self.by);
        m.push_str(": \u{201c}");
        m.push_str(&self.says);
        m.push('\u{201d}');
        let continues = fix.starts_with(['(', ',', ';', ':']);
        if !continues && !self.says.trim_end().ends_with(['.', '!', '?']) {
            m.push('.');
        }
        if !fix.is_empty() {
            m.push(' ');
            m.push_str(fix);
        }
        m
    }
}

/// An output's label; `app`: one a first view never shows (the model stage's and the app's own
/// inputs' outputs), which a first view's build holds no words for.
macro_rules! output_label {
    ($label:literal) => {
        $label
    };
    ($label:literal, app) => {
        if cfg!(feature = "first") {
            ""
        } else {
            $label
        }
    };
}

macro_rules! outputs {
    ($($variant:ident => $name:literal, $label:literal $(, $app:ident)?;)*) => {
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
                const LABELS: &[&str] = &[$(output_label!($label $(, $app)?)),*];
                LABELS[self as usize]
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

    // ---- model, memory and compute (the frameworks' estimators and published formulas, fit/)
    NumParameters => "num_parameters", "Parameters (transformers num_parameters())", app;
    NumParametersExcludeEmbeddings => "num_parameters_exclude_embeddings", "Parameters without the embedding", app;
    TrainableParameters => "trainable_parameters", "Trainable parameters", app;
    ZeroModelStatesGpuBytes => "zero_model_states_gpu_bytes", "DeepSpeed ZeRO model states per GPU", app;
    ZeroModelStatesCpuBytes => "zero_model_states_cpu_bytes", "DeepSpeed ZeRO model states in CPU memory per node", app;
    WeightAndOptimizerMemoryMb => "weight_and_optimizer_memory_mb", "Megatron: weights and optimizer (MB)", app;
    ActivationMemoryMb => "activation_memory_mb", "Megatron: activations (MB)", app;
    TotalMemoryMb => "total_memory_mb", "Megatron: theoretical memory (MB)", app;
    PaddedVocabSize => "padded_vocab_size", "Megatron's padded vocabulary", app;
    MemoryPerGpuBytes => "memory_per_gpu_bytes", "Estimated memory per GPU", app;
    MemoryReservedBytes => "memory_reserved_bytes", "Estimated memory the allocator reserves", app;
    MemoryOnDeviceBytes => "memory_on_device_bytes", "Estimated memory on the device", app;
    WeightsBytes => "weights_bytes", "Weights", app;
    GradientsBytes => "gradients_bytes", "Gradients", app;
    OptimizerBytes => "optimizer_bytes", "Optimizer states", app;
    ActivationBytes => "activation_bytes", "Activations", app;
    GpuMemoryBytes => "gpu_memory_bytes", "GPU memory", app;
    GpuUsableMemoryBytes => "gpu_usable_memory_bytes", "GPU memory PyTorch can use", app;
    FlopsPerToken => "flops_per_token", "Training FLOPs per token", app;
    FlopsPerTokenHf => "flops_per_token_hf", "FLOPs per token, HF Trainer", app;
    FlopsPerTokenMegatron => "flops_per_token_megatron", "FLOPs per token, Megatron-LM", app;
    FlopsPerTokenTorchtitan => "flops_per_token_torchtitan", "FLOPs per token, torchtitan", app;
    FlopsPerTokenNanotron => "flops_per_token_nanotron", "FLOPs per token, nanotron", app;
    PeakTflops => "peak_tflops", "GPU peak dense BF16 (TFLOPS)", app;
    TokensPerSecondPerGpu => "tokens_per_second_per_gpu", "Estimated tokens per second per GPU", app;
    StepTimeSeconds => "step_time_seconds", "Estimated step time (s)", app;
    MfuEstimate => "mfu_estimate", "Estimated MFU", app;
    StepComputeSeconds => "step_compute_seconds", "Compute", app;
    StepTpCommSeconds => "step_tp_comm_seconds", "Tensor-parallel communication", app;
    StepCpCommSeconds => "step_cp_comm_seconds", "Context-parallel communication", app;
    StepEpCommSeconds => "step_ep_comm_seconds", "Expert-parallel communication", app;
    StepPpBubbleSeconds => "step_pp_bubble_seconds", "Pipeline bubble and sends", app;
    StepDpCommSeconds => "step_dp_comm_seconds", "Data-parallel communication", app;
    StepTimeUncalibratedSeconds => "step_time_uncalibrated_seconds", "Estimated step time, uncalibrated (s)", app;
    CalibrationComputeFactor => "calibration_compute_factor", "Calibration compute factor", app;
    CalibrationCommFactor => "calibration_comm_factor", "Calibration communication factor", app;
    StepTimeUncalibratedError => "step_time_uncalibrated_error", "Uncalibrated estimate against the measured step", app;
    // (model: add outputs above this line)

    // ---- tokens and time (dpcalc's own arithmetic, calc/schedule.rs) ---------------------
    TokensPerEpoch => "tokens_per_epoch", "Token slots per epoch";
    TotalTokens => "total_tokens", "Token slots in the run";
    TimePerStepSeconds => "time_per_step_seconds", "Time per optimizer step (s)";
    TotalTimeSeconds => "total_time_seconds", "Wall-clock time of the run (s)";
    GpuHours => "gpu_hours", "GPU-hours";
    TotalCost => "total_cost", "Cost of the run", app;
    // (time: add outputs above this line)
}

impl Output {
    pub const COUNT: usize = Output::ALL.len();

    pub fn from_name(name: &str) -> Option<Output> {
        Output::ALL.iter().copied().find(|o| o.name() == name)
    }
}

/// One line of the "how this is computed" panel: the rule, and the same rule with the user's
/// numbers substituted.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub output: Output,
    /// The stage that computed it.
    pub stage: Stage,
    pub rule: String,
    pub worked: String,
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    values: [Option<Num>; Output::COUNT],
    pub diags: Vec<Diag>,
    pub steps: Vec<Step>,
    /// The parallel layout the framework resolved (its grid stage), when it got that far.
    pub grid: Option<Grid>,
    /// What the rules resolved beyond the grid, typed, for the stages after them (`plan.rs`).
    pub plan: super::plan::Plan,
    /// The stage running now (see [`Report::enter`]).
    stage: Stage,
    /// Lines about the legacy (0.14.0) computation that belong to no single field.
    pub legacy_notes: Vec<String>,
    /// The estimated memory per GPU of each pipeline stage, first stage first
    /// (`memory_by_stage_bytes`); empty without pipeline parallelism or an estimate.
    pub memory_by_stage: Vec<u128>,
    /// What the caching allocator reserves on each pipeline stage, first stage first
    /// (`memory_reserved_by_stage_bytes`); empty without pipeline parallelism or an estimate.
    pub memory_reserved_by_stage: Vec<u128>,
    /// What the model stage estimated, typed (`estimated.rs`): the planner and the explorer
    /// read this, never the outputs that show it.
    pub estimated: super::estimated::Estimated,
}

impl Default for Report {
    fn default() -> Self {
        Report {
            values: [None; Output::COUNT],
            diags: Vec::new(),
            steps: Vec::new(),
            grid: None,
            plan: super::plan::Plan::default(),
            stage: Stage::Inputs,
            legacy_notes: Vec::new(),
            memory_by_stage: Vec::new(),
            memory_reserved_by_stage: Vec::new(),
            estimated: Default::default(),
        }
    }
}

/// Each stage's bytes, comma-separated, first stage first (`None` without stages).
fn joined(stages: &[u128]) -> Option<String> {
    (!stages.is_empty()).then(|| {
        stages
            .iter()
            .map(u128::to_string)
            .collect::<Vec<_>>()
            .join(",")
    })
}

impl Report {
    /// `memory_by_stage_bytes` as the output contract writes it: each stage's bytes,
    /// comma-separated, first stage first (`None` without stages).
    pub fn memory_by_stage_value(&self) -> Option<String> {
        joined(&self.memory_by_stage)
    }

    /// `memory_reserved_by_stage_bytes`, written as `memory_by_stage_bytes` is.
    pub fn memory_reserved_by_stage_value(&self) -> Option<String> {
        joined(&self.memory_reserved_by_stage)
    }

    pub fn value(&self, output: Output) -> Option<Num> {
        self.values[output as usize]
    }

    pub(crate) fn set(&mut self, output: Output, value: Num) {
        self.values[output as usize] = Some(value);
    }

    /// Marks the start of a stage: what follows is attributed to it.
    pub(crate) fn enter(&mut self, stage: Stage) {
        self.stage = stage;
    }

    /// The stage running now.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    #[inline(never)]
    pub(crate) fn diag(&mut self, field: Field, level: Level, message: impl Into<String>) {
        self.push(Diag::new(field, level, message));
    }

    /// [`Report::diag`] with the message made only where it is kept: a computation run
    /// [`quietly`] keeps its errors alone (the explorer's rows read their first error), so a
    /// warning's or a note's words are not formatted there.
    pub(crate) fn diag_with(
        &mut self,
        field: Field,
        level: Level,
        message: impl FnOnce() -> String,
    ) {
        if level != Level::Error && quiet() {
            return;
        }
        self.diag(field, level, message());
    }

    /// Adds a message of the running stage. An error in the grid stage means the layout does
    /// not launch: whatever grid was published goes (see [`Report::publish_grid`]).
    fn push(&mut self, mut d: Diag) {
        d.stage = self.stage;
        if d.stage == Stage::Grid && d.level == Level::Error {
            self.grid = None;
        }
        self.diags.push(d);
    }

    /// Publishes the parallel layout the grid stage resolved, unless the framework refused the
    /// layout (a layout that cannot launch has no grid for the views after it).
    pub(crate) fn publish_grid(&mut self, grid: Grid) {
        let refused = self
            .diags
            .iter()
            .any(|d| d.stage == Stage::Grid && d.level == Level::Error);
        if !refused {
            self.grid = Some(grid);
        }
    }

    /// The framework refuses the inputs at `field` (an error whose text is the refusal's
    /// [`Refusal::message`]).
    #[inline(never)]
    pub(crate) fn refuse(&mut self, field: Field, refusal: Refusal) {
        self.push(Diag {
            field,
            level: Level::Error,
            stage: self.stage,
            message: refusal.message(),
            refusal: Some(refusal),
        });
    }

    #[cfg_attr(not(feature = "first"), inline(never))]
    /// [`Report::explain`] with the worked step made only where steps are recorded: a first
    /// view's build then holds neither its words nor its formatting.
    pub(crate) fn explain_with(
        &mut self,
        output: Output,
        rule: impl Into<String>,
        worked: impl FnOnce() -> String,
    ) {
        if cfg!(feature = "first") || quiet() {
            return;
        }
        self.explain(output, rule, worked());
    }

    pub(crate) fn explain(
        &mut self,
        output: Output,
        rule: impl Into<String>,
        worked: impl Into<String>,
    ) {
        // a first view shows no worked steps (the app's explanation panel): it records none,
        // and its build leaves out the rules' words for them
        if cfg!(feature = "first") || quiet() {
            return;
        }
        self.steps.push(Step {
            output,
            stage: self.stage,
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

    /// The first error at `field`, if any.
    pub fn error_at(&self, field: Field) -> Option<String> {
        self.diags_for(field)
            .find(|d| d.level == Level::Error)
            .map(|d| d.message.clone())
    }

    /// Sets an integer output; `None` (and nothing set) when it does not fit.
    pub(crate) fn set_int(&mut self, output: Output, v: u128) -> Option<i128> {
        let v = i128::try_from(v).ok()?;
        self.set(output, Num::Int(v));
        Some(v)
    }

    /// An integer output above zero (`None` when absent, a float, zero or negative).
    pub fn positive(&self, output: Output) -> Option<u64> {
        self.count(output).filter(|&c| c > 0)
    }

    /// An integer output as a count (`None` when absent, a float, or negative).
    pub fn count(&self, output: Output) -> Option<u64> {
        match self.value(output)? {
            Num::Int(i) => u64::try_from(i).ok(),
            Num::Float(_) => None,
        }
    }
}
