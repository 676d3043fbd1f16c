//! The resolved plan: every value the stages after a framework's rules need, typed, as the
//! framework resolved it. The rules fill [`Report::plan`](super::Report) beside the grid
//! ([`super::Grid`]): the batch stage publishes the batch ([`Plan::micro_batch`] …), and the
//! framework's model-stage settings reader (`Spec::fit.settings`, in its folder) publishes
//! [`Settings`]. The model stage (`fit/`), tokens and time (`schedule.rs`), the GPU map
//! (`mesh.rs`), the layout explorer and the planner read these values and never the typed text.
//!
//! This module is vocabulary: plain data, no reading and no arithmetic.

use super::field::Param;
use super::model::Model;

/// What the rules resolved beyond the grid. `None`: the rules did not get that far (or the
/// framework has no such value).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Samples per GPU per forward pass (one micro step of one pipeline micro batch).
    pub micro_batch: Option<u64>,
    /// Micro batches per optimizer step on each data-parallel replica (gradient accumulation,
    /// or Megatron's `num_microbatches`), pipeline micro batches included.
    pub accumulation: Option<u64>,
    /// Samples per optimizer step, all replicas.
    pub global_batch: Option<u64>,
    /// Tokens per sample the framework trains on: its key, or its default when absent.
    pub seq_len: Option<u64>,
    /// The training rows (`num_samples`) and epochs as the rules read them (`None`: not given,
    /// unreadable, or the framework has no such key; a default the canonical link leaves out,
    /// axolotl's `num_epochs` 1, counts as given, so a link and its canonical form agree): what
    /// the compare view carries across.
    pub rows: Option<u64>,
    pub epochs: Option<f64>,
    /// How the world's GPUs sit on nodes, decided once ([`NodeShape`]; `None`: no valid world
    /// size). DeepSpeed's ZeRO estimators, the step time's network, the GPU map and the
    /// explorer's and planner's rows all read this one value.
    pub node_shape: Option<NodeShape>,
    /// The pipeline as the framework runs it (`None`: no pipeline parallelism, or the rules did
    /// not get that far; a PP size above 1 without it is read as plain 1F1B, layers split evenly).
    pub pipeline: Option<Pipeline>,
    /// The model stage's settings (read once per edit, after the rules).
    pub settings: Settings,
}

impl Plan {
    /// The batch as the framework's batch stage resolved it (a size that does not fit 64 bits
    /// is left out: nothing after the rules counts beyond it).
    pub fn publish_batch(&mut self, micro: u128, accumulation: u128, global: u128) {
        self.micro_batch = u64::try_from(micro).ok().filter(|&m| m > 0);
        self.accumulation = u64::try_from(accumulation).ok().filter(|&a| a > 0);
        self.global_batch = u64::try_from(global).ok().filter(|&g| g > 0);
    }
}

/// The node shape of a world: `nodes × gpus_per_node = world_size`, decided once by
/// `cluster::world_size` from what was typed (`cluster::node_shape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeShape {
    pub nodes: u64,
    pub gpus_per_node: u64,
    /// The link gives a `world_size` and no side of the shape that makes it: dpcalc assumed
    /// this one, and the page, the GPU map and `dpcalc check` say so.
    pub assumed: bool,
}

/// How far the framework fuses the memory-bound kernels between its matrix products: what the
/// step time counts of their bytes per layer (`estimate/time.rs`, `layer_traffic`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fusion {
    /// Eager PyTorch: each operation its own kernel, norms and the loss upcast to fp32
    /// (torchtitan without `compile.enable`, the HF Trainer and its kin, llm-foundry).
    Eager,
    /// `torch.compile` (Inductor): each chain of element-wise operations and norms between two
    /// matrix products one kernel (torchtitan's `compile.enable`).
    Compiled,
    /// Fused kernels written for it: Megatron-LM's (Transformer Engine's, or Apex's and its own
    /// fused bias-GeLU and bias-dropout-add with the local implementation), and nanotron's.
    #[default]
    Fused,
}

