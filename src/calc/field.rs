//! The inputs: one [`Field`] per config key (each framework's own names, in its own section of
//! the table), the groups every form shares, and [`RawInputs`], what was typed, one text per
//! field. The parsing of that text is `parse.rs`.
//!
//! A key means the same thing in every framework that has it, so a value can be copied straight
//! from a config file.

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
    ($([$($view:tt),*] { $($variant:ident => $key:literal, $kind:ident, $label:literal, $placeholder:literal, $help:literal;)* })*) => {
        /// One input of the calculator, named by its config key. A key means the same thing in
        /// every framework that has it (`micro_batch_size` in axolotl, Megatron and nanotron), so
        /// it is one variant; each framework module parses the fields it reads by its own rules.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Field { $($($variant,)*)* }

        impl Field {
            /// Every field, in declaration order (each framework lists its own form order).
            pub const ALL: &'static [Field] = &[$($(Field::$variant,)*)*];

            /// The config key: the URL parameter, the form's name, the key in the framework's config.
            pub const fn key(self) -> &'static str {
                match self { $($(Field::$variant => $key,)*)* }
            }

            /// What kind of text the form expects (each framework parses by its own rules).
            pub const fn kind(self) -> Kind {
                match self { $($(Field::$variant => Kind::$kind,)*)* }
            }

            /// The form's label, placeholder (what an empty field means) and one-line help. A
            /// first view holds only the sections its framework's form shows (the other
            /// frameworks' words would be dead weight there): a field of another section is
            /// described as empty, which `tests/first.rs` proves no first view shows.
            pub const fn describe(self) -> (&'static str, &'static str, &'static str) {
                $(
                    if cfg!(any(not(feature = "first"), $(feature = $view),*)) {
                        match self {
                            $(Field::$variant => return ($label, $placeholder, $help),)*
                            #[allow(unreachable_patterns)]
                            _ => {}
                        }
                    }
                )*
                ("", "", "")
            }
        }

        /// The sections of the table: the first views that hold each one's words (see
        /// [`Field::describe`]), and its fields.
        pub const SECTIONS: &[(&[&str], &[Field])] = &[$((&[$($view),*], &[$(Field::$variant),*]),)*];
    };
}

