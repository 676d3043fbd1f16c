//! The time of one optimizer step on one layout: a mechanism estimate, not a measurement.
//!
//! [`step_time`] adds, for the slowest pipeline rank, what one GPU does in a step:
//!
//! - **Compute**: the hardware FLOPs of its layers for each micro batch (linear layers 2 FLOPs
//!   per weight per token, the routed experts at top-k of E; causal attention's two products
//!   2·2·d·s/2 per token and head; the output layer on the last rank), forward once, backward
//!   twice, plus the recomputed forward (full recompute: the checkpointed layers again;
//!   selective: the attention products again), at the GPU's dense peak × its best achievable
//!   matmul fraction ([`Hardware::matmul_ceiling`], measured MAMF) × [`KERNEL_EFFICIENCY`] (the
//!   one constant fitted, on the calibration tables), slowed for small matrix products
//!   ([`size_factor`]). The optimizer step reads and writes its states at the memory bandwidth.
//! - **Tensor parallelism** (Narayanan et al. 2021 §3.2; Korthikanti et al. 2022 §4.2.2): two
//!   all-reduces of b·s·h in the forward and two in the backward per layer and micro batch (with
//!   sequence parallelism an all-gather and a reduce-scatter each, the same time), two more for a
//!   fully recomputed forward; on the critical path.
//! - **Context parallelism**: the K/V chunks passed around the ring, cp − 1 steps per layer
//!   forward and twice that backward, hidden behind the attention products it overlaps
//!   (only the excess counts).
//! - **Expert parallelism**: an all-to-all to dispatch and one to combine per MoE layer in the
//!   forward, the same in the backward (and again for a recomputed forward), each of the routed
//!   tokens' b·s·k·h.
//! - **Pipeline**: the bubble of (p − 1)/v micro batches of the slowest rank (Narayanan et al.
//!   2021 §2.2: 1F1B and GPipe (p − 1), interleaved (p − 1)/v; a breadth-first loop over v
//!   chunks the same (p − 1)/v), none for the zero-bubble schedules ([`Schedule::ZeroBubble`]),
//!   and the point-to-point sends of each micro batch's activation between ranks.
//! - **Data parallelism**: the gradients reduced over the data-parallel ranks (all-reduce, or a
//!   reduce-scatter and an all-gather of the parameters when the optimizer is sharded), once a
//!   step; ZeRO-3 and FSDP gather the parameters in the forward and the backward and
//!   reduce-scatter the gradients at every micro batch. Where the framework overlaps them with
//!   the backward ([`Overlap`]), only what exceeds the last micro batch's backward is exposed;
//!   overlapped communication still takes [`COMM_SM_SHARE`] of the compute it hides behind.
//!
//! Collectives follow NCCL's bus-bandwidth convention (nccl-tests `doc/PERFORMANCE.md`):
//! all-reduce moves 2(n − 1)/n of the tensor over the slowest link, all-gather, reduce-scatter
//! and all-to-all (n − 1)/n, plus a latency per ring step. A group inside one node runs on
//! NVLink; a group across nodes runs at the NICs of its members in each node (NCCL's rings use
//! every NIC the group has in a node; Bekman's worked example in stas00/ml-engineering
//! network/README.md). Which ranks share a node follows the framework's mesh order
//! ([`Placement`]).

use super::{cdiv, Params, Partition, Setup};
use crate::calc::estimated::StepTime;
use crate::calc::model::Model;
use crate::calc::plan::{Fp8, Fusion, Recompute, RecomputeLayers, Schedule};

pub use crate::calc::plan::Overlap;

/// Fitted constant 1 of 2: the fraction of the GPU's best matmul rate (its MAMF) a wide
/// transformer layer's matrix products run at. Fitted with [`HALF_RATE_WIDTH`] on the
/// calibration tables only (Narayanan et al. 2021 Table 1, Korthikanti et al. 2022 Table 5: a
/// grid over 0.7–1.0 × 100–600, the least median error, 3.9 %; tests/measured_throughput.rs),
/// before the memory-bound bytes by fusion level and the STREAM share, which took the two
/// tables to 2.6 % and 3.6 % without fitting again.
pub const KERNEL_EFFICIENCY: f64 = 0.90;

/// The share of the SMs an overlapped collective takes from the compute it runs beside
/// (Calculon's `processor_usage`, systems/a100_80g.json: 0.15).
pub const COMM_SM_SHARE: f64 = 0.15;

/// Fitted constant 2 of 2: the width of a matrix product's narrowest side (the hidden size's
/// TP shard, or the micro batch's tokens on the GPU when fewer) at which it runs at half the
/// rate of a wide one (fitted with [`KERNEL_EFFICIENCY`]).
pub const HALF_RATE_WIDTH: f64 = 100.0;

/// The best FP8 matmul rate as a fraction of the dense FP8 peak: cuBLASLt FP8 at 8192³ on an
/// H100 SXM, 1,290 of 1,979 TFLOP/s (samuel-bohman/AI-benchmarking-guide
/// `Azure_Results/ND_H100_v5_results.md`; 1,217 at 4096³, 1,377 at 16384³), against BF16's
/// 80 % (MAMF); taken for every GPU with FP8.
pub const FP8_MATMUL_CEILING: f64 = 0.652;

/// Bytes an FP8 recipe moves per value it casts (an input of a linear layer in the forward, an
/// output gradient in the backward): read 2 and write 1 for the cast, read 1 and write 1 for the
/// transposed copy Hopper's FP8 products need for the other gradient, and for dynamic
/// tensorwise scaling a read of 2 for the amax first (torchao `float8/README.md`: the overhead is
/// "bounded by memory bandwidth"): tensorwise 7, delayed (Transformer Engine's amax history) 5.
/// The weights are cast once per micro batch the same way.
pub const FP8_CAST_BYTES: [f64; 2] = [7.0, 5.0];

