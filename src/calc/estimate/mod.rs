//! Memory per GPU by the published formulas: a "published formula" estimate, never a measurement.
//!
//! [`estimate`] returns the bytes one GPU holds for a [`Model`] under a [`Setup`], in four parts,
//! each by a formula from a paper (checked `u128` arithmetic, a division rounds up; `None` on an
//! overflow or a zero size, never a panic):
//!
//! - **Model states** (Rajbhandari et al. 2019, "ZeRO", arXiv 1910.02054, §3 and Figure 1):
//!   mixed-precision Adam holds 2Ψ (bf16 weights) + 2Ψ (bf16 gradients) + KΨ (optimizer), K = 12
//!   (fp32 master weights, m and v: [`Setup::optimizer_bytes_per_param`], 6 for an 8-bit Adam).
//!   Over N = [`Setup::shard`] GPUs: P_os 4Ψ + KΨ/N ([`Partition::Zero1`]), P_os+g 2Ψ + (2+K)Ψ/N
//!   ([`Partition::Zero2`]), P_os+g+p (2+2+K)Ψ/N ([`Partition::Zero3`], FSDP's FULL_SHARD).
//!   [`Partition::DistributedOptimizer`] shards the optimizer like P_os but keeps fp32 gradients
//!   (4Ψ), the 6 + 12/N bytes per parameter of Megatron-LM's distributed optimizer (bf16 params,
//!   fp32 grads). Ψ is the parameters one GPU holds: its pipeline stage's layers (the embedding
//!   on the first, the final norm and the output layer on the last) less the routed experts,
//!   / TP, plus the routed experts / (TP·EP), whose states are sharded over N/EP (expert
//!   parallelism carved out of the sharding group). Weights take [`Setup::weight_bits`] (4 for QLoRA's NF4 base, quantisation
//!   constants not counted). LoRA ([`Setup::trainable`] = n): only the n/(TP·PP) adapter parameters
//!   have gradients and optimizer states, and they add 2 B each to the weights. Offload (Ren et al.
//!   2021, "ZeRO-Offload", arXiv 2101.06840): offloading the optimizer moves the gradients and the
//!   optimizer states to the CPU (0 on the GPU, as DeepSpeed's own estimator counts it); offloading
//!   the parameters (ZeRO-3 only, ignored otherwise) moves the weights too. ZeRO-3's gathered
//!   working set (a layer or two at a time) is not counted.
//! - **Activations and the pipeline** ([`stages`], `stages.rs`): each pipeline rank's layers,
//!   the micro batches its schedule holds in flight and what each layer saves for its backward,
//!   counted per tensor after Korthikanti et al. 2022 ("Reducing Activation Recomputation in
//!   Large Transformer Models", arXiv 2205.05198, §4.1), with recompute's checkpoints, the
//!   embedding on the first rank and the output layer and the loss on the last. The framework's
//!   conventions ([`Conventions`]: fp32 gradients or parameters, dropout, the bytes per logit its
//!   loss keeps) come with the plan. The rank with the largest total decides [`estimate`].
//! - **On the device** ([`device`], `device.rs`): what the runtime holds beside the tensors
//!   PyTorch allocates: the CUDA context and the communicators' buffers of each process group the
//!   layout creates.
//!
//! Not counted: allocator fragmentation, temporary buffers of the optimizer step.

pub mod device;
mod stages;
pub mod time;

use super::model::Model;
use super::plan::Pipeline;

pub use super::plan::Conventions;

pub use super::plan::{Recompute, RecomputeLayers};
pub use stages::{in_flight, layer_bytes, layer_split, stages};

/// How the model states are sharded over [`Setup::shard`] GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// DDP: every GPU holds all its model states.
    Replicated,
    Zero1,
    Zero2,
    /// ZeRO-3, FSDP's FULL_SHARD.
    Zero3,
    /// Megatron-LM's distributed optimizer: optimizer states sharded, fp32 gradients.
    DistributedOptimizer,
}

