//! What PyTorch's caching allocator reserves for the tensors the estimate counts: a mechanism
//! estimate from the allocator's code, not a measurement, and no constant fitted to any run.
//!
//! PyTorch 2.15's `c10/core/AllocatorConfig.h` (lines 15–24) and
//! `c10/cuda/CUDACachingAllocator.cpp` (`round_size`, `get_allocation_size`, `get_pool`,
//! `get_segment_size`-by-pool for expandable segments; pytorch/pytorch@eb42ad6):
//!
//! - every request is rounded up to a multiple of `kMinBlockSize` = 512 B (`round_size`);
//! - a request of at most `kSmallSize` = 1 MiB is served from the small pool, whose segments are
//!   `kSmallBuffer` = 2 MiB (`get_allocation_size`);
//! - a request below `kMinLargeAlloc` = 10 MiB gets a `kLargeBuffer` = 20 MiB segment, which
//!   later requests of the large pool split;
//! - a larger request gets a segment of its size rounded up to `kRoundLarge` = 2 MiB;
//! - with `expandable_segments:True` a pool is one segment per stream that grows by pages of
//!   2 MiB (small pool) or 20 MiB (large pool): `segment_size = pool->is_small ? kSmallBuffer :
//!   kLargeBuffer` in `try_allocate_expandable_segment`.
//!
//! The allocator keeps freed blocks cached: the next micro batch's activations, of the same
//! sizes, reuse them, so the reserve does not grow between micro batches; the peak reserved is
//! the stage's peak tensors, each rounded to its block, packed into the segments above. Blocks
//! of one segment size are taken as packed without gaps (the small and the 1–10 MiB blocks
//! fill their 2 MiB and 20 MiB segments): fragmentation from the order of allocations is not
//! modelled, so this is the least the allocator reserves for these tensors.

/// `kMinBlockSize`: every request is rounded up to a multiple of it.
pub const MIN_BLOCK_SIZE: u128 = 512;
/// `kSmallSize`: the largest request of the small pool.
pub const SMALL_SIZE: u128 = 1 << 20;
/// `kSmallBuffer`: a small-pool segment (and an expandable small-pool page).
pub const SMALL_BUFFER: u128 = 2 << 20;
/// `kLargeBuffer`: the segment of a 1–10 MiB request (and an expandable large-pool page).
pub const LARGE_BUFFER: u128 = 20 << 20;
/// `kMinLargeAlloc`: from this size a request gets a segment of its own.
pub const MIN_LARGE_ALLOC: u128 = 10 << 20;
/// `kRoundLarge`: a segment of its own is rounded up to it.
pub const ROUND_LARGE: u128 = 2 << 20;

/// `x` rounded up to a multiple of `to` (inlined: for the powers of two among the allocator's
/// constants, a mask rather than a 128-bit division).
#[inline]
fn round_up(x: u128, to: u128) -> Option<u128> {
    if to.is_power_of_two() {
        x.checked_add(to - 1).map(|y| y & !(to - 1))
    } else {
        x.div_ceil(to).checked_mul(to)
    }
}

/// The bytes the allocator reserves for `tensors`, each `(bytes of one, how many)`, alive at
/// once; `expandable`: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
pub fn reserve(tensors: &[(u128, u128)], expandable: bool) -> Option<u128> {
    let (mut small, mut mid, mut large) = (0u128, 0u128, 0u128);
    for &(bytes, n) in tensors {
        if bytes == 0 || n == 0 {
            continue;
        }
        let block = round_up(bytes, MIN_BLOCK_SIZE)?;
        let all = block.checked_mul(n)?;
        if block <= SMALL_SIZE {
            small = small.checked_add(all)?;
        } else if block < MIN_LARGE_ALLOC || expandable {
            mid = mid.checked_add(all)?;
        } else {
            large = large.checked_add(round_up(block, ROUND_LARGE)?.checked_mul(n)?)?;
        }
    }
    round_up(small, SMALL_BUFFER)?
        .checked_add(round_up(mid, LARGE_BUFFER)?)?
        .checked_add(large)
}

