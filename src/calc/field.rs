//! The inputs: one [`Field`] per config key, and the parsing of what a user typed into a typed
//! value or a message at that field.
//!
//! Field keys are axolotl's own config keys (plus the cluster shape, which axolotl reads from the
//! environment), so a value can be copied straight from a YAML file. Parsing is strict on purpose:
//! `1.5` in an integer field, `-2`, `1e309` or `8 GPUs` are errors at that field, never guessed.

use super::{Diag, Level, RawInputs};

/// What kind of value a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative whole number (a count); at most `u64::MAX`.
    Count,
    /// A finite, non-negative decimal number.
    Real,
    /// `true` or `false`.
    Flag,
    /// A whole number that may be negative (`-1` means "fill in" in torchtitan).
    Int,
    /// Free text with its own syntax (Megatron's ramp-up and schedule lists).
    Text,
}

macro_rules! fields {
    ($($variant:ident => $key:literal, $kind:ident, $label:literal, $placeholder:literal, $help:literal;)*) => {
        /// One input of the calculator, named by its config key. A key means the same thing in
        /// every framework that has it (`micro_batch_size` in axolotl, Megatron and nanotron), so
        /// it is one variant; each framework module parses the fields it reads by its own rules.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Field { $($variant),* }

        impl Field {
            /// Every field, in declaration order (each framework lists its own form order).
            pub const ALL: &'static [Field] = &[$(Field::$variant),*];

            /// The config key: the URL parameter, the form's name, the key in the framework's config.
            pub const fn key(self) -> &'static str {
                match self { $(Field::$variant => $key),* }
            }

            /// What kind of text the form expects (each framework parses by its own rules).
            pub const fn kind(self) -> Kind {
                match self { $(Field::$variant => Kind::$kind),* }
            }

            /// The form's label, placeholder (what an empty field means) and one-line help.
            pub const fn describe(self) -> (&'static str, &'static str, &'static str) {
                match self { $(Field::$variant => ($label, $placeholder, $help)),* }
            }
        }
    };
}