/// Flash attention's backward as a multiple of its forward's FLOPs, in the convention of the
/// kernel measurements the attention rates come from: FlashAttention's benchmark `flops`
/// (Dao-AILab/flash-attention `benchmarks/benchmark_flash_attention.py`, copied by
/// NVIDIA/cudnn-frontend `benchmark/benchmark_flash_attention.py`) counts the backward as 2.5
/// forwards (its five products to the forward's two: S and P recomputed), so a forward and
/// backward "at R TFLOP/s" takes 3.5 forwards' FLOPs ÷ R. Eager attention's backward is two
/// forwards (its four products).
pub const FLASH_BACKWARD_PASSES: f64 = 2.5;

/// Bytes an AdamW step reads and writes per parameter it updates: fp32 master weight, m and v
/// read and written, the gradient read, the 16-bit weight written.
pub const OPTIMIZER_BYTES_PER_PARAM: f64 = 30.0;

/// What the GPU and its network can do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hardware {
    /// Dense BF16 peak, FLOP/s.
    pub peak_flops: f64,
    /// The best matmul rate as a fraction of the peak (MAMF).
    pub matmul_ceiling: f64,
    /// Memory bandwidth, bytes/s.
    pub memory_bytes_per_s: f64,
    /// Flash attention's forward and backward rate, FLOP/s (the kernel the framework calls).
    pub attention_flops_per_s: f64,
    /// The best FP8 matmul rate, FLOP/s: the dense FP8 peak × [`FP8_MATMUL_CEILING`] (0: no FP8,
    /// FP8 products run at the 16-bit rate).
    pub fp8_flops_per_s: f64,
    /// A GPU's bus bandwidth inside its node, bytes/s (one direction, as nccl-tests' busbw).
    pub intra_bytes_per_s: f64,
    /// A GPU's network bandwidth to other nodes (its NIC), bytes/s.
    pub inter_bytes_per_s: f64,
    /// Latency per ring step inside a node and across nodes, seconds.
    pub intra_latency: f64,
    pub inter_latency: f64,
}

/// How the ranks of each parallel group sit on the nodes: the stride of each dimension in the
/// framework's rank mesh (the product of the sizes of the dimensions that vary faster) and the
/// GPUs per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub gpus_per_node: u64,
    pub tp_stride: u64,
    pub cp_stride: u64,
    pub dp_stride: u64,
    pub pp_stride: u64,
    pub ep_stride: u64,
}

/// A group of `n` ranks `stride` apart: its members per node and its nodes.
fn spread(n: u64, stride: u64, gpus_per_node: u64) -> (u64, u64) {
    let g = gpus_per_node.max(1);
    let stride = stride.max(1);
    if stride.saturating_mul(n) <= g {
        (n, 1)
    } else if stride >= g {
        (1, n)
    } else {
        let inside = (g / stride).clamp(1, n);
        (inside, n.div_ceil(inside))
    }
}

/// The matmul size factor: `d / (d + D₀)` of the products' narrowest side `d`
/// ([`HALF_RATE_WIDTH`]).
pub fn size_factor(d: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    d / (d + HALF_RATE_WIDTH)
}

/// A collective's time: `factor` × bytes over the group's bandwidth, plus a latency per step.
struct Net<'a> {
    hw: &'a Hardware,
    gpn: u64,
}

#[derive(Clone, Copy)]
enum Coll {
    AllReduce,
    /// All-gather or reduce-scatter.
    Gather,
    AllToAll,
    /// A point-to-point send to the neighbour.
    P2p,
}

impl Net<'_> {
    /// Seconds for a collective of `bytes` (the whole tensor; for a send, what is sent) over `n`
    /// ranks `stride` apart.
    fn time(&self, kind: Coll, bytes: f64, n: u64, stride: u64) -> f64 {
        if n <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let (inside, nodes) = spread(n, stride, self.gpn);
        let hw = self.hw;
        let nf = n as f64;
        let (bw, latency) = if nodes == 1 {
            (hw.intra_bytes_per_s, hw.intra_latency)
        } else {
            match kind {
                // every NIC of the group's members in a node carries its share
                Coll::AllReduce | Coll::Gather => (
                    (inside as f64 * hw.inter_bytes_per_s).min(hw.intra_bytes_per_s),
                    hw.inter_latency,
                ),
                // each rank sends over its own NIC
                Coll::AllToAll | Coll::P2p => (hw.inter_bytes_per_s, hw.inter_latency),
            }
        };
        let (factor, steps) = match kind {
            Coll::AllReduce => (2.0 * (nf - 1.0) / nf, 2.0 * (nf - 1.0)),
            Coll::Gather => ((nf - 1.0) / nf, nf - 1.0),
            Coll::AllToAll => ((nf - 1.0) / nf, nf - 1.0),
            Coll::P2p => (1.0, 1.0),
        };
        // across nodes NCCL's all-reduce runs as a tree for the latency (2·log2 steps); its
        // all-gather and reduce-scatter stay rings
        let steps = if nodes > 1 && matches!(kind, Coll::AllReduce) {
            steps.min(2.0 * (nf.log2().ceil() + inside as f64))
        } else {
            steps
        };
        factor * bytes / bw + steps * latency
    }
}

/// One rank's work per micro batch: FLOPs, the attention products among them, and its layers.
#[derive(Default)]
struct Rank {
    flops: f64,
    attention_flops: f64,
    /// Bytes the memory-bound kernels move in one forward (norms, residual adds, dropout, the
    /// MLP's activation, eager attention's scores), and those of the attention scores alone.
    bytes: f64,
    score_bytes: f64,
    /// Bytes the loss over the vocabulary moves, forward and backward (the last rank's).
    loss_bytes: f64,
    /// The output layer's FLOPs (the last rank's; kept in 16 bits under FP8).
    output_flops: f64,
    /// Bytes FP8's casts move per micro batch (inputs, output gradients, weights).
    cast_bytes: f64,
    /// Transformer layers and MoE layers on the rank (all chunks).
    layers: u64,
    moe_layers: u64,
    /// Parameters the rank holds, dense (÷ TP) and routed (÷ ETP·EP).
    dense_params: f64,
    routed_params: f64,
    /// Of `dense_params`, the embedding's (the first rank's, in its first chunk) and the
    /// output layer's (the last rank's, in its last chunk).
    embedding_params: f64,
    output_params: f64,
    /// Layers whose forward full recompute runs again.
    recomputed: u64,
}