/// FP8 matrix products: the linear layers of the transformer layers (not the attention, not the
/// output layer, which the frameworks keep in 16 bits) at the GPU's FP8 rate, their inputs and
/// output gradients cast to FP8 with their scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp8 {
    /// Dynamic tensorwise scaling (torchao's `Float8Linear`, torchtitan's float8 converter):
    /// each cast reads its tensor for the amax first.
    Tensorwise,
    /// Delayed scaling from an amax history (Transformer Engine's default recipe, Megatron-LM's
    /// `--fp8-format`): no separate amax read.
    Delayed,
}

/// Activation recomputation, from the most memory to the least.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Recompute {
    #[default]
    None,
    /// Korthikanti's selective recompute: the attention core (scores, softmax, dropout).
    Selective,
    /// Every layer recomputed from its input.
    Full,
}

/// How a pipeline runs the micro batches of one step, which decides how many micro batches'
/// activations each stage holds at its peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One forward, one backward after a warm-up (PipeDream-Flush, Narayanan et al. 2021 §2.2):
    /// stage i of p holds at most p − i micro batches (Megatron-LM without interleaving,
    /// torchtitan's `1F1B`, nanotron's `1f1b`, DeepSpeed's `TrainSchedule`).
    OneFOneB,
    /// Interleaved 1F1B over [`Pipeline::virtual_stages`] model chunks per rank (Narayanan et
    /// al. 2021 §2.2.2); `group` is Megatron's `microbatch_group_size_per_vp_stage` (the PP size
    /// unless set): the micro batches each chunk runs before the next chunk starts.
    Interleaved { group: u64 },
    /// Every forward, then every backward (GPipe; nanotron's `afab`, torchtitan's `GPipe`):
    /// every stage holds all its micro batches. Over several model chunks per rank, each chunk
    /// runs all its micro batches before the next (torchtitan's `LoopedBFS`).
    AllForwardAllBackward,
    /// The zero-bubble schedules, whose backward is split into the input's and the weights'
    /// gradients so that the weights' fill the pipeline's idle slots (Qi et al. 2024, "Zero
    /// Bubble Pipeline Parallelism", arXiv 2401.10241: ZB-V, and the interleaved and DualPipe-V
    /// variants of torch.distributed.pipelining): no bubble in the step time (planner notes
    /// §4.3, unverified per framework); in memory, the micro batches of interleaved 1F1B (ZB-V's
    /// peak equals 1F1B's, the paper's Table 1).
    ZeroBubble,
}

/// The pipeline as the framework resolved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub schedule: Schedule,
    /// Model chunks per pipeline rank (1 without interleaving).
    pub virtual_stages: u64,
    /// Transformer layers of each virtual stage, in model order: entry `c·p + r` is chunk c of
    /// rank r (p ranks). Empty: the layers split evenly.
    pub layers: Vec<u64>,
}

/// How full recompute chooses its layers (Megatron's `--recompute-method`); other frameworks
/// checkpoint every layer ([`RecomputeLayers::Every`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecomputeLayers {
    /// Every transformer layer keeps only its input.
    #[default]
    Every,
    /// Megatron's `uniform`: groups of n layers, each keeping only the group's input.
    Uniform(u64),
    /// Megatron's `block`: the first n layers of each pipeline stage (chunk) keep only their
    /// input; the others keep everything.
    Block(u64),
}

/// How Megatron-LM places transformer layers on pipeline stages beyond the even split:
/// `--decoder-first-pipeline-num-layers`, `--decoder-last-pipeline-num-layers`,
/// `--account-for-embedding-in-pipeline-split` and `--account-for-loss-in-pipeline-split`
/// (`get_num_layers_to_build` in megatron/core/transformer/transformer_block.py). The default is
/// the even split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineSplit {
    pub first: Option<u64>,
    pub last: Option<u64>,
    pub embedding: bool,
    pub loss: bool,
}