fields! {
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        // ---- the cluster (every framework) ---------------------------------------------------
        Nodes => "nodes", Count, "Nodes", "1", "Machines in the job.";
        GpusPerNode => "gpus_per_node", Count, "GPUs per node", "8", "GPUs on each machine.";
        WorldSize => "world_size", Count, "World size", "nodes × GPUs",
            "All GPUs (WORLD_SIZE). Optional: overrides nodes × GPUs per node.";
    }
    ["first-axolotl"] {
        // ---- axolotl (YAML keys) -------------------------------------------------------------
        TensorParallelSize => "tensor_parallel_size", Count, "Tensor parallel size", "1",
            "GPUs sharing one replica's layers; they see the same data.";
        ContextParallelSize => "context_parallel_size", Count, "Context parallel size", "1",
            "GPUs splitting one sequence; they see the same data.";
        MicroBatchSize => "micro_batch_size", Count, "Micro batch size", "1",
            "Samples per GPU per forward pass.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed"] {
        GradientAccumulationSteps => "gradient_accumulation_steps", Count, "Gradient accumulation steps", "1",
            "Micro batches per optimizer step.";
    }
    ["first-axolotl"] {
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
        AttnImplementation => "attn_implementation", Text, "Attention implementation", "unset",
            "attn_implementation (eager, sdpa, flash_attention_2, flex_attention…); 0.20.0+ refuse eager with context parallelism.";
        DpShardSize => "dp_shard_size", Count, "DP shard size", "auto",
            "dp_shard_size: FSDP shard axis (needs fsdp_config); with expert parallelism give it explicitly.";
        DpReplicateSize => "dp_replicate_size", Count, "DP replicate size", "auto",
            "dp_replicate_size: replicas of the sharded model (HSDP), or DeepSpeed's data-parallel size with CP.";
        FsdpVersion => "fsdp_version", Count, "FSDP version", "2 with fsdp_config",
            "fsdp_version: 0.21.0 accepts only 2 (an fsdp_config block without it means 2).";
        FsdpConfigFsdpVersion => "fsdp_config.fsdp_version", Count, "fsdp_config.fsdp_version", "unset",
            "fsdp_version given inside the fsdp_config block.";
        FsdpStateDictType => "fsdp_config.state_dict_type", Text, "FSDP state dict type", "unset",
            "fsdp_config.state_dict_type; expert parallelism needs FULL_STATE_DICT.";
        FsdpFinalStateDictType => "fsdp_config.final_state_dict_type", Text, "FSDP final state dict type", "unset",
            "fsdp_config.final_state_dict_type; with expert parallelism FULL_STATE_DICT when set.";
        FsdpReshardAfterForward => "fsdp_config.reshard_after_forward", Flag, "FSDP reshard after forward", "",
            "fsdp_config.reshard_after_forward (only whether an fsdp_config block is given matters here).";
        FsdpOffloadParams => "fsdp_config.offload_params", Flag, "FSDP offload params", "false",
            "fsdp_config.offload_params (also fsdp_offload_params): FSDP2 keeps parameters, gradients and optimizer states on the CPU.";
        FsdpShardingStrategy => "fsdp_config.sharding_strategy", Text, "FSDP1 sharding strategy", "unset",
            "fsdp_config.sharding_strategy (also fsdp_sharding_strategy): FSDP1 only; 0.21.0 refuses it (reshard_after_forward replaces it).";
        Fsdp => "fsdp", Text, "FSDP1 list", "unset",
            "fsdp: the FSDP1 list (full_shard, auto_wrap); 0.21.0 refuses it: FSDP is fsdp_config.";
        Deepspeed => "deepspeed", Text, "DeepSpeed config", "unset",
            "deepspeed: the DeepSpeed JSON path; only whether it is set matters (0.21.0 maps CP to Ulysses sp_size).";
        Plugins => "plugins", Text, "Plugins", "unset",
            "plugins (comma-separated); 0.20.0 needs axolotl.integrations.expert_parallel.ExpertParallelPlugin for expert_parallel_size.";
    }
    ["first-hf"] {
        // (axolotl: add fields above this line)
        // ---- Hugging Face Trainer (TrainingArguments, accelerate ParallelismConfig) -----------
        PerDeviceTrainBatchSize => "per_device_train_batch_size", Count, "Per-device batch size", "8",
            "TrainingArguments.per_device_train_batch_size: samples per GPU per forward pass.";
        TpSize => "tp_size", Count, "Tensor parallel size", "1",
            "ParallelismConfig tp_size (or the model's tp_plan size).";
        CpSize => "cp_size", Count, "Context parallel size", "1", "ParallelismConfig cp_size.";
        SpSize => "sp_size", Count, "Sequence parallel size", "1",
            "ParallelismConfig sp_size (DeepSpeed Ulysses / ALST).";
        NumTrainEpochs => "num_train_epochs", Real, "Epochs", "3.0", "num_train_epochs; may be fractional.";
    }
    ["first-hf", "first-deepspeed"] {
        DataloaderDropLast => "dataloader_drop_last", Flag, "Drop the last incomplete batch", "",
            "dataloader_drop_last.";
    }
    ["first-hf"] {
        EvalSteps => "eval_steps", Real, "Evaluate every", "unset", "eval_steps; below 1 it is a fraction of max_steps.";
        SaveSteps => "save_steps", Real, "Save every", "500", "save_steps; below 1 it is a fraction of max_steps.";
        LoggingSteps => "logging_steps", Real, "Log every", "500", "logging_steps; below 1 it is a fraction of max_steps.";
    }
    [] {
        // the step time's (the app's alone: [`APP_ONLY`])
        TorchCompile => "torch_compile", Flag, "torch.compile", "false",
            "torch_compile.";
    }
    ["first-hf", "first-deepspeed"] {
        MaxLength => "max_length", Count, "Sequence length", "1024",
            "Tokens per sample (TRL SFTConfig.max_length); only for the token counts.";
    }
    ["first-hf"] {
        TrainSamplingStrategy => "train_sampling_strategy", Text, "Training sampler", "random",
            "train_sampling_strategy (transformers 5): random, sequential, group_by_length or batch_rebalance. batch_rebalance (5.17+) hands out one global batch of per-device × GA × world_size rows per step; 5.14–5.16 accept it unchecked in Python and sample randomly.";
    }
    ["first-deepspeed"] {
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
    }
    ["first-megatron"] {
        // (deepspeed: add fields above this line)
        // ---- Megatron-LM (command-line arguments, as args names) -----------------------------
        TensorModelParallelSize => "tensor_model_parallel_size", Count, "Tensor model parallel size", "1",
            "--tensor-model-parallel-size.";
        PipelineModelParallelSize => "pipeline_model_parallel_size", Count, "Pipeline model parallel size", "1",
            "--pipeline-model-parallel-size.";
        ExpertModelParallelSize => "expert_model_parallel_size", Count, "Expert model parallel size", "1",
            "--expert-model-parallel-size.";
    }
    [] {
        GlobalBatchSize => "global_batch_size", Int, "Global batch size", "mbs × dp",
            "Samples per optimizer step, all GPUs.";
    }
    ["first-megatron"] {
        RampupBatchSize => "rampup_batch_size", Text, "Batch-size ramp-up", "unset",
            "--rampup-batch-size.";
        StepBatchSizeSchedule => "step_batch_size_schedule", Text, "Step batch-size schedule", "unset",
            "--step-batch-size-schedule.";
        DecreaseBatchSizeIfNeeded => "decrease_batch_size_if_needed", Flag, "Decrease batch size if needed", "",
            "--decrease-batch-size-if-needed.";
        TrainIters => "train_iters", Count, "Train iterations", "unset", "--train-iters.";
        TrainSamples => "train_samples", Count, "Train samples", "unset", "--train-samples.";
        SeqLength => "seq_length", Count, "Sequence length", "unset", "--seq-length.";
        LrDecayIters => "lr_decay_iters", Count, "Decay iterations", "train_iters",
            "--lr-decay-iters.";
        LrDecaySamples => "lr_decay_samples", Count, "Decay samples", "train_samples",
            "--lr-decay-samples.";
        LrWarmupIters => "lr_warmup_iters", Count, "Warmup iterations", "0", "--lr-warmup-iters.";
        LrWarmupFraction => "lr_warmup_fraction", Real, "Warmup fraction", "unset", "--lr-warmup-fraction.";
        LrWarmupSamples => "lr_warmup_samples", Count, "Warmup samples", "0", "--lr-warmup-samples.";
        EvalGlobalBatchSize => "eval_global_batch_size", Int, "Eval global batch size", "global batch",
            "--eval-global-batch-size (0.19.2).";
        EvalMicroBatchSize => "eval_micro_batch_size", Int, "Eval micro batch size", "micro batch",
            "--eval-micro-batch-size (0.19.2).";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan"] {
        NumExperts => "num_experts", Count, "Number of experts", "unset",
            "--num-experts.";
    }
    ["first-megatron"] {
        ExpertTensorParallelSize => "expert_tensor_parallel_size", Count, "Expert tensor parallel size", "TP",
            "--expert-tensor-parallel-size.";
        TensorParallelNumWeightShards => "tensor_parallel_num_weight_shards", Count, "TP weight shards", "TP",
            "--tensor-parallel-num-weight-shards.";
    }
    ["first-torchtitan"] {
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
    }
    ["first-nanotron"] {
        // (torchtitan: add fields above this line)
        // ---- nanotron (config YAML: parallelism, tokens) --------------------------------------
        Dp => "dp", Count, "Data parallel size", "required", "parallelism.dp: model replicas, each fed its own data.";
        Tp => "tp", Count, "Tensor parallel size", "required", "parallelism.tp.";
        Pp => "pp", Count, "Pipeline parallel size", "required", "parallelism.pp.";
    }
    [] {
        ExpertParallelSize => "expert_parallel_size", Count, "Expert parallel size", "1",
            "GPUs that split the experts of an MoE layer; they sit inside the data-parallel ranks.";
    }
    ["first-nanotron"] {
        BatchAccumulationPerReplica => "batch_accumulation_per_replica", Count, "Batch accumulation per replica", "required",
            "tokens.batch_accumulation_per_replica: micro batches per optimizer step.";
        SequenceLength => "sequence_length", Count, "Sequence length", "required", "tokens.sequence_length.";
        TrainSteps => "train_steps", Count, "Train steps", "required", "tokens.train_steps: optimizer steps of the run.";
        NumAttentionHeads => "model.model_config.num_attention_heads", Count, "Attention heads", "unchecked",
            "model.model_config.num_attention_heads: HEAD checks tp against it (Config.__post_init__).";
        NumKeyValueHeads => "model.model_config.num_key_value_heads", Count, "Key/value heads", "= attention heads",
            "model.model_config.num_key_value_heads (absent: num_attention_heads); HEAD checks tp against it.";
        LrSchedulerWarmupSteps => "optimizer.learning_rate_scheduler.lr_warmup_steps", Count, "Warmup steps", "0",
            "optimizer.learning_rate_scheduler.lr_warmup_steps: the learning rate's warmup, in optimizer steps.";
    }
    ["first-axolotl"] {
        // (nanotron: add fields above this line)
        // ---- the model (config.json's keys; a preset by its Hub id under each framework's key) -
        BaseModel => "base_model", Text, "Model", "none",
            "base_model: a Hub id dpcalc knows (meta-llama/Llama-3.1-8B, Qwen/Qwen3-8B, …) fills the architecture below.";
    }
    ["first-hf"] {
        ModelNameOrPath => "model_name_or_path", Text, "Model", "none",
            "model_name_or_path: a Hub id dpcalc knows (meta-llama/Llama-3.1-8B, Qwen/Qwen3-8B, …) fills the architecture below.";
    }
    ["first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        ModelId => "model", Text, "Model", "none",
            "A Hub id dpcalc knows (meta-llama/Llama-3.1-8B, Qwen/Qwen3-8B, …): fills the architecture below.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan", "first-nanotron"] {
        ModelType => "model_type", Text, "Model type", "preset's, else llama",
            "config.json model_type: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gemma, gemma2.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        HiddenSize => "hidden_size", Count, "Hidden size", "preset's", "hidden_size.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan", "first-nanotron"] {
        NumHiddenLayers => "num_hidden_layers", Count, "Layers", "preset's", "num_hidden_layers.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan"] {
        ModelNumAttentionHeads => "num_attention_heads", Count, "Attention heads", "preset's", "num_attention_heads.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan"] {
        ModelNumKeyValueHeads => "num_key_value_heads", Count, "Key/value heads", "preset's",
            "num_key_value_heads (GQA groups; = attention heads without GQA).";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan", "first-nanotron"] {
        HeadDim => "head_dim", Count, "Head dimension", "hidden ÷ heads", "head_dim (Qwen3 and Gemma set it).";
        IntermediateSize => "intermediate_size", Count, "MLP size", "preset's", "intermediate_size.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        VocabSize => "vocab_size", Count, "Vocabulary", "preset's", "vocab_size (the real vocabulary).";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan", "first-nanotron"] {
        TieWordEmbeddings => "tie_word_embeddings", Flag, "Tie embeddings", "preset's",
            "tie_word_embeddings: the output layer shares the embedding's weights.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-torchtitan"] {
        AttentionBias => "attention_bias", Flag, "Attention bias", "preset's",
            "attention_bias: on Llama and Qwen3, q, k, v and o biases (Qwen2's q/k/v bias is built in).";
        NumExpertsPerTok => "num_experts_per_tok", Count, "Experts per token", "preset's", "num_experts_per_tok (top-k).";
        MoeIntermediateSize => "moe_intermediate_size", Count, "Expert MLP size", "preset's", "moe_intermediate_size.";
        NSharedExperts => "n_shared_experts", Count, "Shared experts", "preset's", "n_shared_experts (DeepSeek-V3).";
        FirstKDenseReplace => "first_k_dense_replace", Count, "Dense first layers", "preset's",
            "first_k_dense_replace (DeepSeek-V3).";
    }
    [] {
        // multi-latent attention's sizes (the app's alone: [`APP_ONLY`])
        QLoraRank => "q_lora_rank", Count, "q LoRA rank (MLA)", "preset's", "q_lora_rank (DeepSeek-V3 MLA).";
        KvLoraRank => "kv_lora_rank", Count, "kv LoRA rank (MLA)", "preset's", "kv_lora_rank.";
        QkNopeHeadDim => "qk_nope_head_dim", Count, "qk nope head dim (MLA)", "preset's", "qk_nope_head_dim.";
        QkRopeHeadDim => "qk_rope_head_dim", Count, "qk rope head dim (MLA)", "preset's", "qk_rope_head_dim.";
        VHeadDim => "v_head_dim", Count, "v head dim (MLA)", "preset's", "v_head_dim.";
    }
    ["first-megatron"] {
        // Megatron-LM's own arguments for the model
        NumLayers => "num_layers", Count, "Layers", "preset's", "--num-layers.";
        FfnHiddenSize => "ffn_hidden_size", Count, "FFN hidden size", "preset's", "--ffn-hidden-size.";
        GroupQueryAttention => "group_query_attention", Flag, "Group query attention", "preset's",
            "--group-query-attention.";
        NumQueryGroups => "num_query_groups", Count, "Query groups", "preset's", "--num-query-groups.";
        KvChannels => "kv_channels", Count, "KV channels", "hidden ÷ heads", "--kv-channels.";
        MakeVocabSizeDivisibleBy => "make_vocab_size_divisible_by", Count, "Pad vocabulary to a multiple of", "128",
            "--make-vocab-size-divisible-by.";
        Swiglu => "swiglu", Flag, "SwiGLU", "preset's, else false",
            "--swiglu.";
        UntieEmbeddingsAndOutputWeights => "untie_embeddings_and_output_weights", Flag, "Untie embeddings", "preset's, else false",
            "--untie-embeddings-and-output-weights.";
        DisableBiasLinear => "disable_bias_linear", Flag, "Disable linear biases", "preset's, else false",
            "--disable-bias-linear.";
        QkLayernorm => "qk_layernorm", Flag, "QK layernorm", "preset's, else false",
            "--qk-layernorm.";
        Normalization => "normalization", Text, "Normalization", "preset's, else LayerNorm",
            "--normalization.";
        PositionEmbeddingType => "position_embedding_type", Text, "Position embeddings", "preset's, else learned_absolute",
            "--position-embedding-type.";
        MaxPositionEmbeddings => "max_position_embeddings", Count, "Max position embeddings", "none (required)",
            "--max-position-embeddings.";
        MoeRouterTopk => "moe_router_topk", Count, "Router top-k", "preset's", "--moe-router-topk.";
        MoeFfnHiddenSize => "moe_ffn_hidden_size", Count, "Expert FFN size", "preset's", "--moe-ffn-hidden-size.";
        UseDistributedOptimizer => "use_distributed_optimizer", Flag, "Distributed optimizer", "false",
            "--use-distributed-optimizer.";
        SequenceParallel => "sequence_parallel", Flag, "Sequence parallel", "false",
            "--sequence-parallel (with TP > 1).";
        RecomputeGranularity => "recompute_granularity", Text, "Recompute", "none", "--recompute-granularity.";
        RecomputeMethod => "recompute_method", Text, "Recompute method", "none",
            "--recompute-method.";
        RecomputeNumLayers => "recompute_num_layers", Count, "Recompute layers", "1",
            "--recompute-num-layers.";
        NumLayersPerVirtualPipelineStage => "num_layers_per_virtual_pipeline_stage", Count, "Layers per virtual stage", "unset",
            "--num-layers-per-virtual-pipeline-stage.";
        NumVirtualStagesPerPipelineRank => "num_virtual_stages_per_pipeline_rank", Count, "Virtual stages per rank", "unset",
            "--num-virtual-stages-per-pipeline-rank.";
        MicrobatchGroupSizePerVirtualPipelineStage => "microbatch_group_size_per_virtual_pipeline_stage", Count,
            "Micro batches per group", "PP size",
            "--microbatch-group-size-per-virtual-pipeline-stage.";
        HiddenDropout => "hidden_dropout", Real, "Hidden dropout", "0.1", "--hidden-dropout.";
        TransformerImpl => "transformer_impl", Text, "Transformer implementation", "transformer_engine",
            "--transformer-impl.";
    }
    [] {
        Fp8Format => "fp8_format", Text, "FP8 format", "unset (bf16)",
            "--fp8-format: e4m3 or hybrid.";
    }
    ["first-megatron"] {
        AttentionBackend => "attention_backend", Text, "Attention backend", "auto",
            "--attention-backend.";
        OverlapGradReduce => "overlap_grad_reduce", Flag, "Overlap grad reduce", "false",
            "--overlap-grad-reduce.";
        OverlapParamGather => "overlap_param_gather", Flag, "Overlap param gather", "false",
            "--overlap-param-gather.";
        TpCommOverlap => "tp_comm_overlap", Flag, "Overlap TP communication", "false",
            "--tp-comm-overlap.";
    }
    [] {
        // the pipeline's split: the memory per stage (the app's alone: [`APP_ONLY`])
        DecoderFirstPipelineNumLayers => "decoder_first_pipeline_num_layers", Count, "Layers on the first stage", "even split",
            "--decoder-first-pipeline-num-layers.";
        DecoderLastPipelineNumLayers => "decoder_last_pipeline_num_layers", Count, "Layers on the last stage", "even split",
            "--decoder-last-pipeline-num-layers.";
        AccountForEmbeddingInPipelineSplit => "account_for_embedding_in_pipeline_split", Flag, "Embedding as a pipeline layer", "false",
            "--account-for-embedding-in-pipeline-split.";
        AccountForLossInPipelineSplit => "account_for_loss_in_pipeline_split", Flag, "Loss as a pipeline layer", "false",
            "--account-for-loss-in-pipeline-split.";
    }
    [] {
        // ---- Megatron's multi-latent attention (the full app's alone: [`APP_ONLY`]) ---------
        MultiLatentAttention => "multi_latent_attention", Flag, "Multi-latent attention", "false",
            "--multi-latent-attention.";
        QkHeadDim => "qk_head_dim", Count, "QK head dim (MLA)", "128", "--qk-head-dim.";
        QkPosEmbHeadDim => "qk_pos_emb_head_dim", Count, "QK position head dim (MLA)", "64",
            "--qk-pos-emb-head-dim.";
        NumDistributedOptimizerInstances => "num_distributed_optimizer_instances", Count,
            "Distributed optimizer instances", "1", "--num-distributed-optimizer-instances.";
        DeferEmbeddingWgradCompute => "defer_embedding_wgrad_compute", Flag,
            "Defer the output layer's weight gradients", "false", "--defer-embedding-wgrad-compute.";
        WgradDeferralLimit => "wgrad_deferral_limit", Int, "Micro batches deferred", "0 (all)",
            "--wgrad-deferral-limit.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed"] {
        // ---- training memory -------------------------------------------------------------------
        GradientCheckpointing => "gradient_checkpointing", Flag, "Gradient checkpointing", "false",
            "gradient_checkpointing: recompute each layer in the backward pass (keeps only its input).";
    }
    ["first-axolotl"] {
        Adapter => "adapter", Text, "Adapter", "none (full fine-tune)", "adapter: lora or qlora.";
        LoraR => "lora_r", Count, "LoRA rank", "8", "lora_r.";
        LoraTargetModules => "lora_target_modules", Text, "LoRA target modules", "none",
            "lora_target_modules, comma-separated (q_proj, v_proj, …); with lora_target_linear both count.";
        LoraTargetLinear => "lora_target_linear", Flag, "LoRA on all linear layers", "false",
            "lora_target_linear: every linear layer but lm_head.";
        Optimizer => "optimizer", Text, "Optimizer", "adamw_torch_fused",
            "optimizer: AdamW keeps 12 bytes per trained parameter (fp32 master, m, v); 8-bit variants 6.";
    }
    [] {
        Bf16 => "bf16", Text, "bf16", "unset (fp32 master weights)",
            "bf16: true, auto or false.";
    }
    ["first-hf"] {
        Optim => "optim", Text, "Optimizer", "adamw_torch_fused",
            "TrainingArguments.optim: AdamW keeps 12 bytes per trained parameter (fp32 master, m, v); 8-bit variants 6.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed"] {
        ZeroStage => "zero_optimization.stage", Count, "ZeRO stage", "0",
            "DeepSpeed zero_optimization.stage (0–3).";
        OffloadOptimizerDevice => "zero_optimization.offload_optimizer.device", Text, "Offload optimizer to", "none",
            "zero_optimization.offload_optimizer.device: cpu or none.";
        OffloadParamDevice => "zero_optimization.offload_param.device", Text, "Offload parameters to", "none",
            "zero_optimization.offload_param.device (ZeRO-3): cpu or none.";
        ZeroInit => "zero_init", Flag, "zero.Init", "true",
            "Load a ZeRO-3 model under deepspeed.zero.Init (HF and axolotl do).";
    }
    ["first-nanotron"] {
        RecomputeLayer => "recompute_layer", Flag, "Recompute layers", "false",
            "parallelism.recompute_layer: recompute each decoder layer in the backward pass.";
    }
    [] {
        // nanotron's memory settings (the app's alone: [`APP_ONLY`])
        NanotronZeroStage => "zero_stage", Count, "ZeRO stage", "0",
            "optimizer.zero_stage: 0 or 1.";
        AccumulateGradInFp32 => "accumulate_grad_in_fp32", Flag, "Accumulate gradients in fp32", "unset (fp32 master weights)",
            "optimizer.accumulate_grad_in_fp32.";
        TpMode => "tp_mode", Text, "TP mode", "ALL_REDUCE",
            "parallelism.tp_mode.";
        TpLinearAsyncCommunication => "tp_linear_async_communication", Flag, "Async TP communication", "false",
            "parallelism.tp_linear_async_communication.";
        PpEngine => "pp_engine", Text, "Pipeline engine", "afab",
            "parallelism.pp_engine.";
    }
    ["first-torchtitan"] {
        ActivationCheckpointMode => "activation_checkpoint.mode", Text, "Activation checkpointing", "selective",
            "activation_checkpoint.mode: none, selective or full.";
    }
    [] {
        // the step time's and memory's (the app's alone: [`APP_ONLY`])
        CompileEnable => "compile.enable", Flag, "torch.compile", "false",
            "compile.enable.";
        ModelConverters => "model.converters", Text, "Model converters", "none",
            "model.converters: float8 runs the linear layers in FP8.";
        PipelineParallelSchedule => "pipeline_parallel_schedule", Text, "PP schedule", "1F1B",
            "parallelism.pipeline_parallel_schedule.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        // ---- hardware ----------------------------------------------------------------------------
        Gpu => "gpu", Text, "GPU", "none",
            "a100-40gb, a100-80gb, h100-sxm, h100-96gb-500w, h100-pcie, h100-nvl, h200, b200, gb200, mi300x.";
        GpuMemoryGib => "gpu_memory_gib", Real, "Usable GPU memory (GiB)", "the GPU's",
            "Overrides the GPU's usable memory.";
        Mfu => "mfu", Real, "MFU (0–1)", "unset",
            "Model FLOPs utilisation (0–1).";
        IntraNodeGbps => "intra_node_gbps", Real, "Bandwidth in a node (GB/s per GPU)", "the GPU's",
            "One direction (nccl-tests busbw).";
        InterNodeGbps => "inter_node_gbps", Real, "Bandwidth between nodes (GB/s per GPU)", "the GPU's",
            "Its NIC, one direction.";
    }
    ["first-axolotl", "first-hf", "first-deepspeed", "first-megatron", "first-torchtitan", "first-nanotron"] {
        // ---- throughput (dpcalc's own, for time estimates) -----------------------------------
        TokensPerSecondPerGpu => "tokens_per_second_per_gpu", Real, "Tokens per second per GPU", "unset",
            "Measured on this layout.";
        SecondsPerStep => "seconds_per_step", Real, "Seconds per step", "unset",
            "Measured on this layout.";
    }
    [] {
        // ---- the full app's alone ([`APP_ONLY`]): calibration, cost, the scaling view ----------
        CalibrationComputeFactor => "calibration_compute_factor", Real, "Calibration compute factor", "1 (uncalibrated)",
            "0.25–4.";
        CalibrationCommFactor => "calibration_comm_factor", Real, "Communication factor", "1",
            "0.25–4.";
        SecondRunNodes => "second_run_nodes", Count, "Second run: nodes", "unset",
            "For a second measured speed.";
        SecondRunTokensPerSecondPerGpu => "second_run_tokens_per_second_per_gpu", Real, "Second run: tokens/s per GPU", "unset",
            "Measured on second_run_nodes.";
        SecondRunSecondsPerStep => "second_run_seconds_per_step", Real, "Second run: seconds per step", "unset",
            "Measured on second_run_nodes.";
        // ---- cost and the scaling view (dpcalc's own) -----------------------------------------
        GpuHourPrice => "gpu_hour_price", Real, "Price per GPU-hour", "unset",
            "Gives total_cost.";
        DeadlineHours => "deadline_hours", Real, "Deadline (hours)", "unset",
            "For the scaling view.";
        MaxNodes => "max_nodes", Count, "Largest cluster (nodes)", "the link's nodes",
            "For the scaling view (at most 1024).";
    }
}