/// A training setup, per model replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub tp: u64,
    pub pp: u64,
    pub cp: u64,
    /// Ulysses sequence parallelism.
    pub sp: u64,
    pub ep: u64,
    /// The tensor-parallel size of the routed experts (Megatron's `--expert-tensor-parallel-size`;
    /// 0: the TP size).
    pub etp: u64,
    /// The GPUs the states are sharded over (normally the DP size; `dp_shard` for HSDP).
    pub shard: u64,
    pub sharding: Partition,
    pub offload_optimizer: bool,
    pub offload_param: bool,
    pub micro_batch: u64,
    pub seq_len: u64,
    pub recompute: Recompute,
    pub flash_attention: bool,
    /// Megatron-style sequence parallelism with TP.
    pub sequence_parallel: bool,
    /// 16 for bf16, 4 for QLoRA's NF4 base.
    pub weight_bits: u64,
    /// `None`: every parameter trains; `Some(n)`: LoRA with n trainable parameters.
    pub trainable: Option<u128>,
    /// 12 for mixed-precision AdamW (fp32 master weights, m, v).
    pub optimizer_bytes_per_param: u64,
    /// The pipeline's schedule and split (`None`: 1F1B, layers split evenly).
    pub pipeline: Option<Pipeline>,
    /// Micro batches per optimizer step on each pipeline (the accumulation).
    pub micro_batches: u64,
    /// Which layers full recompute checkpoints.
    pub recompute_layers: RecomputeLayers,
    /// A gated MLP (SwiGLU: gate and up projections); `false`: one projection (GeLU).
    pub gated_mlp: bool,
    /// The framework's own memory conventions (see [`Conventions`]).
    pub fp32_grads: bool,
    pub fp32_params: bool,
    pub dropout: bool,
    pub logit_saved_bytes: u64,
    pub logit_transient_bytes: u64,
    /// Selective recompute also runs every other matrix product's forward again (the step
    /// time's; see `plan::Settings::selective_half_matmuls`).
    pub selective_half_matmuls: bool,
}

impl Default for Setup {
    /// One GPU, bf16 AdamW, micro batch 1 of 2048 tokens, eager attention, nothing else.
    fn default() -> Setup {
        Setup {
            tp: 1,
            pp: 1,
            cp: 1,
            sp: 1,
            ep: 1,
            etp: 0,
            shard: 1,
            sharding: Partition::Replicated,
            offload_optimizer: false,
            offload_param: false,
            micro_batch: 1,
            seq_len: 2048,
            recompute: Recompute::None,
            flash_attention: false,
            sequence_parallel: false,
            weight_bits: 16,
            trainable: None,
            optimizer_bytes_per_param: 12,
            pipeline: None,
            micro_batches: 1,
            recompute_layers: RecomputeLayers::Every,
            gated_mlp: true,
            fp32_grads: false,
            fp32_params: false,
            dropout: false,
            logit_saved_bytes: 4,
            logit_transient_bytes: 6,
            selective_half_matmuls: false,
        }
    }
}

impl Setup {
    /// The plan with a framework's conventions.
    pub fn with(mut self, c: Conventions) -> Setup {
        self.fp32_grads = c.fp32_grads;
        self.fp32_params = c.fp32_params;
        self.dropout = c.dropout;
        self.logit_saved_bytes = c.logit_saved_bytes;
        self.logit_transient_bytes = c.logit_transient_bytes;
        self
    }
}

/// Bytes on one GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryParts {
    pub weights: u128,
    pub gradients: u128,
    pub optimizer: u128,
    pub activations: u128,
}

impl MemoryParts {
    pub fn total(&self) -> Option<u128> {
        self.weights
            .checked_add(self.gradients)?
            .checked_add(self.optimizer)?
            .checked_add(self.activations)
    }
}

/// `a / b` rounded up; `None` for `b = 0`.
fn cdiv(a: u128, b: u128) -> Option<u128> {
    // in 64 bits when both fit (a 128-bit division is a library call, slow in wasm)
    if let (Ok(a), Ok(b)) = (u64::try_from(a), u64::try_from(b)) {
        return Some(u128::from(a.checked_div(b)? + u64::from(a % b != 0)));
    }
    Some(a.checked_div(b)? + u128::from(a % b != 0))
}

fn mul(xs: &[u128]) -> Option<u128> {
    xs.iter().try_fold(1u128, |acc, &x| acc.checked_mul(x))
}

/// The bytes of `params` parameters at `bits` each, over `n` GPUs if `sharded`.
fn part(params: u128, bits: u64, n: u64, sharded: bool) -> Option<u128> {
    let n = if sharded { u128::from(n) } else { 1 };
    cdiv(params.checked_mul(u128::from(bits))?, n.checked_mul(8)?)
}

/// The parameter counts [`estimate`] reads: the model's `num_parameters()`, its routed experts'
/// share and each layer's, counted once for the many plans of the layout explorer
/// ([`estimate_with`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub total: u128,
    pub routed: u128,
    /// Each decoder layer's `(all, routed experts)`.
    layers: Vec<(u128, u128)>,
    /// Every layer's `(all, routed experts)` when all layers are alike (the same parameters,
    /// all MoE or none): a rank's layers then count by their number, and chunks of the same
    /// length keep the same bytes.
    pub(crate) uniform: Option<(u128, u128)>,
}