use super::stages::{
    fsdp_output_kept, global_buffer_bytes, local_tokens, pipeline_fsdp_kept, rank_layer_kinds,
    ranked,
};
use super::{cdiv, MemoryParts, Params, Partition, Setup};
use crate::calc::model::Model;

/// Whether the allocator pages its segments (`expandable_segments:True`); the estimate takes
/// PyTorch's default (off): no input says otherwise yet.
pub const EXPANDABLE_SEGMENTS: bool = false;

/// The parameter tensors of pipeline rank `rank` on one GPU, `(elements of one, how many)`, as
/// the model's modules create them: per layer its two norms, its MLP's projections (gate and up
/// when gated, and down; each routed expert's own under an MoE block, `num_experts ÷ EP` of
/// them, split by the experts' TP), and the rest of the layer (the attention's Q, K, V and
/// output projections, with the router and shared experts of an MoE block) as four tensors split
/// by TP; the embedding on the first rank, the final norm and the output layer on the last.
fn matrices(
    model: &Model,
    params: &Params,
    plan: &Setup,
    (rank, (dense, moe)): (u64, (u64, u64)),
) -> Option<Vec<(u128, u128)>> {
    let t = u128::from(plan.tp.max(1));
    let h = u128::from(model.hidden_size);
    let gate = if plan.gated_mlp { 3 } else { 2 };
    let mut out = Vec::with_capacity(8);
    for (n, kind) in [(dense, false), (moe, true)] {
        if n == 0 {
            continue;
        }
        let n = u128::from(n);
        let (all, routed) = params.kind(kind)?;
        let norms = h.checked_mul(2)?;
        let (one, count, rest) = if kind {
            let local = u128::from((model.num_experts / plan.ep.max(1)).max(1));
            let f = u128::from(model.expert_intermediate_size());
            let one = cdiv(h.checked_mul(f)?, u128::from(plan.expert_tp()))?;
            (
                one,
                local * gate,
                all.saturating_sub(routed).saturating_sub(norms),
            )
        } else {
            let f = u128::from(model.intermediate_size);
            let mlp = h.checked_mul(f)?.checked_mul(gate)?;
            (
                cdiv(h * f, t)?,
                gate,
                all.saturating_sub(norms).saturating_sub(mlp),
            )
        };
        out.push((h, 2 * n));
        out.push((one, count.checked_mul(n)?));
        out.push((cdiv(rest, 4 * t)?, 4 * n));
    }
    if rank == 0 {
        out.push((cdiv(model.embedding_params()?, t)?, 1));
    }
    if rank + 1 == plan.pp.max(1) {
        out.push((h, 1));
        if !model.tie_word_embeddings || plan.pp > 1 {
            out.push((cdiv(model.output_layer_params()?, t)?, 1));
        }
    }
    Some(out)
}

/// `bytes` over tensors in the proportion of `shape`'s elements, each of them `per` times (the
/// optimizer's states of one parameter), added to `out`; one flat buffer when `flat`.
fn spread(
    out: &mut Vec<(u128, u128)>,
    bytes: u128,
    shape: &[(u128, u128)],
    per: u128,
    flat: bool,
) -> Option<()> {
    let total = shape
        .iter()
        .try_fold(0u128, |a, &(e, c)| a.checked_add(e.checked_mul(c)?))?;
    if flat || total == 0 || bytes == 0 {
        out.push((bytes, 1));
        return Some(());
    }
    let share = total.checked_mul(per)?;
    for &(e, c) in shape {
        out.push((cdiv(bytes.checked_mul(e)?, share)?, c.checked_mul(per)?));
    }
    Some(())
}