/// One layer's work per micro batch on its rank: its FLOPs per token (all, attention), its
/// memory-bound bytes (all, attention scores), whether it is an MoE layer, its parameters (all,
/// routed experts).
#[derive(Clone, Copy)]
struct LayerWork {
    flops: (f64, f64),
    /// FP8's cast bytes of the layer per micro batch (0 in 16 bits).
    cast: f64,
    traffic: (f64, f64),
    moe: bool,
    params: (u128, u128),
}

impl Rank {
    /// `count` alike layers of `work`, `recomputed` of them run again by full recompute.
    fn add(&mut self, work: LayerWork, count: u64, recomputed: u64, s: &Shape, plan: &Setup) {
        let ((f, a), (bytes, scores), (all, routed)) = (work.flops, work.traffic, work.params);
        let n = count as f64;
        self.flops += f * s.tokens * n;
        self.attention_flops += a * s.tokens * n;
        self.bytes += bytes * n;
        self.cast_bytes += work.cast * n;
        self.score_bytes += scores * n;
        self.layers += count;
        if work.moe {
            self.moe_layers += count;
        }
        self.dense_params += all.saturating_sub(routed) as f64 / s.tp * n;
        self.routed_params += routed as f64 / (plan.expert_tp() * plan.ep) as f64 * n;
        self.recomputed += recomputed;
    }
}

/// The FLOPs of one token through layer `i` on one GPU, forward: the linear layers (routed
/// experts at top-k of E, divided by ETP; the rest by TP) and the attention products (÷ TP).
fn layer_flops(
    model: &Model,
    params: &Params,
    plan: &Setup,
    i: u64,
    keys: f64,
) -> Option<(f64, f64)> {
    let (all, routed) = params.layer(model, i)?;
    let dense = all.saturating_sub(routed) as f64;
    let experts = model.num_experts.max(1) as f64;
    let active_routed = routed as f64 * model.num_experts_per_tok.max(1) as f64 / experts;
    let tp = plan.tp.max(1) as f64;
    let linear = 2.0 * (dense / tp + active_routed / plan.expert_tp() as f64);
    let (d_qk, d_v) = if model.is_mla() {
        (
            (model.qk_nope_head_dim + model.qk_rope_head_dim) as f64,
            model.v_head_dim as f64,
        )
    } else {
        let d = model.resolved_head_dim()? as f64;
        (d, d)
    };
    // causal: each query attends to half the keys on average
    let heads = model.num_attention_heads as f64 / tp;
    let attention = 2.0 * heads * (d_qk + d_v) * keys / 2.0;
    Some((linear + attention, attention))
}

/// The bytes per value an eager RMSNorm moves in the forward: the 16-bit input upcast to fp32
/// (read 2, write 4), squared (4 + 4), its mean read (4), multiplied by the reciprocal root
/// (4 + 4), cast back (4 + 2), times the weight (2 + 2): torchtitan's and transformers'
/// `RMSNorm.forward` (`x.float()`, `pow(2).mean(-1)`, `rsqrt`, `type_as`, `* weight`), one
/// kernel per operation. A LayerNorm is one native kernel (`F.layer_norm`: 2 + 2).
pub const EAGER_RMSNORM_BYTES: f64 = 36.0;

/// The bytes per query or key value eager rotary embeddings move in the forward: upcast (2 + 4),
/// the complex product (4 + 4), cast back (4 + 2): torchtitan's `apply_rotary_emb`
/// (`view_as_complex(x.float())`, `* freqs_cis`, `view_as_real`, `type_as`).
pub const EAGER_ROTARY_BYTES: f64 = 20.0;

/// The bytes per logit the loss over the vocabulary moves, forward and backward together, by
/// fusion level. Eager (`cross_entropy(logits.float(), labels)`, torchtitan's loss and the
/// Trainer's): upcast 2 + 4, log-softmax two reads and a write of fp32 (12); backward the
/// NLL's gradient written (4), the log-softmax's backward (4 + 4 + 4), cast back (4 + 2): 40.
/// Compiled (Inductor's one reduction kernel on the 16-bit logits): read 2 forward, read 2 and
/// write 2 backward: 6. Fused level, Megatron-LM's `vocab_parallel_cross_entropy` on the fp32
/// upcast (its `--cross-entropy-loss-fusion` off, the default): upcast 2 + 4, max 4, subtract
/// 4 + 4, exp 4 + 4, sum 4, divide 4 + 4; backward scale 4 + 4, cast back 4 + 2: 56.
pub const LOSS_BYTES_PER_LOGIT: [f64; 3] = [40.0, 6.0, 56.0];

/// Kernels an eager Llama-style layer launches in one forward, counted from the operations of
/// [`per_token_bytes`]'s eager level: two RMSNorms of six kernels each, rotary on the queries
/// and keys (four each), seven matrix products, the attention, the contiguous copy, two residual
/// adds, SiLU and the product: 33. The backward launches about twice as many.
pub const EAGER_KERNELS_PER_LAYER: f64 = 33.0;

/// The CPU's time to launch one PyTorch kernel: NVIDIA/dgxc-benchmarking
/// `microbenchmarks/cpu_overhead/README.md`, whose sample output prints 11–18 µs per tiny
/// PyTorch GEMM launch (the platform not stated); the lower end. An eager layer takes at least
/// its kernels' launches: the GPU waits for the CPU when its kernels are shorter.
pub const LAUNCH_SECONDS: f64 = 11e-6;

/// The loss's bytes per logit at `fusion` ([`LOSS_BYTES_PER_LOGIT`]).
fn loss_bytes(fusion: Fusion) -> f64 {
    LOSS_BYTES_PER_LOGIT[match fusion {
        Fusion::Eager => 0,
        Fusion::Compiled => 1,
        Fusion::Fused => 2,
    }]
}