/// What differs between frameworks' memory at the same layout: the precision of the gradients
/// and the parameters, dropout, and what the loss keeps per logit. Each framework sets its own
/// (`Spec::fit.settings`, in its folder); the model stage's memory estimate reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conventions {
    /// Gradients accumulate in fp32 (Megatron-LM's `main_grad` buffers, with or without the
    /// distributed optimizer; FSDP2's fp32 sharded gradients).
    pub fp32_grads: bool,
    /// The parameters are kept in fp32 and are the optimizer's master weights (FSDP2's mixed
    /// precision: 16-bit only while gathered for compute).
    pub fp32_params: bool,
    /// Dropout is on (Megatron-LM's default 0.1 hidden and attention dropout): 1-byte masks.
    pub dropout: bool,
    /// Bytes per logit the loss keeps for its backward, per micro batch in flight (4: the fp32
    /// softmax or `log_softmax` output).
    pub logit_saved_bytes: u64,
    /// Bytes per logit alive only while the loss is computed (the 16-bit logits, 2, plus a
    /// framework's fp32 copy of them before `cross_entropy`, 4).
    pub logit_transient_bytes: u64,
    /// Bytes per logit the caching allocator keeps reserved beside the allocated peak: a block
    /// freed before the loss's backward that its larger requests cannot reuse (torchtitan: the
    /// 16-bit logits, 2; the allocator serves a request only from a cached block at least its
    /// size, `get_free_block` in `c10/cuda/CUDACachingAllocator.cpp`).
    pub logit_reserved_bytes: u64,
    /// FSDP2 gathers each unit's 16-bit parameters into one buffer on its own stream
    /// (`foreach_all_gather`, `all_gather_copy_in` on `all_gather_copy_in_stream`,
    /// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py); the allocator caches blocks per
    /// stream, so the largest unit's buffer stays reserved beside the compute stream's.
    pub fsdp_gather_stream: bool,
    /// Under pipeline parallelism (PP > 1, ZeRO-3-like sharding over any number of GPUs) FSDP2
    /// keeps, beside the sharded states, each stage's parameters gathered in 16 bits from the
    /// first forward to the gradient reduction after the last backward, and their gradients
    /// unsharded, accumulated in the reduce dtype over the micro batches (fp32 with
    /// [`Conventions::fp32_grads`]): torchtitan applies FSDP2 with `reshard_after_forward=False`
    /// under PP, and torch.distributed.pipelining turns gradient sync off for every backward but
    /// the last (counted in `estimate/stages.rs`, `pipeline_fsdp_kept`).
    pub fsdp_pipeline_keeps: bool,
    /// Without pipeline parallelism FSDP2 keeps the final norm and the output layer (the tied
    /// embedding's weight when tied) gathered in 16 bits from their forward through the loss to
    /// their backward, so beside the loss's logits at the peak: torchtitan 0.3.0 shards them as
    /// one unit with `reshard_after_forward` only under the "always" policy (counted in the
    /// weights in `estimate/stages.rs`, `fsdp_output_kept`).
    pub fsdp_output_kept: bool,
    /// Tensor parallelism by DTensor plans (torchtitan's `apply_tp`: `ColwiseParallel`,
    /// `RowwiseParallel`, `SequenceParallel`): with sequence parallelism each column-parallel
    /// linear layer saves the all-gathered (whole) input it multiplies, and the step time moves
    /// each `Shard(1)` collective's whole tensor once more (torch
    /// `distributed/_functional_collectives.py`: `all_gather_tensor` with `gather_dim != 0` runs
    /// `torch.cat(torch.chunk(res, group_size, dim=0), dim=gather_dim)`, and
    /// `reduce_scatter_tensor` with `scatter_dim != 0` `torch.cat`s its chunks first).
    pub dtensor_tp: bool,
    /// Bytes per logit alive while the loss's backward runs under loss parallelism (TP > 1;
    /// 0: the loss is not parallel, [`Conventions::logit_transient_bytes`] holds).
    pub loss_parallel_transient_bytes: u64,
    /// An MoE layer's routed experts save what Megatron-LM's allgather token dispatcher and its
    /// experts save (`estimate/stages.rs`, `megatron_routed`); otherwise per routed token the
    /// dispatched input, the combined output and the experts' projections.
    pub moe_allgather: bool,
}

impl Default for Conventions {
    fn default() -> Conventions {
        Conventions::DEFAULT
    }
}