/// The tensors of one stage at its peak, `(bytes of one, how many)`: the model states as the
/// framework allocates them (a sharded part is one flat buffer: ZeRO's and FSDP's flat
/// partitions, Megatron-LM's contiguous gradient buffer under its distributed optimizer; else
/// one tensor per parameter tensor, the optimizer's states per parameter 3 with fp32 master
/// weights — 12 or 6 bytes per parameter — and 2 without; LoRA's adapters two per layer; what
/// FSDP2 keeps gathered and unsharded under PP a tensor per parameter tensor, as FSDP2 gives each
/// parameter its own unsharded storage and gradient, and so the final norm and the output layer
/// it keeps gathered without PP), and
/// the activations in tensors of one hidden state (tokens × hidden × 2 bytes, over TP with
/// sequence parallelism): the size of most tensors a layer saves.
pub fn stage_tensors(
    model: &Model,
    params: &Params,
    plan: &Setup,
    rank: u64,
    e: &MemoryParts,
) -> Option<Vec<(u128, u128)>> {
    let layers = rank_layer_kinds(model, plan, rank)?;
    tensors_of(model, params, plan, (rank, layers), e)
}

/// [`stage_tensors`] of rank `rank` holding `layers` (without and with an MoE block).
fn tensors_of(
    model: &Model,
    params: &Params,
    plan: &Setup,
    (rank, layers): (u64, (u64, u64)),
    e: &MemoryParts,
) -> Option<Vec<(u128, u128)>> {
    use Partition::*;
    let shape = matrices(model, params, plan, (rank, layers))?;
    let mut out = Vec::with_capacity(5 * shape.len() + 2);
    // FSDP2's gathered parameters and unsharded gradients under PP: a tensor per parameter
    let (gathered, unsharded) = pipeline_fsdp_kept(model, params, plan, (rank, layers))?;
    // and without PP the final norm and the output layer, a tensor each
    let kept = fsdp_output_kept(model, plan, rank)?;
    let sharded = e
        .weights
        .checked_sub(gathered)?
        .checked_sub(kept[0])?
        .checked_sub(kept[1])?;
    spread(&mut out, sharded, &shape, 1, plan.sharding == Zero3)?;
    spread(&mut out, gathered, &shape, 1, false)?;
    out.extend(kept.iter().filter(|&&b| b > 0).map(|&b| (b, 1)));
    let kinds = layers;
    let layers = u128::from(layers.0.checked_add(layers.1)?.max(1));
    let adapters = [(1, layers.checked_mul(2)?)];
    let trained: &[(u128, u128)] = if plan.trainable.is_some() {
        &adapters
    } else {
        &shape
    };
    let grads_flat = matches!(plan.sharding, Zero2 | Zero3 | DistributedOptimizer);
    let sharded = e.gradients.checked_sub(unsharded)?;
    spread(&mut out, sharded, trained, 1, grads_flat)?;
    spread(&mut out, unsharded, trained, 1, false)?;
    let k = plan.optimizer_bytes_per_param;
    let states = if k >= 12 || k == 6 { 3 } else { 2 };
    spread(
        &mut out,
        e.optimizer,
        trained,
        states,
        plan.sharding != Replicated,
    )?;
    let rep = if plan.sequence_parallel {
        u128::from(plan.tp.max(1))
    } else {
        1
    };
    let hidden = cdiv(
        local_tokens(plan)?
            .checked_mul(u128::from(model.hidden_size))?
            .checked_mul(2)?,
        rep,
    )?
    .max(1);
    // Megatron's global memory buffer: one tensor of its own
    let buffer = global_buffer_bytes(model, plan, rank, kinds)?;
    let activations = e.activations.checked_sub(buffer)?;
    out.push((hidden, activations / hidden));
    out.push((activations % hidden, 1));
    if buffer > 0 {
        out.push((buffer, 1));
    }
    out.extend(kept_beside(model, params, plan, (rank, kinds))?);
    Some(out)
}