/// The bytes per token the memory-bound kernels of one layer move in one forward, by the
/// framework's fusion level (`h`: hidden size, `q`, `kv`: the query and key widths on this GPU,
/// `mlp`: the MLP's width on this GPU, `rep`: the TP ranks the norms and adds are split over with
/// sequence parallelism, `mask`: 1 with dropout).
///
/// - Fused (Megatron-LM): each norm reads and writes the hidden state (2 + 2), each residual
///   add with its dropout reads two, writes one and a 1-byte mask, the MLP's activation reads its
///   input(s) and writes its output; rotary embeddings fused into the attention's kernels.
/// - Compiled (Inductor): each residual add fused with the norm after it (read two, write two:
///   8), rotary one kernel on the queries and keys (2 + 2), the attention's output made
///   contiguous (2 + 2), the gated activation one kernel (read 4, write 2).
/// - Eager: each norm [`EAGER_RMSNORM_BYTES`] (a LayerNorm 4), rotary [`EAGER_ROTARY_BYTES`]
///   per query and key value, the attention's output made contiguous (2 + 2), each residual add
///   6 (dropout another 2 + 2 and its mask), the gated activation as SiLU (2 + 2) and the product
///   (4 + 2).
fn per_token_bytes(model: &Model, plan: &Setup, widths: (f64, f64, f64, f64), mask: f64) -> f64 {
    let (h, q, kv, mlp) = widths;
    let gated = if plan.gated_mlp { 1.0 } else { 0.0 };
    let rotary = if model.position_embeddings == 0 {
        1.0
    } else {
        0.0
    };
    match plan.fusion {
        Fusion::Fused => 2.0 * 4.0 * h + 2.0 * (6.0 + mask) * h + (4.0 + 2.0 * gated) * mlp,
        Fusion::Compiled => {
            2.0 * 8.0 * h + 4.0 * rotary * (q + kv) + 4.0 * q + (4.0 + 2.0 * gated) * mlp
        }
        Fusion::Eager => {
            let norm = if model.layer_norm {
                4.0
            } else {
                EAGER_RMSNORM_BYTES
            };
            2.0 * norm * h
                + EAGER_ROTARY_BYTES * rotary * (q + kv)
                + 4.0 * q
                + 2.0 * (6.0 + 5.0 * mask) * h
                + (4.0 + 6.0 * gated) * mlp
        }
    }
}

/// FP8's cast bytes of layer `i` per micro batch of `tokens` on one GPU ([`FP8_CAST_BYTES`] per
/// value): the inputs of its linear layers (the attention's and the MLP's normed input, h each,
/// the attention's output, the MLP's hidden values) and their output gradients (the queries,
/// keys and values, the attention's projection, the MLP's two (gated) or one up projection, its
/// down projection), and its weights once; 0 in 16 bits.
fn fp8_cast_bytes(model: &Model, plan: &Setup, i: u64, tokens: f64, params: (u128, u128)) -> f64 {
    let per_value = match plan.fp8 {
        None => return 0.0,
        Some(Fp8::Tensorwise) => FP8_CAST_BYTES[0],
        Some(Fp8::Delayed) => FP8_CAST_BYTES[1],
    };
    let h = model.hidden_size as f64;
    let tp = plan.tp.max(1) as f64;
    let d = model.resolved_head_dim().unwrap_or(0) as f64;
    let q = model.num_attention_heads as f64 * d / tp;
    let kv = model.num_key_value_heads as f64 * d / tp;
    let width = if model.is_moe_layer(i) {
        (model.expert_intermediate_size() * model.num_experts_per_tok.max(1)) as f64
    } else {
        model.intermediate_size as f64
    } / tp;
    let ups = if plan.gated_mlp { 2.0 } else { 1.0 };
    let inputs = 2.0 * h + q + width;
    let grads = q + 2.0 * kv + h + ups * width + h;
    let weights = params.0.saturating_sub(params.1) as f64 / tp;
    per_value * ((inputs + grads) * tokens + weights)
}

/// The bytes DTensor's sequence parallelism copies in one layer per micro batch of `tokens`
/// ([`Conventions::dtensor_tp`](crate::calc::plan::Conventions::dtensor_tp); 0 otherwise): each collective over the sequence dimension reads and
/// writes its whole tensor once more (`torch.cat` of its chunks). Forward: the attention's and
/// the MLP's input all-gathers (in fp8 under tensorwise Float8: `PrepareFloat8ModuleInput` casts
/// before gathering) and the reduce-scatters of `wo` and `w2`; backward: the reduce-scatters and
/// all-gathers of their 16-bit gradients. A full recompute's forward copies are not counted.
fn sp_copy_bytes(model: &Model, plan: &Setup, tokens: f64) -> f64 {
    if !(plan.memory.dtensor_tp && plan.sequence_parallel && plan.tp > 1) {
        return 0.0;
    }
    let gathered = if plan.fp8 == Some(Fp8::Tensorwise) {
        1.0
    } else {
        2.0
    };
    // read and write: 2 × bytes per value, over h values per token
    2.0 * (2.0 * gathered + 2.0 * 2.0 + 4.0 * 2.0) * model.hidden_size as f64 * tokens
}

/// The bytes the memory-bound kernels of layer `i` read and write for `tokens` tokens on one
/// GPU in one forward ([`per_token_bytes`] at the framework's fusion level; the norms and adds
/// ÷ TP with sequence parallelism, the rest ÷ TP), and the attention scores' share. Eager
/// attention materialises its scores (b·a/t·s_local·s values): written by the first product,
/// read and written by the softmax and by dropout (with its mask), read by the second, 13 bytes
/// per score with dropout; flash attention keeps them on chip. The backward moves twice a
/// forward's bytes.
fn layer_traffic(model: &Model, plan: &Setup, i: u64, tokens: f64, seq: f64) -> (f64, f64) {
    let h = model.hidden_size as f64;
    let tp = plan.tp.max(1) as f64;
    let rep = if plan.sequence_parallel { tp } else { 1.0 };
    let mask = if plan.memory.dropout { 1.0 } else { 0.0 };
    let width = if model.is_moe_layer(i) {
        (model.expert_intermediate_size() * model.num_experts_per_tok.max(1)) as f64
    } else {
        model.intermediate_size as f64
    };
    let d = model.resolved_head_dim().unwrap_or(0) as f64;
    let q = model.num_attention_heads as f64 * d / tp;
    let kv = model.num_key_value_heads as f64 * d / tp;
    // the norms and adds split by SP, the attention's and the MLP's values by TP
    let per_token = per_token_bytes(model, plan, (h / rep, q, kv, width / tp), mask);
    let scores = if plan.flash_attention {
        0.0
    } else {
        let per_score = 8.0 + 5.0 * mask;
        tokens * (model.num_attention_heads as f64 / tp) * seq * per_score
    };
    (per_token * tokens + scores, scores)
}

