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
//!   parallelism carved out of the sharding group). Weights take [`Setup::weight_bits`]; a QLoRA base (4) holds its linear
//!   layers in NF4 with bitsandbytes' double-quantized block constants
//!   ([`nf4_bytes`], 4.127 bits per weight) and its embedding, output layer and norms
//!   in 16 bits. LoRA ([`Setup::trainable`] = n): only the n/(TP·PP) adapter parameters
//!   have gradients and optimizer states, and they add 2 B each to the weights. Offload (Ren et al.
//!   2021, "ZeRO-Offload", arXiv 2101.06840): offloading the optimizer moves the gradients and the
//!   optimizer states to the CPU (0 on the GPU, as DeepSpeed's own estimator counts it); offloading
//!   the parameters (ZeRO-3 only, ignored otherwise) moves the weights too. ZeRO-3's gathered
//!   working set (a layer or two at a time) is not counted, except where FSDP2 keeps it under
//!   pipeline parallelism ([`Conventions::fsdp_pipeline_keeps`]): the stage's parameters gathered in
//!   16 bits from the first forward to the gradient reduction, and their gradients unsharded in
//!   the reduce dtype over the micro batches, added to the weights and the gradients; and where
//!   FSDP2 keeps the final norm and the output layer gathered without it
//!   ([`Conventions::fsdp_output_kept`]): 16 bits each, over TP, in the weights of the peak.
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
//! - **Reserved** ([`reserved`], `reserved.rs`): what PyTorch's caching allocator reserves for
//!   these tensors, from its block and segment sizes.
//!
//! Not counted: fragmentation from the order of allocations, temporary buffers of the optimizer
//! step.

pub mod device;
pub mod reserved;
mod stages;
pub mod time;

use super::model::Model;
use super::plan::Pipeline;

pub use super::plan::Conventions;

pub use super::plan::{Recompute, RecomputeLayers};
pub use stages::{
    fsdp_output_kept, in_flight, layer_bytes, layer_split, nf4_bytes, pipeline_fsdp_kept_at, stages,
};

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
    /// How far the memory-bound kernels are fused (the step time's bytes).
    pub fusion: crate::calc::plan::Fusion,
    /// FP8 matrix products (the step time's).
    pub fp8: Option<crate::calc::plan::Fp8>,
    /// Megatron-style sequence parallelism with TP.
    pub sequence_parallel: bool,
    /// 16 for bf16, 4 for QLoRA's NF4 base (its linear layers; the rest stays 16-bit).
    pub weight_bits: u64,
    /// `None`: every parameter trains; `Some(n)`: LoRA with n trainable parameters.
    pub trainable: Option<u128>,
    /// 12 for mixed-precision AdamW (fp32 master weights, m, v).
    pub optimizer_bytes_per_param: u64,
    /// A bitsandbytes 8-bit optimizer: block-wise states with two fp32 absmax per 256
    /// parameters (`Optimizer2State.init_state`, `block_wise`), 1/32 byte per parameter.
    pub optimizer_8bit: bool,
    /// The pipeline's schedule and split (`None`: 1F1B, layers split evenly).
    pub pipeline: Option<Pipeline>,
    /// Micro batches per optimizer step on each pipeline (the accumulation).
    pub micro_batches: u64,
    /// Which layers full recompute checkpoints.
    pub recompute_layers: RecomputeLayers,
    /// A gated MLP (SwiGLU: gate and up projections); `false`: one projection (GeLU).
    pub gated_mlp: bool,
    /// The framework's own memory conventions (each framework's, `Spec::fit.settings`).
    pub memory: Conventions,
    /// Megatron's `--defer-embedding-wgrad-compute` with its `--wgrad-deferral-limit` (0: every
    /// micro batch): the last stage's output layer keeps the input and the logits' gradient of
    /// the first `limit` micro batches of a step until the pipeline's flush computes their
    /// weight gradients ([`stages`]).
    pub deferred_output_wgrad: Option<u64>,
    /// Megatron-LM's persistent global memory buffer and which requests it serves: the largest
    /// request on the stage, 16-bit, allocated beside the activations for the whole run
    /// (`stages.rs`, `global_buffer_bytes`).
    pub global_buffer: crate::calc::plan::GlobalBuffer,
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
            fusion: crate::calc::plan::Fusion::Fused,
            fp8: None,
            sequence_parallel: false,
            weight_bits: 16,
            trainable: None,
            optimizer_bytes_per_param: 12,
            optimizer_8bit: false,
            pipeline: None,
            micro_batches: 1,
            recompute_layers: RecomputeLayers::Every,
            gated_mlp: true,
            memory: Conventions::DEFAULT,
            deferred_output_wgrad: None,
            global_buffer: crate::calc::plan::GlobalBuffer::None,
            selective_half_matmuls: false,
        }
    }
}