fields! {
    // ---- the cluster (every framework) ---------------------------------------------------
    Nodes => "nodes", Count, "Nodes", "1", "Machines in the job.";
    GpusPerNode => "gpus_per_node", Count, "GPUs per node", "8", "GPUs on each machine.";
    WorldSize => "world_size", Count, "World size", "nodes × GPUs",
        "All GPUs (WORLD_SIZE). Optional: overrides nodes × GPUs per node.";

    // ---- axolotl (YAML keys) -------------------------------------------------------------
    TensorParallelSize => "tensor_parallel_size", Count, "Tensor parallel size", "1",
        "GPUs sharing one replica's layers; they see the same data.";
    ContextParallelSize => "context_parallel_size", Count, "Context parallel size", "1",
        "GPUs splitting one sequence; they see the same data.";
    MicroBatchSize => "micro_batch_size", Count, "Micro batch size", "1",
        "Samples per GPU per forward pass.";
    GradientAccumulationSteps => "gradient_accumulation_steps", Count, "Gradient accumulation steps", "1",
        "Micro batches per optimizer step.";
    BatchSize => "batch_size", Count, "Batch size (discouraged)", "unset",
        "Per-GPU batch; axolotl prefers gradient_accumulation_steps.";
    NumSamples => "num_samples", Count, "Training rows", "required for steps",
        "Rows in the training set after filtering and the validation split.";
    NumEpochs => "num_epochs", Real, "Epochs", "1", "May be fractional.";
    MaxSteps => "max_steps", Count, "Max steps", "unset",
        "Caps the logged step count; the Trainer runs exactly this many.";
    SequenceLen => "sequence_len", Count, "Sequence length", "512",
        "Tokens per sample (per packed bin with packing).";
    SamplePacking => "sample_packing", Flag, "Sample packing", "",
        "Pack several samples into each sequence.";
    SamplePackingEffEst => "sample_packing_eff_est", Real, "Packing efficiency estimate", "unset",
        "sample_packing_eff_est that axolotl logged (0–1).";
    TotalNumTokens => "total_num_tokens", Count, "Total tokens", "unset",
        "Tokens in the training set (needed with the estimate).";
    WarmupSteps => "warmup_steps", Real, "Warmup steps", "3 % of steps, ≤ 100",
        "Default: 3 % of the steps, at most 100. Not with warmup_ratio.";
    WarmupRatio => "warmup_ratio", Real, "Warmup ratio", "unset", "Fraction of the steps.";
    ValSetSize => "val_set_size", Real, "Validation split", "0", "val_set_size; evaluations need it.";
    EvalsPerEpoch => "evals_per_epoch", Count, "Evaluations per epoch", "unset", "Turned into eval_steps.";
    SavesPerEpoch => "saves_per_epoch", Count, "Saves per epoch", "unset", "Turned into save_steps.";

    // ---- Hugging Face Trainer (TrainingArguments, accelerate ParallelismConfig) -----------
    PerDeviceTrainBatchSize => "per_device_train_batch_size", Count, "Per-device batch size", "8",
        "TrainingArguments.per_device_train_batch_size: samples per GPU per forward pass.";
    TpSize => "tp_size", Count, "Tensor parallel size", "1",
        "ParallelismConfig tp_size (or the model's tp_plan size).";
    CpSize => "cp_size", Count, "Context parallel size", "1", "ParallelismConfig cp_size.";
    SpSize => "sp_size", Count, "Sequence parallel size", "1",
        "ParallelismConfig sp_size (DeepSpeed Ulysses / ALST).";
    NumTrainEpochs => "num_train_epochs", Real, "Epochs", "3.0", "num_train_epochs; may be fractional.";
    DataloaderDropLast => "dataloader_drop_last", Flag, "Drop the last incomplete batch", "",
        "dataloader_drop_last.";
    EvalSteps => "eval_steps", Real, "Evaluate every", "unset", "eval_steps; below 1 it is a fraction of max_steps.";
    SaveSteps => "save_steps", Real, "Save every", "500", "save_steps; below 1 it is a fraction of max_steps.";
    LoggingSteps => "logging_steps", Real, "Log every", "500", "logging_steps; below 1 it is a fraction of max_steps.";
    MaxLength => "max_length", Count, "Sequence length", "1024",
        "Tokens per sample (TRL SFTConfig.max_length); only for the token counts.";
    TrainSamplingStrategy => "train_sampling_strategy", Text, "Training sampler", "random",
        "train_sampling_strategy (transformers 5): random, sequential, group_by_length or batch_rebalance. batch_rebalance (5.17+) hands out one global batch of per-device × GA × world_size rows per step; 5.14–5.16 accept it unchecked in Python and sample randomly.";
    // (hf: add fields above this line)

    // ---- DeepSpeed (ds_config.json) ------------------------------------------------------
    TrainBatchSize => "train_batch_size", Count, "Train batch size", "derived",
        "train_batch_size: samples per optimizer step, all GPUs.";
    TrainMicroBatchSizePerGpu => "train_micro_batch_size_per_gpu", Count, "Micro batch per GPU", "derived",
        "train_micro_batch_size_per_gpu.";
    AutotpSize => "autotp_size", Count, "AutoTP size", "1", "tensor_parallel.autotp_size.";
    SequenceParallelSize => "sequence_parallel_size", Count, "Sequence parallel size", "1",
        "sequence_parallel_size (Ulysses).";
    MpuDataParallelWorldSize => "mpu_data_parallel_world_size", Count, "mpu data-parallel size", "no mpu",
        "Only with deepspeed.initialize(mpu=…) (Megatron-DeepSpeed: world ÷ (tp × pp)) or mesh_param=(dp, sp): its data-parallel size, which DeepSpeed checks the batch against instead of world_size.";
    // (deepspeed: add fields above this line)

    // ---- Megatron-LM (command-line arguments, as args names) -----------------------------
    TensorModelParallelSize => "tensor_model_parallel_size", Count, "Tensor model parallel size", "1",
        "--tensor-model-parallel-size.";
    PipelineModelParallelSize => "pipeline_model_parallel_size", Count, "Pipeline model parallel size", "1",
        "--pipeline-model-parallel-size.";
    ExpertModelParallelSize => "expert_model_parallel_size", Count, "Expert model parallel size", "1",
        "--expert-model-parallel-size (not in the data-parallel size).";
    GlobalBatchSize => "global_batch_size", Int, "Global batch size", "mbs × dp",
        "Samples per optimizer step, all GPUs.";
    RampupBatchSize => "rampup_batch_size", Text, "Batch-size ramp-up", "unset",
        "--rampup-batch-size <start> <increment> <samples>.";
    StepBatchSizeSchedule => "step_batch_size_schedule", Text, "Step batch-size schedule", "unset",
        "--step-batch-size-schedule \"THRESHOLD:BS ...\".";
    DecreaseBatchSizeIfNeeded => "decrease_batch_size_if_needed", Flag, "Decrease batch size if needed", "",
        "--decrease-batch-size-if-needed.";
    TrainIters => "train_iters", Count, "Train iterations", "unset", "--train-iters.";
    TrainSamples => "train_samples", Count, "Train samples", "unset", "--train-samples.";
    SeqLength => "seq_length", Count, "Sequence length", "unset", "--seq-length.";
    LrWarmupIters => "lr_warmup_iters", Count, "Warmup iterations", "0", "--lr-warmup-iters.";
    LrWarmupFraction => "lr_warmup_fraction", Real, "Warmup fraction", "unset", "--lr-warmup-fraction.";
    LrWarmupSamples => "lr_warmup_samples", Count, "Warmup samples", "0", "--lr-warmup-samples.";
    EvalGlobalBatchSize => "eval_global_batch_size", Int, "Eval global batch size", "global batch",
        "--eval-global-batch-size (0.19.2); must divide by eval micro batch × dp.";
    EvalMicroBatchSize => "eval_micro_batch_size", Int, "Eval micro batch size", "micro batch",
        "--eval-micro-batch-size (0.19.2).";
    NumExperts => "num_experts", Count, "Number of experts", "unset",
        "--num-experts (0.19.2: required with expert parallelism, a multiple of it).";
    ExpertTensorParallelSize => "expert_tensor_parallel_size", Count, "Expert tensor parallel size", "TP",
        "--expert-tensor-parallel-size (0.19.2): the expert grid is this × expert × pipeline.";
    TensorParallelNumWeightShards => "tensor_parallel_num_weight_shards", Count, "TP weight shards", "TP",
        "--tensor-parallel-num-weight-shards (0.19.2): shards ÷ TP is a weight-shard (GTP) axis in the model size.";
    // (megatron: add fields above this line)

    // ---- torchtitan (job config TOML: [parallelism], [training]) --------------------------
    DataParallelReplicateDegree => "data_parallel_replicate_degree", Count, "DP replicate degree", "1",
        "parallelism.data_parallel_replicate_degree.";
    DataParallelShardDegree => "data_parallel_shard_degree", Int, "DP shard degree", "-1",
        "parallelism.data_parallel_shard_degree; -1 fills the rest of the world.";
    TensorParallelDegree => "tensor_parallel_degree", Count, "Tensor parallel degree", "1",
        "parallelism.tensor_parallel_degree.";
    ContextParallelDegree => "context_parallel_degree", Count, "Context parallel degree", "1",
        "parallelism.context_parallel_degree.";
    PipelineParallelDegree => "pipeline_parallel_degree", Count, "Pipeline parallel degree", "1",
        "parallelism.pipeline_parallel_degree.";
    ExpertParallelDegree => "expert_parallel_degree", Count, "Expert parallel degree", "1",
        "parallelism.expert_parallel_degree (folded into dp_shard × cp × tp).";
    PipelineParallelMicrobatchSize => "pipeline_parallel_microbatch_size", Count, "PP microbatch size", "1",
        "parallelism.pipeline_parallel_microbatch_size.";
    LocalBatchSize => "local_batch_size", Count, "Local batch size", "8", "training.local_batch_size.";
    SeqLen => "seq_len", Count, "Sequence length", "2048", "training.seq_len.";
    Steps => "steps", Count, "Steps", "10000", "training.steps: optimizer steps of the run.";
    NumTokensPerMicrobatchPerDpRank => "num_tokens_per_microbatch_per_dp_rank", Count, "Tokens per microbatch per DP rank", "16384",
        "training.num_tokens_per_microbatch_per_dp_rank.";
    NumTokensPerTrainStep => "num_tokens_per_train_step", Int, "Tokens per train step", "-1",
        "training.num_tokens_per_train_step; -1 means one microbatch per DP rank.";
    MaxContextLength => "max_context_length", Count, "Max context length", "2048", "training.max_context_length.";
    NumPpMicrobatches => "num_pp_microbatches", Count, "PP microbatches", "1", "parallelism.num_pp_microbatches.";
    EnableSequenceParallel => "enable_sequence_parallel", Flag, "Sequence parallel (with TP)", "true",
        "parallelism.enable_sequence_parallel: the sequence must then divide by the TP degree.";
    DisableCudaGraphs => "disable_cuda_graphs", Flag, "Disable CUDA graphs", "false",
        "training.disable_cuda_graphs; pipeline parallelism needs it set.";
    // (torchtitan: add fields above this line)

    // ---- nanotron (config YAML: parallelism, tokens) --------------------------------------
    Dp => "dp", Count, "Data parallel size", "required", "parallelism.dp: model replicas, each fed its own data.";
    Tp => "tp", Count, "Tensor parallel size", "required", "parallelism.tp.";
    Pp => "pp", Count, "Pipeline parallel size", "required", "parallelism.pp.";
    ExpertParallelSize => "expert_parallel_size", Count, "Expert parallel size", "1",
        "parallelism.expert_parallel_size (0.4 counts it in the GPUs per model; HEAD does not).";
    BatchAccumulationPerReplica => "batch_accumulation_per_replica", Count, "Batch accumulation per replica", "required",
        "tokens.batch_accumulation_per_replica: micro batches per optimizer step.";
    SequenceLength => "sequence_length", Count, "Sequence length", "required", "tokens.sequence_length.";
    TrainSteps => "train_steps", Count, "Train steps", "required", "tokens.train_steps: optimizer steps of the run.";
    NumAttentionHeads => "model.model_config.num_attention_heads", Count, "Attention heads", "unchecked",
        "model.model_config.num_attention_heads: HEAD checks tp against it (Config.__post_init__).";
    NumKeyValueHeads => "model.model_config.num_key_value_heads", Count, "Key/value heads", "= attention heads",
        "model.model_config.num_key_value_heads (absent: num_attention_heads); HEAD checks tp against it.";
    // (nanotron: add fields above this line)

    // ---- throughput (dpcalc's own, for time estimates) -----------------------------------
    TokensPerSecondPerGpu => "tokens_per_second_per_gpu", Real, "Tokens per second per GPU", "unset",
        "Measured throughput; gives time per step and GPU-hours.";
    SecondsPerStep => "seconds_per_step", Real, "Seconds per step", "unset",
        "Measured time of one optimizer step (instead of tokens per second).";
}