/// The step time of the plan `plan` with `dp` data-parallel replicas (the ranks that reduce
/// gradients: dp × cp × sp when those hold the same parameters) on `hw`, ranks placed as
/// `place` says; `None` when a size is zero or a count does not fit.
///
/// Five phases: the micro batch's shape on one GPU (`shape`), each pipeline rank's work
/// (`Ctx::ranks`), the time of one of each collective (`Ctx::unit_times`), the slowest rank's
/// time per micro batch (`Ctx::slowest`) with the pipeline's bubble, and the data-parallel
/// communication and the optimizer step on that rank's parameters (`Ctx::data_parallel`,
/// `Ctx::optimizer`).
pub fn step_time(
    model: &Model,
    params: &Params,
    plan: &Setup,
    dp: u64,
    hw: &Hardware,
    place: &Placement,
    overlap: Overlap,
) -> Option<StepTime> {
    if [
        plan.tp,
        plan.pp,
        plan.cp,
        plan.sp,
        plan.ep,
        plan.micro_batch,
        dp,
    ]
    .contains(&0)
    {
        return None;
    }
    let (split, s) = shape(model, plan)?;
    let c = Ctx {
        model,
        params,
        plan,
        hw,
        place,
        overlap,
        net: Net {
            hw,
            gpn: place.gpus_per_node,
        },
    };
    // per rank: its layers' work
    let ranks = c.ranks(&split, &s)?;
    let u = c.unit_times(&s)?;

    // each rank's time per micro batch, by part
    let m = plan.micro_batches.max(1) as f64;
    let (per_mb, parts, r) = c.slowest(&ranks, &u, &s);
    let (p, v) = (s.p, s.v);
    let bubble = match plan.pipeline.as_ref().map(|x| x.schedule) {
        Some(Schedule::ZeroBubble) => 0.0,
        _ => (p as f64 - 1.0) / v as f64 * per_mb,
    };
    let mut step = StepTime {
        compute: parts.compute * m,
        tp: parts.tp * m,
        cp: parts.cp * m,
        ep: parts.ep * m,
        pp_bubble: parts.pp_bubble * m + bubble,
        dp: 0.0,
    };

    // data parallelism and the optimizer step, on the slowest rank's parameters
    let rank = &ranks[r];
    let (dp_time, hidden) = if c.overlap.per_chunk && v > 1 && plan.sharding != Partition::Zero3 {
        c.per_chunk(&ranks, dp, parts.compute / v as f64, (p, v))
    } else {
        c.data_parallel(rank, dp, &parts, m, p)
    };
    let optimizer = c.optimizer(rank);
    step.dp = dp_time;
    step.compute += optimizer + COMM_SM_SHARE * hidden;
    Some(step)
}

/// The micro batch's shape on one GPU and the pipeline's.
struct Shape {
    /// Pipeline ranks, and virtual stages per rank.
    p: u64,
    v: u64,
    seq: f64,
    /// The micro batch's tokens on one GPU (its sequence split by CP and SP).
    tokens: f64,
    h: f64,
    tp: f64,
}

/// The layers of each pipeline stage, and the [`Shape`].
fn shape(model: &Model, plan: &Setup) -> Option<(Vec<u64>, Shape)> {
    let p = plan.pp;
    let split = super::layer_split(model.num_hidden_layers, p, plan.pipeline.as_ref())?;
    let v = split.len() as u64 / p;
    let seq = plan.seq_len as f64;
    let b = plan.micro_batch as f64;
    let local = cdiv(
        cdiv(u128::from(plan.seq_len), u128::from(plan.cp))?,
        u128::from(plan.sp),
    )? as f64;
    let tokens = b * local;
    let h = model.hidden_size as f64;
    let tp = plan.tp as f64;
    Some((
        split,
        Shape {
            p,
            v,
            seq,
            tokens,
            h,
            tp,
        },
    ))
}

/// The time of one of each collective a micro batch runs, and the matmul rate.
struct Unit {
    /// FLOP/s of the matrix products, for this size.
    rate: f64,
    /// FLOP/s of FP8 matrix products of this size (the 16-bit rate without FP8).
    rate8: f64,
    /// One TP all-reduce of the activation.
    tp_one: f64,
    /// One CP ring step of the K/V chunks.
    cp_step: f64,
    /// One EP all-to-all of the routed tokens.
    ep_one: f64,
    /// One pipeline send of the activation.
    p2p: f64,
}

/// What every phase of [`step_time`] reads.
struct Ctx<'a> {
    model: &'a Model,
    params: &'a Params,
    plan: &'a Setup,
    hw: &'a Hardware,
    place: &'a Placement,
    overlap: Overlap,
    net: Net<'a>,
}