impl Conventions {
    /// Mixed precision as the ZeRO paper counts it (16-bit gradients), no dropout, and
    /// transformers' loss: 16-bit logits, their fp32 copy and the fp32 `log_softmax` it keeps.
    /// A framework's constant names what it changes and takes the rest from here.
    pub const DEFAULT: Conventions = Conventions {
        fp32_grads: false,
        fp32_params: false,
        dropout: false,
        logit_saved_bytes: 4,
        logit_transient_bytes: 6,
        logit_reserved_bytes: 0,
        fsdp_gather_stream: false,
        fsdp_pipeline_keeps: false,
        fsdp_output_kept: false,
        dtensor_tp: false,
        loss_parallel_transient_bytes: 0,
        moe_allgather: false,
    };
}

/// What the framework overlaps with compute (the step-time estimate, `estimate/time.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlap {
    /// The data-parallel gradient reduction runs during the backward (DDP's buckets, FSDP,
    /// Megatron's `--overlap-grad-reduce`).
    pub grad_reduce: bool,
    /// The sharded optimizer's parameter all-gather runs during the forward (Megatron's
    /// `--overlap-param-gather`; ZeRO-3 and FSDP prefetch the next layer's parameters).
    pub param_gather: bool,
    /// Tensor-parallel communication overlapped with the matrix products (Megatron's
    /// `--tp-comm-overlap`, torchtitan's async TP).
    pub tp: bool,
    /// Megatron-LM's interleaved schedule syncs each model chunk on its own, aligned across the
    /// pipeline ranks (`--align-grad-reduce` and `--align-param-gather`, both on by default):
    /// a chunk's gradient reduction starts after its last micro batch's backward and runs
    /// beside the backward of the chunks after it; the first two chunks' parameters are
    /// gathered at the start of the step and every later chunk's one chunk ahead of its first
    /// forward (megatron-core `pipeline_parallel/schedules.py`,
    /// `forward_backward_pipelining_with_interleaving`: `grad_sync_func` and `param_sync_func`
    /// per chunk, l.621-623, 676-686 and 750-758 at f2e5db402c; the defaults from
    /// `training/config/common_config.py` `align_grad_reduce` and `arguments.py`
    /// `--no-align-param-gather` at d98e8a64dd, 2026).
    pub per_chunk: bool,
}

/// DeepSpeed's `zero_optimization` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zero {
    pub stage: u64,
    pub offload_optimizer: bool,
    pub offload_param: bool,
    pub zero_init: bool,
}

/// Which ranks an FSDP shard group spans in the explorer's other layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsdpRows {
    /// The layout keeps the data-parallel replicas (`dp ÷ replicas` shards: torchtitan's
    /// `data_parallel_shard_degree = -1`).
    KeepReplicas,
    /// The layout's `dp_shard_size` is dp ÷ ep under expert parallelism, the typed one otherwise
    /// (axolotl).
    ExpertsSplit,
}

/// How the model states are sharded, as the framework resolved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharding {
    /// Every data-parallel rank holds all its model states; `words` says how the framework
    /// calls it (DDP, ZeRO stage 0, a replicated optimizer).
    Replicated { words: &'static str },
    /// DeepSpeed's ZeRO over the data-parallel ranks.
    Zero(Zero),
    /// FSDP over `dp_shard × cp` (`dp_shard`: `None` = all of dp), full shard when
    /// `reshard_after_forward`, else `SHARD_GRAD_OP`; `offload`: parameters, gradients and
    /// optimizer states on the CPU.
    Fsdp {
        /// "FSDP" or "FSDP2".
        name: &'static str,
        dp_shard: Option<u64>,
        reshard_after_forward: bool,
        offload: bool,
        rows: FsdpRows,
    },
    /// Megatron's distributed optimizer: optimizer states over dp × cp, or over its share of
    /// them with several instances (`--num-distributed-optimizer-instances`: each instance
    /// shards over `intra_partial_data_parallel_size = dp × cp ÷ instances`,
    /// `initialize_model_parallel` in megatron/core/parallel_state.py at 0.19.2, whose group the
    /// DDP buffers and the optimizer use: `intra_dp_cp_group`, distributed_data_parallel.py).
    DistributedOptimizer { instances: u64 },
}