impl Field {
    pub const COUNT: usize = Field::ALL.len();

    /// The field whose config key is `key`.
    pub fn from_key(key: &str) -> Option<Field> {
        Field::ALL.iter().copied().find(|f| f.key() == key)
    }

    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A parsed input: absent (the default applies), a value, or invalid (its error is already
/// reported at the field, and everything that needs it shows no value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<T> {
    Absent,
    Given(T),
    Invalid,
}

impl<T: Copy> Param<T> {
    /// The value, the default when absent, or `None` when invalid.
    pub fn or(self, default: T) -> Option<T> {
        match self {
            Param::Absent => Some(default),
            Param::Given(v) => Some(v),
            Param::Invalid => None,
        }
    }

    pub fn given(self) -> Option<T> {
        match self {
            Param::Given(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_given(self) -> bool {
        matches!(self, Param::Given(_))
    }
}

/// Largest accepted text, so a 100 KB URL value costs nothing to reject.
const MAX_LEN: usize = 64;

/// Parses a whole number field.
pub fn count(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<u64> {
    let text = raw.trim();
    if text.is_empty() {
        return Param::Absent;
    }
    let msg = if text.len() > MAX_LEN {
        "is far too long to be a number".to_string()
    } else if text.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<u64>() {
            Ok(v) => return Param::Given(v),
            Err(_) => format!("is too large (at most {})", u64::MAX),
        }
    } else if text.starts_with('-') && text[1..].parse::<f64>().is_ok() {
        "cannot be negative".to_string()
    } else if text.parse::<f64>().is_ok_and(f64::is_finite) {
        "must be a whole number".to_string()
    } else {
        "is not a number".to_string()
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Parses a decimal field (`num_epochs`, ratios, estimates).
pub fn real(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<f64> {
    let text = raw.trim();
    if text.is_empty() {
        return Param::Absent;
    }
    // Rust accepts "inf", "NaN" and "infinity"; only digits, a point, a sign and an exponent are numbers here.
    let plain = text.len() <= MAX_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    let msg = match text.parse::<f64>() {
        Ok(v) if plain && v.is_finite() && v >= 0.0 => return Param::Given(v),
        Ok(v) if plain && v.is_finite() => "cannot be negative",
        Ok(_) if plain => "is too large",
        _ if text.len() > MAX_LEN => "is far too long to be a number",
        _ => "is not a number",
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Parses a boolean field the way pydantic reads YAML/URL booleans.
pub fn flag(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<bool> {
    let text = raw.trim();
    if text.is_empty() {
        return Param::Absent;
    }
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Param::Given(true),
        "false" | "0" | "no" | "off" => Param::Given(false),
        _ => {
            diags.push(Diag::new(
                field,
                Level::Error,
                format!(
                    "{} must be true or false: \u{201c}{}\u{201d}",
                    field.key(),
                    shorten(text)
                ),
            ));
            Param::Invalid
        }
    }
}

/// Parses a whole number that may be negative (torchtitan's `-1` "fill in" values).
pub fn int(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<i64> {
    let text = raw.trim();
    if text.is_empty() {
        return Param::Absent;
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let msg = if text.len() > MAX_LEN {
        "is far too long to be a number"
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<i64>() {
            Ok(v) => return Param::Given(v),
            Err(_) => "is too large",
        }
    } else if text.parse::<f64>().is_ok_and(f64::is_finite) {
        "must be a whole number"
    } else {
        "is not a number"
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Reads the fields of one set of inputs, turning a field given several times (a hand-edited
/// link) into an error that shows every value, so no framework module picks one silently.
pub struct Reader<'a> {
    pub raw: &'a RawInputs,
    pub diags: &'a mut Vec<Diag>,
}

impl Reader<'_> {
    fn conflict<T>(&mut self, field: Field) -> Option<Param<T>> {
        let values = self.raw.conflict(field)?;
        let shown: Vec<String> = values
            .iter()
            .map(|v| format!("\u{201c}{}\u{201d}", shorten(v)))
            .collect();
        self.diags.push(Diag::new(
            field,
            Level::Error,
            format!(
                "{} is given {} times in the link ({}); keep one",
                field.key(),
                values.len(),
                shown.join(", ")
            ),
        ));
        Some(Param::Invalid)
    }

    pub fn count(&mut self, field: Field) -> Param<u64> {
        self.conflict(field)
            .unwrap_or_else(|| count(field, self.raw.get(field), self.diags))
    }

    pub fn real(&mut self, field: Field) -> Param<f64> {
        self.conflict(field)
            .unwrap_or_else(|| real(field, self.raw.get(field), self.diags))
    }

    pub fn flag(&mut self, field: Field) -> Param<bool> {
        self.conflict(field)
            .unwrap_or_else(|| flag(field, self.raw.get(field), self.diags))
    }

    pub fn int(&mut self, field: Field) -> Param<i64> {
        self.conflict(field)
            .unwrap_or_else(|| int(field, self.raw.get(field), self.diags))
    }

    /// Free text, trimmed; its syntax is the caller's to check.
    pub fn text(&mut self, field: Field) -> Param<String> {
        if let Some(p) = self.conflict(field) {
            return p;
        }
        match self.raw.get(field).trim() {
            "" => Param::Absent,
            t => Param::Given(t.to_string()),
        }
    }
}

/// Keeps a quoted bad value readable in a message.
pub(crate) fn shorten(text: &str) -> String {
    const SHOW: usize = 40;
    if text.chars().count() <= SHOW {
        text.to_string()
    } else {
        let head: String = text.chars().take(SHOW).collect();
        format!("{head}\u{2026}")
    }
}

/// The group every framework's form ends with: measured speed, for the time estimates.
pub const THROUGHPUT: (&str, &[Field]) = (
    "Throughput (optional)",
    &[Field::TokensPerSecondPerGpu, Field::SecondsPerStep],
);

/// The cluster group every framework's form starts with.
pub const CLUSTER: &[Field] = &[Field::Nodes, Field::GpusPerNode, Field::WorldSize];

#[cfg(test)]
mod tests {
    use super::*;

    fn c(raw: &str) -> (Param<u64>, Vec<Diag>) {
        let mut d = Vec::new();
        (count(Field::Nodes, raw, &mut d), d)
    }

    fn r(raw: &str) -> (Param<f64>, Vec<Diag>) {
        let mut d = Vec::new();
        (real(Field::NumEpochs, raw, &mut d), d)
    }

    #[test]
    fn counts() {
        assert_eq!(c("").0, Param::Absent);
        assert_eq!(c(" 8 ").0, Param::Given(8));
        assert_eq!(c("18446744073709551615").0, Param::Given(u64::MAX));
        for (bad, says) in [
            ("18446744073709551616", "too large"),
            ("-1", "negative"),
            ("1.5", "whole number"),
            ("1e3", "whole number"),
            ("eight", "not a number"),
            ("NaN", "not a number"),
            ("0x10", "not a number"),
        ] {
            let (p, d) = c(bad);
            assert_eq!(p, Param::Invalid, "{bad}");
            assert!(d[0].message.contains(says), "{bad}: {}", d[0].message);
            assert_eq!(d[0].field, Field::Nodes);
        }
        let long = "9".repeat(100_000);
        let (p, d) = c(&long);
        assert_eq!(p, Param::Invalid);
        assert!(d[0].message.len() < 200);
    }

    #[test]
    fn reals() {
        assert_eq!(r("1.5").0, Param::Given(1.5));
        assert_eq!(r("2").0, Param::Given(2.0));
        assert_eq!(r("1e-3").0, Param::Given(0.001));
        for bad in ["1e309", "inf", "NaN", "-0.5", "1,5", "infinity"] {
            assert_eq!(r(bad).0, Param::Invalid, "{bad}");
        }
    }

    #[test]
    fn flags() {
        let mut d = Vec::new();
        assert_eq!(
            flag(Field::SamplePacking, "True", &mut d),
            Param::Given(true)
        );
        assert_eq!(flag(Field::SamplePacking, "0", &mut d), Param::Given(false));
        assert_eq!(flag(Field::SamplePacking, "maybe", &mut d), Param::Invalid);
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn keys_round_trip() {
        for &f in Field::ALL {
            assert_eq!(Field::from_key(f.key()), Some(f));
            assert_eq!(Field::ALL[f.index()], f);
        }
        assert_eq!(Field::from_key("nope"), None);
    }
}