/// The most layers the estimate counts one by one (a model beyond it has no estimate: its
/// stages would take as long to count as the layers are many, for every layout of the explorer).
pub const MAX_LAYERS: u64 = 65_536;

impl Params {
    pub fn of(model: &Model) -> Option<Params> {
        if model.num_hidden_layers > MAX_LAYERS {
            return None;
        }
        let layers: Vec<(u128, u128)> = (0..model.num_hidden_layers)
            .map(|i| model.layer_params(i))
            .collect::<Option<_>>()?;
        let moe = model.is_moe_layer(0);
        let uniform = layers.first().copied().filter(|&first| {
            layers.iter().all(|&l| l == first)
                && (0..model.num_hidden_layers).all(|i| model.is_moe_layer(i) == moe)
        });
        Some(Params {
            routed: model.routed_expert_params()?,
            total: model.num_parameters()?,
            layers,
            uniform,
        })
    }

    /// Layer `i`'s `(all, routed experts)`.
    pub fn layer(&self, i: u64) -> Option<(u128, u128)> {
        self.layers.get(usize::try_from(i).ok()?).copied()
    }
}

impl Setup {
    /// The routed experts' tensor-parallel size.
    pub fn expert_tp(&self) -> u64 {
        if self.etp == 0 {
            self.tp.max(1)
        } else {
            self.etp
        }
    }
}

pub fn estimate(model: &Model, plan: &Setup) -> Option<MemoryParts> {
    estimate_with(model, &Params::of(model)?, plan)
}

/// [`estimate`] with the model's parameter counts already counted: the pipeline rank with the
/// largest total ([`stages`], [`largest`]).
pub fn estimate_with(model: &Model, params: &Params, plan: &Setup) -> Option<MemoryParts> {
    let mut all = stages::largest_candidates(model, params, plan)?;
    let (i, _) = largest(&all)?;
    Some(all.swap_remove(i))
}

/// The stage whose total is the largest (the first such) and that total; `None` when a total
/// overflows or there is no stage.
pub fn largest(stages: &[MemoryParts]) -> Option<(usize, u128)> {
    let mut best: Option<(usize, u128)> = None;
    for (i, e) in stages.iter().enumerate() {
        let t = e.total()?;
        if best.is_none_or(|(_, b)| t > b) {
            best = Some((i, t));
        }
    }
    best
}

/// One change to a [`Setup`] that lowers its memory per GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Zero3,
    Recompute(Recompute),
    MicroBatch(u64),
    /// The new TP size, at the same GPU count: the sharding group shrinks by the same factor.
    MoreTp(u64),
}

impl Change {
    /// The plan with this change; `None` if it cannot be made (TP not a multiple of the old one,
    /// or a sharding group it does not divide).
    pub fn apply(self, plan: &Setup) -> Option<Setup> {
        let mut p = plan.clone();
        match self {
            Change::Zero3 => p.sharding = Partition::Zero3,
            Change::Recompute(r) => p.recompute = r,
            Change::MicroBatch(m) => p.micro_batch = m,
            Change::MoreTp(tp) => {
                let f = tp.checked_div(p.tp)?;
                if f == 0 || f * p.tp != tp || p.shard % f != 0 {
                    return None;
                }
                p.tp = tp;
                p.shard /= f;
            }
        }
        Some(p)
    }
}

/// The first single change that brings the total within `capacity_bytes`, with its new total;
/// `None` if the plan already fits or no change does. Tried in this order (the cheapest in
/// throughput first): ZeRO-3 (unless already), selective then full recompute (beyond the plan's),
/// the micro batch halved down to 1, TP doubled while it divides the attention heads and the
/// sharding group and stays ≤ 8.
pub fn nearest_fit(model: &Model, plan: &Setup, capacity_bytes: u128) -> Option<(Change, u128)> {
    let fits = |c: Change| -> Option<u128> {
        estimate(model, &c.apply(plan)?)?
            .total()
            .filter(|&t| t <= capacity_bytes)
    };
    if estimate(model, plan)?.total()? <= capacity_bytes {
        return None;
    }
    let mut tries = Vec::new();
    if plan.sharding != Partition::Zero3 {
        tries.push(Change::Zero3);
    }
    for r in [Recompute::Selective, Recompute::Full] {
        if r > plan.recompute {
            tries.push(Change::Recompute(r));
        }
    }
    let mut m = plan.micro_batch / 2;
    while m >= 1 {
        tries.push(Change::MicroBatch(m));
        m /= 2;
    }
    let mut tp = plan.tp.saturating_mul(2);
    while tp <= 8 && model.num_attention_heads % tp == 0 {
        tries.push(Change::MoreTp(tp));
        tp *= 2;
    }
    tries.into_iter().find_map(|c| Some((c, fits(c)?)))
}