/// LoRA's settings (axolotl).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lora {
    pub r: u64,
    /// `lora_target_linear`.
    pub linear: bool,
    /// `adapter: qlora` (a 4-bit base).
    pub qlora: bool,
    /// `lora_target_modules`.
    pub modules: Vec<String>,
}

/// Which requests Megatron-LM's persistent global memory buffer serves
/// (`parallel_state.get_global_memory_buffer()`, a `GlobalMemoryBuffer`, megatron/core/utils.py at
/// 6e091e1b68: one tensor per name and dtype, kept for the run and replaced by a larger one when
/// a request outgrows it, so it holds the largest request): see
/// [`crate::calc::estimate::Setup::global_buffer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GlobalBuffer {
    /// Not Megatron-LM: no such buffer.
    #[default]
    None,
    /// Transformer Engine's layers (`--transformer-impl transformer_engine`), which gather and
    /// attend in their own buffers: only Megatron's own output layer (`tensor_parallel.
    /// ColumnParallelLinear`) and the MoE allgather dispatcher request it.
    TransformerEngine,
    /// `--transformer-impl local`: also every layer's core attention (`DotProductAttention`) and
    /// column-parallel linears.
    Local,
}

/// The model the link names, as read (a preset overridden key by key, or typed).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedModel {
    pub model: Model,
}

/// The GPU group: the GPU, its memory and an MFU, as typed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuSettings {
    /// The GPU named (its hardware figures for the step-time estimate).
    pub gpu: Option<&'static super::gpu::Gpu>,
    /// A GPU's bandwidth inside its node and to other nodes, GB/s, as typed (`None`: the GPU's
    /// defaults).
    pub intra_gbps: Option<f64>,
    pub inter_gbps: Option<f64>,
    /// The GPU's dense BF16 peak, TFLOP/s, and its name.
    pub peak: Option<(u64, &'static str)>,
    /// The GPU's memory, bytes: `gpu_memory_gib` when typed, else the GPU's nominal memory
    /// (`gpu_memory_bytes`).
    pub memory_bytes: Option<u128>,
    /// `gpu_memory_gib` was typed: `memory_bytes` is what the user's driver leaves usable.
    pub memory_typed: bool,
    pub mfu: Option<f64>,
}

/// The compute and communication factors the step time accepts (`calibration_compute_factor`,
/// `calibration_comm_factor`): beyond 4× slower or
/// faster than the mechanism estimate, the measured run is not the link's setup, and no factor on
/// the compute can say what differs.
pub const CALIBRATION_BOUNDS: (f64, f64) = (0.25, 4.0);

/// A factor beyond ±25 % (E2 of the step-time notes): calibrated, but said to point to a
/// misdescribed setup (another GPU variant, a power cap, another attention kernel).
pub const CALIBRATION_PLAUSIBLE: f64 = 0.25;