impl Ctx<'_> {
    /// Each pipeline rank's work per micro batch: its layers (chunk by chunk), the output layer
    /// on the last rank and the embedding on the first.
    fn ranks(&self, split: &[u64], s: &Shape) -> Option<Vec<Rank>> {
        let (model, params, plan) = (self.model, self.params, self.plan);
        let (p, tokens, h, tp) = (s.p, s.tokens, s.h, s.tp);
        let mut ranks: Vec<Rank> = (0..p).map(|_| Rank::default()).collect();
        let mut at = 0u64;
        let mut alike = None;
        for (k, &n) in split.iter().enumerate() {
            let r = &mut ranks[k % p as usize];
            let recompute = |layers: u64| match (plan.recompute, plan.recompute_layers) {
                (Recompute::Full, RecomputeLayers::Block(b)) => layers.min(b),
                (Recompute::Full, _) => layers,
                _ => 0,
            };
            if params.uniform.is_some() && n > 0 {
                // alike layers count by their number (computed once)
                let work = match alike {
                    Some(one) => one,
                    None => *alike.insert(self.layer_work(at, s)?),
                };
                r.add(work, n, recompute(n), s, plan);
            } else {
                for j in 0..n {
                    let recomputed = recompute(j + 1) - recompute(j);
                    r.add(self.layer_work(at + j, s)?, 1, recomputed, s, plan);
                }
            }
            at = at.checked_add(n)?;
        }
        let vocab = model.vocab_size as f64;
        // the output layer on the last rank, the embedding on the first
        let last = &mut ranks[p as usize - 1];
        last.flops += 2.0 * h * vocab / tp * tokens;
        last.output_flops += 2.0 * h * vocab / tp * tokens;
        last.loss_bytes += loss_bytes(plan.fusion) * vocab / tp * tokens;
        let output = model.output_layer_params()? as f64 / tp;
        last.dense_params += output;
        last.output_params += output;
        let embedding = model.embedding_params()? as f64 / tp;
        ranks[0].dense_params += embedding;
        ranks[0].embedding_params += embedding;
        Some(ranks)
    }

    /// What layer `i` adds to its rank per micro batch.
    fn layer_work(&self, i: u64, s: &Shape) -> Option<LayerWork> {
        let (model, plan) = (self.model, self.plan);
        let params = self.params.layer(model, i)?;
        Some(LayerWork {
            flops: layer_flops(model, self.params, plan, i, s.seq)?,
            cast: fp8_cast_bytes(model, plan, i, s.tokens, params)
                + sp_copy_bytes(model, plan, s.tokens),
            traffic: layer_traffic(model, plan, i, s.tokens, s.seq),
            moe: model.is_moe_layer(i),
            params,
        })
    }

    /// The matmul rate for these products and the time of one of each collective.
    fn unit_times(&self, s: &Shape) -> Option<Unit> {
        let (model, plan, hw, place, net) = (self.model, self.plan, self.hw, self.place, &self.net);
        let (p, tokens, h, tp) = (s.p, s.tokens, s.h, s.tp);
        let rate = hw.peak_flops * hw.matmul_ceiling * KERNEL_EFFICIENCY;
        // the products' narrowest side: the hidden size's TP shard, or the micro batch's tokens on
        // this GPU when fewer (short sequences split by CP)
        let size = size_factor((h / tp).min(tokens));
        let rate = rate * size;
        if rate.is_nan() || rate <= 0.0 {
            return None;
        }
        let rate8 = if plan.fp8.is_some() && hw.fp8_flops_per_s > 0.0 {
            hw.fp8_flops_per_s * KERNEL_EFFICIENCY * size
        } else {
            rate
        };
        let act_bytes = 2.0 * tokens * h;
        let tp_one = net.time(Coll::AllReduce, act_bytes, plan.tp, place.tp_stride);
        let kv_heads = if model.is_mla() {
            model.num_attention_heads as f64
        } else {
            model.num_key_value_heads.max(1) as f64
        };
        let head_dim = model.resolved_head_dim().unwrap_or(128) as f64;
        let kv_bytes = 2.0 * 2.0 * tokens * kv_heads * head_dim / tp;
        let cp_step = net.time(Coll::P2p, kv_bytes, plan.cp, place.cp_stride);
        let topk = model.num_experts_per_tok.max(1) as f64;
        let ep_one = net.time(
            Coll::AllToAll,
            act_bytes * topk * plan.ep as f64,
            plan.ep,
            place.ep_stride,
        );
        let p2p = if p > 1 {
            let sent = if plan.sequence_parallel {
                act_bytes / tp
            } else {
                act_bytes
            };
            net.time(Coll::P2p, sent, 2, place.pp_stride)
        } else {
            0.0
        };
        Some(Unit {
            rate,
            rate8,
            tp_one,
            cp_step,
            ep_one,
            p2p,
        })
    }

    /// The slowest rank's time per micro batch, its parts and its index.
    fn slowest(&self, ranks: &[Rank], u: &Unit, s: &Shape) -> (f64, StepTime, usize) {
        let mut slowest = (0.0f64, StepTime::default(), 0usize);
        for (r, rank) in ranks.iter().enumerate() {
            let (per_mb, parts) = self.per_micro_batch(rank, u, s);
            if per_mb > slowest.0 {
                slowest = (per_mb, parts, r);
            }
        }
        slowest
    }

    /// One rank's time per micro batch and its parts: compute, and the TP, CP, EP and pipeline
    /// communication on its critical path.
    fn per_micro_batch(&self, rank: &Rank, u: &Unit, s: &Shape) -> (f64, StepTime) {
        let (plan, overlap) = (self.plan, self.overlap);
        let (p, v) = (s.p, s.v);
        let compute = self.compute(rank, u);
        let passes = 4.0
            + if plan.recompute == Recompute::Full {
                2.0 * rank.recomputed as f64 / rank.layers.max(1) as f64
            } else {
                0.0
            };
        let tp_comm = if overlap.tp {
            0.0
        } else {
            passes * rank.layers as f64 * u.tp_one
        };
        // the ring: (cp − 1) sends forward, twice backward, behind the attention products
        let (attention_rate, backward) = self.attention_kernel(u);
        let cp_comm = (3.0 * (plan.cp as f64 - 1.0) * u.cp_step * rank.layers as f64
            - (1.0 + backward) * rank.attention_flops / attention_rate)
            .max(0.0);
        let a2a = if plan.recompute == Recompute::Full {
            6.0
        } else {
            4.0
        };
        let ep_comm = a2a * rank.moe_layers as f64 * u.ep_one;
        let pp_comm = if p > 1 { 2.0 * v as f64 * u.p2p } else { 0.0 };
        let per_mb = compute + tp_comm + cp_comm + ep_comm + pp_comm;
        (
            per_mb,
            StepTime {
                compute,
                tp: tp_comm,
                cp: cp_comm,
                ep: ep_comm,
                pp_bubble: pp_comm,
                dp: 0.0,
            },
        )
    }

    /// One rank's compute per micro batch: its products forward, backward and recomputed, the
    /// attention's at its kernel's rate, and the memory-bound kernels' bytes.
    fn compute(&self, rank: &Rank, u: &Unit) -> f64 {
        let (plan, hw, rate) = (self.plan, self.hw, u.rate);
        let recompute_flops = match plan.recompute {
            Recompute::Full => rank.flops * rank.recomputed as f64 / rank.layers.max(1) as f64,
            Recompute::Selective if plan.selective_half_matmuls => {
                rank.attention_flops + (rank.flops - rank.attention_flops) / 2.0
            }
            Recompute::Selective => rank.attention_flops,
            Recompute::None => 0.0,
        };
        let recompute_bytes = match plan.recompute {
            Recompute::Full => rank.bytes * rank.recomputed as f64 / rank.layers.max(1) as f64,
            Recompute::Selective => rank.score_bytes,
            Recompute::None => 0.0,
        };
        // flash attention's products run at its kernel's rate; eager attention's as matrix
        // products (its scores' traffic is in the bytes)
        let (attention, attention_again) = match plan.recompute {
            Recompute::Full => (
                rank.attention_flops,
                rank.attention_flops * rank.recomputed as f64 / rank.layers.max(1) as f64,
            ),
            Recompute::Selective => (rank.attention_flops, rank.attention_flops),
            Recompute::None => (rank.attention_flops, 0.0),
        };
        let (attention_rate, backward) = self.attention_kernel(u);
        // LoRA: the frozen weights take no weight gradient, so their backward is one product,
        // not two (Hu et al. 2021, §4.2); the attention's backward is the same either way
        let passes_linear = if plan.trainable.is_some() { 2.0 } else { 3.0 };
        // under FP8 the layers' linear products run at the FP8 rate, the output layer's in 16 bits
        let products = passes_linear * (rank.flops - attention) + recompute_flops - attention_again;
        let output = passes_linear * rank.output_flops;
        let gpu = (products - output) / u.rate8
            + output / rate
            + ((1.0 + backward) * attention + attention_again) / attention_rate
            + (3.0 * rank.bytes + recompute_bytes + rank.loss_bytes + rank.cast_bytes)
                / hw.memory_bytes_per_s;
        gpu.max(self.launch_floor(rank))
    }

    /// The attention products' rate and their backward in forwards: flash attention's kernel
    /// rate with [`FLASH_BACKWARD_PASSES`], eager attention's as matrix products with two.
    fn attention_kernel(&self, u: &Unit) -> (f64, f64) {
        if self.plan.flash_attention && self.hw.attention_flops_per_s > 0.0 {
            (self.hw.attention_flops_per_s, FLASH_BACKWARD_PASSES)
        } else {
            (u.rate, 2.0)
        }
    }

    /// The eager framework's launch floor per micro batch: [`EAGER_KERNELS_PER_LAYER`] forward,
    /// twice that backward, and a fully recomputed forward again, at [`LAUNCH_SECONDS`] each
    /// (compiled and fused frameworks: none).
    fn launch_floor(&self, rank: &Rank) -> f64 {
        if self.plan.fusion != Fusion::Eager {
            return 0.0;
        }
        let again = match self.plan.recompute {
            Recompute::Full => rank.recomputed as f64 / rank.layers.max(1) as f64,
            _ => 0.0,
        };
        rank.layers as f64 * EAGER_KERNELS_PER_LAYER * (3.0 + again) * LAUNCH_SECONDS
    }

    /// Only trained parameters have gradients (and optimizer states): LoRA's adapters.
    fn trained(&self) -> f64 {
        let (plan, params) = (self.plan, self.params);
        plan.trainable
            .map_or(1.0, |t| (t as f64 / params.total.max(1) as f64).min(1.0))
    }

    /// The data-parallel communication of a step on `rank`'s parameters (`parts`: its time per
    /// micro batch, `m` micro batches, `p` pipeline ranks): what is exposed, and what is hidden
    /// behind the backward.
    fn data_parallel(&self, rank: &Rank, dp: u64, parts: &StepTime, m: f64, p: u64) -> (f64, f64) {
        let (plan, place, net, overlap) = (self.plan, self.place, &self.net, self.overlap);
        let trained = self.trained();
        let grad_bytes = if plan.memory.fp32_grads { 4.0 } else { 2.0 } * trained;
        let dense = rank.dense_params;
        let routed = rank.routed_params;
        let edp = (dp / plan.ep.max(1)).max(1);
        let group = |kind: Coll, per_param: f64| -> f64 {
            self.dp_group(kind, dense, routed, per_param, dp)
        };
        let backward_one = 2.0 * parts.compute / 3.0;
        match plan.sharding {
            Partition::Replicated => {
                let t = group(Coll::AllReduce, grad_bytes);
                if overlap.grad_reduce {
                    let exposed = (t - backward_one).max(0.0);
                    (exposed, t - exposed)
                } else {
                    (t, 0.0)
                }
            }
            Partition::Zero1 | Partition::Zero2 | Partition::DistributedOptimizer => {
                let reduce = group(Coll::Gather, grad_bytes);
                let gather = group(Coll::Gather, 2.0 * trained);
                let r_exposed = if overlap.grad_reduce {
                    (reduce - backward_one).max(0.0)
                } else {
                    reduce
                };
                let g_exposed = if overlap.param_gather {
                    (gather - parts.compute / 3.0).max(0.0)
                } else {
                    gather
                };
                (
                    r_exposed + g_exposed,
                    reduce + gather - r_exposed - g_exposed,
                )
            }
            Partition::Zero3 => {
                // layer by layer: the parameters gathered for the forward and the backward, the
                // gradients reduce-scattered; every micro batch, but under pipeline parallelism
                // once a step (torchtitan keeps the gathered parameters across the pipeline's micro
                // batches, `reshard_after_forward` off with PP, and torch.distributed.pipelining
                // syncs the gradients at the last)
                let layers = rank.layers.max(1) as f64;
                let per_layer = |per_param: f64| {
                    let one = |params: f64, n: u64, stride: u64| {
                        net.time(Coll::Gather, params / layers * per_param, n, stride)
                    };
                    layers
                        * (one(dense, dp, place.dp_stride)
                            + one(routed, edp, place.dp_stride.saturating_mul(plan.ep)))
                };
                let once = per_layer(2.0) * 2.0 + per_layer(grad_bytes);
                let (times, behind) = if p > 1 {
                    (1.0, parts.compute * m)
                } else {
                    (m, parts.compute)
                };
                let exposed = if overlap.param_gather {
                    (once - behind).max(0.0)
                } else {
                    once
                };
                (exposed * times, (once - exposed) * times)
            }
        }
    }

    /// One data-parallel collective of `per_param` bytes per parameter: the dense parameters
    /// over the `dp` replicas, the routed experts' over the expert-data-parallel ones.
    fn dp_group(&self, kind: Coll, dense: f64, routed: f64, per_param: f64, dp: u64) -> f64 {
        let (plan, place, net) = (self.plan, self.place, &self.net);
        let edp = (dp / plan.ep.max(1)).max(1);
        net.time(kind, dense * per_param, dp, place.dp_stride)
            + net.time(
                kind,
                routed * per_param,
                edp,
                place.dp_stride.saturating_mul(plan.ep),
            )
    }

    /// The data-parallel communication of a step under Megatron-LM's interleaved schedule
    /// ([`Overlap::per_chunk`]), chunk by chunk on each pipeline rank (`chunk`: the slowest
    /// rank's compute of one chunk per micro batch, which paces the schedule; `(p, v)`: pipeline
    /// ranks and chunks per rank): the most exposed rank's exposed and hidden time. Each chunk
    /// holds its rank's layers ÷ v, the embedding in the first rank's first chunk and the output
    /// layer in the last rank's last chunk; every chunk's collective after the first of the
    /// rank's runs whole, as one bucket (`training.py` `disable_bucketing` for chunks > 0 and
    /// pipeline ranks > 0), one after another on the data-parallel stream.
    ///
    /// - Gradients, backward order v − 1 … 0: chunk j ≥ 1 starts j·p chunk backwards before
    ///   the step's last one (its last micro batch's backward, launched `pipeline_parallel_rank`
    ///   iterations later so that every rank starts it at once: `grad_sync_virtual_microbatch_id
    ///   = virtual_microbatch_id - pipeline_parallel_rank`); chunk 0 on rank r when rank r's
    ///   backward ends, r chunk backwards before rank 0's (after the loop, "Launch any remaining
    ///   grad reductions"), and on rank 0 the whole of it after its last backward (the
    ///   gradients accumulate under `no_sync` until `grad_sync_func` starts them). What runs
    ///   past the last backward is exposed.
    /// - Parameters (the distributed optimizer): chunks 0 and 1 gathered at the step's start,
    ///   chunk k ≥ 2 when the forward of chunk k − 1 starts, (k − 1)·p chunk forwards in; the
    ///   first forward of chunk k on rank r starts (r + k·p) chunk forwards in, and how long it
    ///   waits for its parameters is exposed (rank 0 waits for all of chunk 0's).
    fn per_chunk(&self, ranks: &[Rank], dp: u64, chunk: f64, (p, v): (u64, u64)) -> (f64, f64) {
        let (plan, overlap) = (self.plan, self.overlap);
        let trained = self.trained();
        let grad_bytes = if plan.memory.fp32_grads { 4.0 } else { 2.0 } * trained;
        let coll = |kind: Coll, dense: f64, routed: f64, per_param: f64| {
            self.dp_group(kind, dense, routed, per_param, dp)
        };
        let (reduce_kind, gathers) = match plan.sharding {
            Partition::Replicated => (Coll::AllReduce, false),
            _ => (Coll::Gather, true),
        };
        let (forward, backward) = (chunk / 3.0, 2.0 * chunk / 3.0);
        let (pf, vf) = (p as f64, v as f64);
        let mut worst = (0.0f64, 0.0f64);
        for (r, rank) in ranks.iter().enumerate() {
            let layers = rank.dense_params - rank.embedding_params - rank.output_params;
            let params = |j: u64| {
                let edge = if j == 0 { rank.embedding_params } else { 0.0 }
                    + if j + 1 == v { rank.output_params } else { 0.0 };
                (layers / vf + edge, rank.routed_params / vf)
            };
            let (mut total, mut exposed) = (0.0, 0.0);
            // the gradients, last chunk first, on one stream
            let mut end = f64::NEG_INFINITY;
            for j in (0..v).rev() {
                let (d, e) = params(j);
                let t = coll(reduce_kind, d, e, grad_bytes);
                let start = if j == 0 { r as f64 } else { j as f64 * pf } * -backward;
                end = end.max(start) + t;
                total += t;
            }
            exposed += if overlap.grad_reduce {
                end.max(0.0)
            } else {
                total
            };
            if gathers {
                let (mut end, mut wait, mut all) = (0.0f64, 0.0f64, 0.0);
                for k in 0..v {
                    let (d, e) = params(k);
                    let t = coll(Coll::Gather, d, e, 2.0 * trained);
                    let start = k.saturating_sub(1) as f64 * pf * forward;
                    end = end.max(start) + t;
                    wait = wait.max(end - (r as f64 + k as f64 * pf) * forward);
                    all += t;
                }
                exposed += if overlap.param_gather { wait } else { all };
                total += all;
            }
            if r == 0 || exposed > worst.0 {
                worst = (exposed, total - exposed);
            }
        }
        worst
    }

    /// The optimizer step on the shards of `rank`'s parameters it updates, at the memory
    /// bandwidth.
    fn optimizer(&self, rank: &Rank) -> f64 {
        let plan = self.plan;
        let (dense, routed) = (rank.dense_params, rank.routed_params);
        // the shards the optimizer updates
        let shard = match plan.sharding {
            Partition::Replicated => 1.0,
            _ => plan.shard.max(1) as f64,
        };
        (dense + routed) * self.trained() / shard * OPTIMIZER_BYTES_PER_PARAM
            / self.hw.memory_bytes_per_s
    }
}