impl Setup {
    /// The plan with a framework's conventions.
    pub fn with(mut self, c: Conventions) -> Setup {
        self.memory = c;
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
    /// `(all, routed experts)` of a decoder layer without and with an MoE block
    /// ([`Model::moe_block`]), for the kinds the model has: a layer's parameters depend on its
    /// index only through its kind, so each kind is counted once.
    kinds: [Option<(u128, u128)>; 2],
    /// Every layer's `(all, routed experts)` when all layers are alike (the same parameters,
    /// all MoE or none): a rank's layers then count by their number, and chunks of the same
    /// length keep the same bytes.
    pub(crate) uniform: Option<(u128, u128)>,
}

/// The most layers the estimate walks one by one, and the most pipeline stages it splits into:
/// a model whose layers are not all alike has no estimate beyond it (each layer's kind and place
/// in its checkpoint group would be walked for every layout of the explorer); alike layers count
/// by their number, however many.
pub const MAX_LAYERS: u64 = 65_536;

impl Params {
    pub fn of(model: &Model) -> Option<Params> {
        let layers = model.num_hidden_layers;
        let moe_blocks = model.moe_blocks_in(0..layers);
        let mut kinds = [None; 2];
        for (kind, n) in [(false, layers - moe_blocks), (true, moe_blocks)] {
            if n > 0 {
                kinds[usize::from(kind)] = Some(model.kind_params(kind)?);
            }
        }
        let moe = model.moe_layers_in(0..layers);
        let uniform = match kinds {
            [Some(a), Some(b)] if a != b => None,
            [Some(one), _] | [None, Some(one)] => Some(one).filter(|_| moe == 0 || moe == layers),
            [None, None] => None,
        };
        if uniform.is_none() && layers > MAX_LAYERS {
            return None;
        }
        Some(Params {
            routed: model.routed_expert_params()?,
            total: model.num_parameters()?,
            kinds,
            uniform,
        })
    }

    /// `(all, routed experts)` of a layer without (`moe_block` false) or with an MoE block;
    /// `None` for a kind the model does not have.
    pub fn kind(&self, moe_block: bool) -> Option<(u128, u128)> {
        self.kinds[usize::from(moe_block)]
    }

    /// Layer `i`'s `(all, routed experts)`.
    pub fn layer(&self, model: &Model, i: u64) -> Option<(u128, u128)> {
        if i >= model.num_hidden_layers {
            return None;
        }
        self.kind(model.moe_block(i))
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

#[cfg(test)]
mod alike_layers {
    //! Alike layers counted by their number give what walking them one by one gives: the same
    //! bytes per stage, and the same step time up to the order of a float sum.
    use super::time::{step_time, Hardware, Overlap, Placement};
    use super::{stages, Params, Pipeline, Recompute, RecomputeLayers, Setup};
    use crate::calc::model::{preset, Model};
    use crate::calc::plan::Schedule;

    fn walked(params: &Params) -> Params {
        Params {
            uniform: None,
            ..params.clone()
        }
    }

    fn setups() -> Vec<Setup> {
        let mut out = Vec::new();
        let recomputes = [
            (Recompute::None, RecomputeLayers::Every),
            (Recompute::Selective, RecomputeLayers::Every),
            (Recompute::Full, RecomputeLayers::Every),
            (Recompute::Full, RecomputeLayers::Uniform(3)),
            (Recompute::Full, RecomputeLayers::Uniform(64)),
            (Recompute::Full, RecomputeLayers::Block(2)),
            (Recompute::Full, RecomputeLayers::Block(50)),
        ];
        for (pp, v) in [(1, 1), (2, 1), (4, 2), (3, 1)] {
            for &(recompute, recompute_layers) in &recomputes {
                out.push(Setup {
                    tp: 2,
                    pp,
                    micro_batch: 2,
                    seq_len: 4096,
                    micro_batches: 8,
                    recompute,
                    recompute_layers,
                    pipeline: (pp > 1).then(|| Pipeline {
                        schedule: if v > 1 {
                            Schedule::Interleaved { group: pp }
                        } else {
                            Schedule::OneFOneB
                        },
                        virtual_stages: v,
                        layers: Vec::new(),
                    }),
                    ..Setup::default()
                });
            }
        }
        out
    }

    fn models() -> Vec<Model> {
        let llama = preset("meta-llama/Llama-3.1-8B").expect("preset");
        let mixtral = preset("mistralai/Mixtral-8x7B-v0.1").expect("preset");
        vec![
            llama.clone(),
            Model {
                num_hidden_layers: 37,
                ..llama
            },
            mixtral,
        ]
    }

    #[test]
    fn stages_counted_by_number_equal_stages_walked() {
        let mut checked = 0;
        for m in models() {
            let params = Params::of(&m).unwrap();
            assert!(params.uniform.is_some(), "alike layers");
            for plan in setups() {
                let fast = stages(&m, &params, &plan);
                assert!(fast.is_some(), "{plan:?}");
                assert_eq!(fast, stages(&m, &walked(&params), &plan), "{plan:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 3 * 28);
    }

    #[test]
    fn step_times_counted_by_number_equal_step_times_walked() {
        let hw = Hardware {
            peak_flops: 989e12,
            matmul_ceiling: 0.8,
            memory_bytes_per_s: 3.35e12,
            attention_flops_per_s: 330e12,
            fp8_flops_per_s: 0.0,
            intra_bytes_per_s: 450e9,
            inter_bytes_per_s: 50e9,
            intra_latency: 5e-6,
            inter_latency: 10e-6,
        };
        let place = Placement {
            gpus_per_node: 8,
            tp_stride: 1,
            cp_stride: 2,
            dp_stride: 2,
            pp_stride: 4,
            ep_stride: 2,
        };
        for m in models() {
            let params = Params::of(&m).unwrap();
            for plan in setups() {
                let t = |p: &Params| step_time(&m, p, &plan, 2, &hw, &place, Overlap::default());
                let (fast, slow) = (t(&params).unwrap(), t(&walked(&params)).unwrap());
                for (a, b) in [
                    (fast.total(), slow.total()),
                    (fast.compute, slow.compute),
                    (fast.dp, slow.dp),
                    (fast.pp_bubble, slow.pp_bubble),
                ] {
                    assert!(
                        (a - b).abs() <= 1e-12 * b.abs().max(1e-9),
                        "{a} vs {b}: {plan:?}"
                    );
                }
            }
        }
    }
}