/// The blocks the allocator keeps reserved beside the stage's peak tensors, by the framework's
/// conventions: on the last stage the loss's freed block that its backward cannot reuse
/// ([`Conventions::logit_reserved_bytes`](crate::calc::plan::Conventions::logit_reserved_bytes) per logit), and FSDP2's gather buffer of its largest unit,
/// cached on its own stream ([`Conventions::fsdp_gather_stream`](crate::calc::plan::Conventions::fsdp_gather_stream), [`largest_fsdp_unit`]).
fn kept_beside(
    model: &Model,
    params: &Params,
    plan: &Setup,
    (rank, (dense, moe)): (u64, (u64, u64)),
) -> Option<Vec<(u128, u128)>> {
    let mut out = Vec::new();
    let last = rank + 1 == plan.pp.max(1);
    let t = u128::from(plan.tp.max(1));
    if last && plan.memory.logit_reserved_bytes > 0 {
        let logits = cdiv(
            local_tokens(plan)?.checked_mul(u128::from(model.vocab_size))?,
            t,
        )?;
        out.push((
            logits.checked_mul(u128::from(plan.memory.logit_reserved_bytes))?,
            1,
        ));
    }
    if plan.memory.fsdp_gather_stream && plan.sharding == Partition::Zero3 && plan.shard > 1 {
        let unit = largest_fsdp_unit(model, params, plan, (rank, (dense, moe)))?;
        out.push((unit.checked_mul(2)?, 1));
    }
    Some(out)
}

/// The parameters on one GPU of the largest FSDP2 unit of pipeline rank `rank` holding `dense`
/// and `moe` layers, as torchtitan 0.3.0 groups them (`apply_fsdp_to_decoder`,
/// torchtitan/distributed/fsdp.py:180-207@0.3.0): each block a unit (its routed experts over
/// their TP × EP); an untied embedding a unit of its own (fsdp.py:194-199, the first stage) and
/// `[norm, lm_head]` one (fsdp.py:202-207, the last stage); a tied embedding one unit with them,
/// `[tok_embeddings, norm, lm_head]` (fsdp.py:180-192), the shared weight once (0.3.0 refuses
/// tying under PP, models/common/decoder.py:139-142@0.3.0, so a pipeline's output layer is its
/// own weight). The root `fully_shard(model)` (fsdp.py:310) holds no parameter of these. Over
/// TP the embedding and the output layer are split by vocabulary and the norm whole
/// (models/common/decoder_sharding.py `set_decoder_sharding_config`). torchtitan at 9dec370
/// grouped the embedding, the final norm and the output layer as one root unit
/// (parallelisms/parallelize_llama.py `apply_fsdp`); no release key of dpcalc's means that
/// release (its releases are 0.3.0 and HEAD b5bcd76), so 0.3.0's grouping is the one counted.
pub(super) fn largest_fsdp_unit(
    model: &Model,
    params: &Params,
    plan: &Setup,
    (rank, (dense, moe)): (u64, (u64, u64)),
) -> Option<u128> {
    let t = u128::from(plan.tp.max(1));
    let last = rank + 1 == plan.pp.max(1);
    let embedding = cdiv(model.embedding_params()?, t)?;
    let head = model
        .final_norm_params()?
        .checked_add(cdiv(model.output_layer_params()?, t)?)?;
    let mut unit = 0u128;
    if model.tie_word_embeddings && plan.pp.max(1) == 1 {
        unit = embedding.checked_add(model.final_norm_params()?)?;
    } else {
        if rank == 0 {
            unit = embedding;
        }
        if last {
            unit = unit.max(head);
        }
    }
    for (kind, n) in [(false, dense), (true, moe)] {
        if n == 0 {
            continue;
        }
        let (all, experts) = params.kind(kind)?;
        let routed = cdiv(
            experts,
            u128::from(plan.expert_tp()).checked_mul(u128::from(plan.ep.max(1)))?,
        )?;
        unit = unit.max(cdiv(all.checked_sub(experts)?, t)?.checked_add(routed)?);
    }
    Some(unit)
}