/// What the model, memory and compute stage reads, as the framework resolved it.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `None`: no model named or typed, or what was typed is incomplete (said at its field).
    pub model: Option<NamedModel>,
    pub sharding: Sharding,
    pub recompute: Recompute,
    /// Which layers full recompute checkpoints.
    pub recompute_layers: RecomputeLayers,
    /// The framework's memory conventions.
    pub memory: Conventions,
    /// Flash, SDPA or flex attention (no materialised scores); `false`: eager.
    pub flash_attention: bool,
    /// The fused attention of cuDNN (Transformer Engine's) rather than FlashAttention-2.
    pub fused_attention: bool,
    /// How far the memory-bound kernels are fused.
    pub fusion: Fusion,
    /// FP8 matrix products (`None`: 16-bit).
    pub fp8: Option<Fp8>,
    /// Megatron's `--defer-embedding-wgrad-compute` with `--wgrad-deferral-limit` (0: every
    /// micro batch): see [`crate::calc::estimate::Setup::deferred_output_wgrad`].
    pub deferred_output_wgrad: Option<u64>,
    /// Megatron-LM's persistent global memory buffer: see
    /// [`crate::calc::estimate::Setup::global_buffer`].
    pub global_buffer: GlobalBuffer,
    /// Selective recompute also runs every other matrix product's forward again (torchtitan's
    /// per-op checkpointing, which saves every other `mm`); `false`: Korthikanti et al.'s, which
    /// recomputes the attention only.
    pub selective_half_matmuls: bool,
    pub lora: Option<Lora>,
    /// Optimizer state bytes per trained parameter (fp32 master weights and the states).
    pub optimizer_bytes_per_param: u64,
    /// A bitsandbytes 8-bit optimizer: its block-wise states add two fp32 absmax per 256
    /// parameters.
    pub optimizer_8bit: bool,
    /// Megatron-style sequence parallelism (with TP > 1).
    pub sequence_parallel: bool,
    /// Megatron's `--expert-tensor-parallel-size` (`None`: the TP size).
    pub expert_tp: Option<u64>,
    /// Megatron's `--make-vocab-size-divisible-by` (128 elsewhere: the FLOPs conventions).
    pub vocab_divisible: u64,
    /// Megatron's full recompute without its `--recompute-method` (refused at model build).
    pub recompute_method_missing: bool,
    /// Megatron's uneven or accounted pipeline split (the even split by default).
    pub pipeline_split: PipelineSplit,
    pub gpu: GpuSettings,
    /// What the framework overlaps with compute (by default: the gradient reduction of DDP and
    /// FSDP, FSDP's and ZeRO-3's parameter prefetch).
    pub overlap: Overlap,
    /// Whether the model has routed experts (the explorer offers expert parallelism then).
    pub has_experts: bool,
    /// The measured throughput, as typed (a measurement wins over the estimate).
    pub tokens_per_second_per_gpu: Param<f64>,
    pub seconds_per_step: Param<f64>,
    /// The step time's compute factor as typed (`calibration_compute_factor`, within
    /// [`CALIBRATION_BOUNDS`]; `None`: not typed, or refused at its field).
    pub calibration_compute_factor: Option<f64>,
    /// The step time's communication factor as typed (`calibration_comm_factor`, within
    /// [`CALIBRATION_BOUNDS`]; `None`: not typed, or refused at its field).
    pub calibration_comm_factor: Option<f64>,
    /// The node count of a second measured run of the same inputs (`second_run_nodes`), whose
    /// speed (`second_run_tokens_per_second_per_gpu` or `second_run_seconds_per_step`) is that
    /// run's report's `tokens_per_second_per_gpu` / `seconds_per_step` (`Framework::compute`).
    pub second_run_nodes: Param<u64>,
    /// What one GPU-hour costs (`gpu_hour_price`: the run's `total_cost`).
    pub gpu_hour_price: Param<f64>,
    /// The scaling view's deadline in hours (more than 0) and its largest size in nodes (1 to
    /// 1024), as read.
    pub deadline_hours: Param<f64>,
    pub max_nodes: Param<u64>,
    /// Whether the settings could be read (an unreadable one is said at its field and the
    /// estimate that needs it is left out).
    pub readable: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            model: None,
            sharding: Sharding::Replicated {
                words: "replicated (DDP)",
            },
            recompute: Recompute::None,
            recompute_layers: RecomputeLayers::Every,
            memory: Conventions::default(),
            flash_attention: true,
            fused_attention: false,
            fusion: Fusion::Fused,
            fp8: None,
            deferred_output_wgrad: None,
            global_buffer: GlobalBuffer::None,
            selective_half_matmuls: false,
            lora: None,
            optimizer_bytes_per_param: 12,
            optimizer_8bit: false,
            sequence_parallel: false,
            expert_tp: None,
            vocab_divisible: 128,
            recompute_method_missing: false,
            pipeline_split: PipelineSplit::default(),
            gpu: GpuSettings::default(),
            overlap: Overlap {
                grad_reduce: true,
                param_gather: true,
                tp: false,
                per_chunk: false,
            },
            has_experts: false,
            tokens_per_second_per_gpu: Param::Absent,
            seconds_per_step: Param::Absent,
            calibration_compute_factor: None,
            calibration_comm_factor: None,
            second_run_nodes: Param::Absent,
            gpu_hour_price: Param::Absent,
            deadline_hours: Param::Absent,
            max_nodes: Param::Absent,
            readable: true,
        }
    }
}