/// The inputs only the full app reads: the step time's calibration, the cost, the scaling
/// view, and the settings only the memory and the step time read (multi-latent attention's
/// sizes, Megatron's distributed-optimizer instances, deferred output-layer weight gradients,
/// FP8 and pipeline split, the compilers, axolotl's bf16, nanotron's optimizer and TP
/// settings, torchtitan's converters and schedule). A first view neither shows nor reads them
/// (its build holds none of their words, parsing or checks: [`is_app_only`]), and leaves a link
/// that gives one to the app (`src/first.rs`).
pub const APP_ONLY: &[Field] = &[
    Field::CalibrationComputeFactor,
    Field::CalibrationCommFactor,
    Field::SecondRunNodes,
    Field::SecondRunTokensPerSecondPerGpu,
    Field::SecondRunSecondsPerStep,
    Field::GpuHourPrice,
    Field::DeadlineHours,
    Field::MaxNodes,
    // the model's multi-latent attention: its counts and memory are the app's
    Field::MultiLatentAttention,
    Field::QLoraRank,
    Field::KvLoraRank,
    Field::QkNopeHeadDim,
    Field::QkRopeHeadDim,
    Field::QkHeadDim,
    Field::QkPosEmbHeadDim,
    Field::VHeadDim,
    Field::NumDistributedOptimizerInstances,
    Field::DeferEmbeddingWgradCompute,
    Field::WgradDeferralLimit,
    // what only the memory and the step time read: the precision, the compiler, the pipeline's
    // split and schedule, nanotron's optimizer and TP settings
    Field::TorchCompile,
    Field::Fp8Format,
    Field::DecoderFirstPipelineNumLayers,
    Field::DecoderLastPipelineNumLayers,
    Field::AccountForEmbeddingInPipelineSplit,
    Field::AccountForLossInPipelineSplit,
    Field::Bf16,
    Field::NanotronZeroStage,
    Field::AccumulateGradInFp32,
    Field::TpMode,
    Field::TpLinearAsyncCommunication,
    Field::PpEngine,
    Field::CompileEnable,
    Field::ModelConverters,
    Field::PipelineParallelSchedule,
];