/// Each pipeline stage's reserved bytes (all ranks with `few` false; else the candidates for the
/// largest), first rank first, with the allocated estimate of the same stage.
pub fn reserved_stages(
    model: &Model,
    params: &Params,
    plan: &Setup,
    few: bool,
) -> Option<Vec<(u128, MemoryParts)>> {
    let stages = ranked(model, params, plan, few)?;
    // a new vector, not `collect` over `into_iter`: that reuses the stages' larger allocation
    // and shrinks it after, a copy in wasm's allocator on every explorer and planner row
    let mut out = Vec::with_capacity(stages.len());
    for s in stages {
        let t = tensors_of(model, params, plan, (s.rank, s.layers), &s.parts)?;
        out.push((reserve(&t, EXPANDABLE_SEGMENTS)?, s.parts));
    }
    Some(out)
}

/// The largest stage's reserved bytes (what [`super::estimate_with`] is to the allocated
/// figure): the explorer's and the planner's.
pub fn largest_reserved(model: &Model, params: &Params, plan: &Setup) -> Option<u128> {
    reserved_stages(model, params, plan, true)?
        .into_iter()
        .map(|(r, _)| r)
        .max()
}

#[cfg(test)]
mod fsdp_units {
    //! [`largest_fsdp_unit`] in exact parameters, torchtitan 0.3.0's grouping: Llama 3.1 8B's
    //! untied embedding and output layer (128,256 × 4,096 = 525,336,576 each), final norm (4,096)
    //! and blocks (218,112,000: q and o 4,096², k and v 4,096 × 1,024, a SwiGLU MLP of
    //! 3 × 4,096 × 14,336, two norms); Llama 3.2 1B's tied embedding (128,256 × 2,048).
    use super::{largest_fsdp_unit, Params, Partition, Setup};
    use crate::calc::model::preset;

    const EMBEDDING: u128 = 128_256 * 4096;
    const NORM: u128 = 4096;

    fn unit(name: &str, plan: &Setup, rank: u64, layers: u64) -> u128 {
        let m = preset(name).expect("preset");
        let params = Params::of(&m).unwrap();
        largest_fsdp_unit(&m, &params, plan, (rank, (layers, 0))).unwrap()
    }

    fn plan(tp: u64, pp: u64) -> Setup {
        Setup {
            tp,
            pp,
            shard: 8,
            sharding: Partition::Zero3,
            memory: crate::calc::plan::Conventions {
                fsdp_gather_stream: true,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            ..Setup::default()
        }
    }

    #[test]
    fn an_untied_embedding_and_the_norm_with_the_output_layer_are_units_apart() {
        let m = preset("meta-llama/Llama-3.1-8B").expect("preset");
        let (block, _) = Params::of(&m).unwrap().kind(false).unwrap();
        assert_eq!(block, 218_112_000);
        // one stage: [norm, lm_head], not 9dec370's root of the embedding, norm and output
        assert_eq!(
            unit("meta-llama/Llama-3.1-8B", &plan(1, 1), 0, 32),
            NORM + EMBEDDING
        );
        assert_eq!(NORM + EMBEDDING, 525_340_672);
        // over TP 2 the embedding and the output layer by vocabulary, the norm whole
        assert_eq!(
            unit("meta-llama/Llama-3.1-8B", &plan(2, 1), 0, 32),
            NORM + EMBEDDING / 2
        );
        // under PP: the embedding on the first stage, the norm and output on the last
        let pp = plan(1, 2);
        assert_eq!(unit("meta-llama/Llama-3.1-8B", &pp, 0, 16), EMBEDDING);
        assert_eq!(
            unit("meta-llama/Llama-3.1-8B", &pp, 1, 16),
            NORM + EMBEDDING
        );
        // a middle stage: a block
        let pp = plan(1, 4);
        assert_eq!(unit("meta-llama/Llama-3.1-8B", &pp, 1, 8), block);
    }

    #[test]
    fn a_tied_embedding_is_one_unit_with_the_norm_and_the_output_layer() {
        // [tok_embeddings, norm, lm_head]: the shared weight once
        assert_eq!(
            unit("meta-llama/Llama-3.2-1B", &plan(1, 1), 0, 16),
            128_256 * 2048 + 2048
        );
        assert_eq!(
            unit("meta-llama/Llama-3.2-1B", &plan(2, 1), 0, 16),
            128_256 * 2048 / 2 + 2048
        );
    }
}