/// [`APP_ONLY`] by field index: a lookup the compiler settles where the field is known.
const APP_ONLY_BY_INDEX: [bool; Field::COUNT] = {
    let mut t = [false; Field::COUNT];
    let mut i = 0;
    while i < APP_ONLY.len() {
        t[APP_ONLY[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `f` is one of the inputs only the full app reads ([`APP_ONLY`]).
pub const fn is_app_only(f: Field) -> bool {
    APP_ONLY_BY_INDEX[f as usize]
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

/// The group every framework's form ends with: measured speed, for the time estimates.
pub const THROUGHPUT: (&str, &[Field]) = (
    "GPU and speed (optional)",
    &[
        Field::Gpu,
        Field::GpuMemoryGib,
        Field::Mfu,
        Field::IntraNodeGbps,
        Field::InterNodeGbps,
        Field::TokensPerSecondPerGpu,
        Field::SecondsPerStep,
        Field::CalibrationComputeFactor,
        Field::CalibrationCommFactor,
        Field::SecondRunNodes,
        Field::SecondRunTokensPerSecondPerGpu,
        Field::SecondRunSecondsPerStep,
        Field::GpuHourPrice,
        Field::DeadlineHours,
        Field::MaxNodes,
    ],
);

/// The title of the architecture group (the form folds it away until a value in it is given).
pub const ARCHITECTURE_TITLE: &str = "Architecture (overrides the model's config.json)";

/// config.json's architecture keys, the architecture group of every framework but Megatron
/// (nanotron reads its own two head keys instead of the first two here).
pub const ARCHITECTURE: (&str, &[Field]) = (
    ARCHITECTURE_TITLE,
    &[
        Field::ModelType,
        Field::HiddenSize,
        Field::NumHiddenLayers,
        Field::ModelNumAttentionHeads,
        Field::ModelNumKeyValueHeads,
        Field::HeadDim,
        Field::IntermediateSize,
        Field::VocabSize,
        Field::TieWordEmbeddings,
        Field::AttentionBias,
        Field::NumExperts,
        Field::NumExpertsPerTok,
        Field::MoeIntermediateSize,
        Field::NSharedExperts,
        Field::FirstKDenseReplace,
        Field::QLoraRank,
        Field::KvLoraRank,
        Field::QkNopeHeadDim,
        Field::QkRopeHeadDim,
        Field::VHeadDim,
    ],
);

/// The cluster group every framework's form starts with.
pub const CLUSTER: &[Field] = &[Field::Nodes, Field::GpusPerNode, Field::WorldSize];

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

    /// Whether `field` has a value: text other than blanks (a key given twice with two values
    /// is [`RawInputs::conflict`], not a value).
    pub fn is_given(&self, field: Field) -> bool {
        !self.get(field).trim().is_empty()
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

impl Param<u64> {
    /// A positive count as given, the default when absent (`None`: no default), `None` when 0
    /// or invalid.
    pub fn positive_or(self, default: Option<u64>) -> Option<u64> {
        match self {
            Param::Given(v) if v > 0 => Some(v),
            Param::Absent => default,
            _ => None,
        }
    }
}

impl Field {
    /// The values a key takes from a fixed set, for the form's `<datalist>`: the list's id and
    /// the values (the model presets, the GPUs and the optimizers are the form's own lists). A
    /// first view's build holds no list of the app's own inputs ([`APP_ONLY`]).
    pub fn choices(self) -> Option<(&'static str, &'static [&'static str])> {
        Some(match self {
            Field::Adapter => ("list-adapters", &["lora", "qlora"]),
            #[cfg(not(feature = "first"))]
            Field::Bf16 => ("list-bf16", &["true", "auto", "false"]),
            #[cfg(not(feature = "first"))]
            Field::TpMode => ("list-tp-mode", &["ALL_REDUCE", "REDUCE_SCATTER"]),
            #[cfg(not(feature = "first"))]
            Field::PpEngine => ("list-pp-engine", &["afab", "1f1b"]),
            #[cfg(not(feature = "first"))]
            Field::PipelineParallelSchedule => (
                "list-pp-schedule",
                &[
                    "1F1B",
                    "GPipe",
                    "Interleaved1F1B",
                    "LoopedBFS",
                    "InterleavedZeroBubble",
                    "ZBVZeroBubble",
                    "DualPipeV",
                ],
            ),
            Field::OffloadOptimizerDevice | Field::OffloadParamDevice => {
                ("list-devices", &["none", "cpu", "nvme"])
            }
            Field::RecomputeGranularity => ("list-granularity", &["selective", "full"]),
            Field::RecomputeMethod => ("list-recompute-method", &["uniform", "block"]),
            Field::TransformerImpl => ("list-transformer-impl", &["transformer_engine", "local"]),
            Field::AttentionBackend => (
                "list-attention-backend",
                &["auto", "flash", "fused", "unfused", "local"],
            ),
            Field::Normalization => ("list-normalization", &["LayerNorm", "RMSNorm"]),
            // argparse's choices
            Field::PositionEmbeddingType => (
                "list-position-embedding-type",
                &[
                    "learned_absolute",
                    "rope",
                    "yarn",
                    "mrope",
                    "relative",
                    "none",
                ],
            ),
            Field::ActivationCheckpointMode => (
                "list-ac-mode",
                &["none", "selective", "full", "memory_budget"],
            ),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lookup by index says what the list says, field for field, and an app-only field has
    /// no first view's words (its section is `[]`).
    #[test]
    fn app_only_lookup_is_the_list() {
        for &f in Field::ALL {
            assert_eq!(is_app_only(f), APP_ONLY.contains(&f), "{f:?}");
        }
        for &f in APP_ONLY {
            let (views, _) = SECTIONS
                .iter()
                .find(|(_, fields)| fields.contains(&f))
                .expect("declared");
            assert!(views.is_empty(), "{f:?} has a first view's words");
        }
    }
}
