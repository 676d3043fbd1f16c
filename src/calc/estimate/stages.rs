//! Each pipeline stage's steady-state peak: the bytes one GPU of pipeline rank r holds when its
//! schedule has the most micro batches in flight. A mechanism estimate, not a measurement.
//!
//! - **Which layers a rank holds**: the virtual stages `c·p + r` of [`Pipeline::layers`] (the
//!   framework's split), or the layers split evenly (the first `L mod p·v` virtual stages one
//!   more). The first rank also holds the input embedding, the last the final norm and the output
//!   layer (a copy of a tied embedding when PP > 1, as Megatron-LM and torchtitan keep it).
//! - **How many micro batches are in flight** ([`in_flight`]), by the schedule: 1F1B keeps
//!   min(p − r, m) on rank r (Narayanan et al. 2021, §2.2.1); interleaved 1F1B runs
//!   `(p − r − 1)·2 + (v − 1)·group` warm-up forwards of its chunks and then one more before the
//!   first backward (Megatron-LM's `get_pp_rank_microbatches`; all `m·v` when the warm-up covers
//!   them); all-forward-all-backward keeps all m.
//! - **What a layer saves for its backward** ([`layer_bytes`]): the tensors of Korthikanti et
//!   al. 2022 (arXiv 2205.05198, §4.1), counted per tensor so that they follow the model's
//!   shape: the two norms' inputs and outputs, Q/K/V and the attention output (plus the softmax
//!   statistics of flash attention, or the scores of eager attention), the MLP's first
//!   projection output (gate and up when gated) and its activation's output, the 1-byte dropout
//!   masks when the framework's dropout is on. For the paper's GPT (GeLU MLP of 4h, multi-head
//!   attention, dropout) this is its sbh(34 + 5as/h) and sbh(10 + 24/t + 5as/(ht)). Sequence
//!   parallelism divides the norms' and masks' share by t, context and Ulysses parallelism divide
//!   the tokens. An MoE layer saves its router's fp32 logits and, per routed token (top-k), the
//!   dispatched input, the experts' projections and their output; Megatron-LM's what its
//!   allgather token dispatcher and experts save (`megatron_routed`), under balanced routing.
//! - **Recompute**: a checkpointed layer keeps its input (2·tokens·h); in backward one checkpoint
//!   group is recomputed whole, so its full activations are added once (Megatron's `uniform`
//!   groups, `block`'s first n layers of a chunk, or every layer).
//! - **The loss** (last stage): the output layer's input and the final norm's, and the logits:
//!   [`Conventions::logit_saved_bytes`](crate::calc::plan::Conventions::logit_saved_bytes) per logit for each micro batch in flight (the fp32 softmax
//!   Megatron's cross entropy keeps, the fp32 `log_softmax` PyTorch's keeps) plus
//!   [`Conventions::logit_transient_bytes`](crate::calc::plan::Conventions::logit_transient_bytes) once (the 16-bit logits, and PyTorch's fp32 copy of them,
//!   alive while the loss is computed).

use super::{cdiv, mul, part, MemoryParts, Params, Partition, Setup};
use crate::calc::model::Model;
use crate::calc::plan::{Pipeline, Recompute, RecomputeLayers, Schedule};

/// The transformer layers of each virtual stage (entry `c·p + r`): the pipeline's own split when
/// it gives one for `pp` ranks, else an even split.
pub fn layer_split(layers: u64, pp: u64, pipeline: Option<&Pipeline>) -> Option<Vec<u64>> {
    let v = pipeline.map_or(1, |p| p.virtual_stages.max(1));
    let n = pp.checked_mul(v)?;
    // (more virtual stages than layers is no split a framework accepts; stages beyond the
    // estimate's bound are none a cluster has, and would be allocated one by one)
    if n == 0 || v > layers.max(1) || n > super::MAX_LAYERS {
        return None;
    }
    if let Some(p) = pipeline {
        if p.layers.len() as u64 == n
            && p.layers.iter().try_fold(0u64, |a, &l| a.checked_add(l)) == Some(layers)
        {
            return Some(p.layers.clone());
        }
    }
    let (base, extra) = (layers / n, layers % n);
    Some((0..n).map(|k| base + u64::from(k < extra)).collect())
}

/// How many forward passes of each model chunk (index on the rank) rank `rank` has run and not
/// yet run backward at its peak.
pub fn in_flight(pipeline: Option<&Pipeline>, pp: u64, micro_batches: u64, rank: u64) -> Vec<u64> {
    let m = micro_batches.max(1);
    let (schedule, v) = match pipeline {
        Some(p) => (p.schedule, p.virtual_stages.max(1)),
        None => (Schedule::OneFOneB, 1),
    };
    let later = pp.saturating_sub(rank).saturating_sub(1);
    match schedule {
        Schedule::OneFOneB if v == 1 => vec![(later + 1).min(m)],
        Schedule::AllForwardAllBackward => vec![m; v as usize],
        Schedule::OneFOneB | Schedule::Interleaved { .. } | Schedule::ZeroBubble => {
            let group = match schedule {
                Schedule::Interleaved { group } if group > 0 => group,
                _ => pp.max(1),
            };
            let total = m.saturating_mul(v);
            let warmup = later
                .saturating_mul(2)
                .saturating_add((v - 1).saturating_mul(group));
            let mut left = if warmup >= total { total } else { warmup + 1 };
            // Megatron's schedule table: groups of `group` micro batches, each run through
            // every chunk before the next group starts (few rounds: `left` is at most the
            // warm-up, about 2p + v·group)
            let mut counts = vec![0u64; v as usize];
            let mut first = 0;
            while first < m && left > 0 {
                let size = group.min(m - first);
                for c in counts.iter_mut() {
                    let take = size.min(left);
                    *c += take;
                    left -= take;
                }
                first += size;
            }
            counts
        }
    }
}

/// What one layer saves for its backward: `(everything, its input alone)` in bytes, for
/// `tokens` tokens on this GPU (the sequence over CP and Ulysses, times the micro batch).
pub fn layer_bytes(model: &Model, i: u64, plan: &Setup, tokens: u128) -> Option<(u128, u128)> {
    let t = u128::from(plan.tp.max(1));
    let rep = if plan.sequence_parallel { t } else { 1 };
    let h = u128::from(model.hidden_size);
    let a = u128::from(model.num_attention_heads);
    let th = tokens.checked_mul(h)?;
    let per_rep = |k: u128| cdiv(th.checked_mul(k)?, rep);
    let per_t =
        |elements: u128, bytes: u128| cdiv(tokens.checked_mul(elements)?.checked_mul(bytes)?, t);
    let input = per_rep(2)?;
    let masks = if plan.memory.dropout { per_rep(2)? } else { 0 };
    // the two norms: input and output each, 16-bit
    let norms = per_rep(8)?;
    // Q, K, V and the attention output, and MLA's latents
    let mut attention =
        per_t(head_elements(model)?, 2)?.checked_add(mla_latents(model, tokens, rep)?)?;
    // selective recompute reruns the attention core; under full recompute the layer recomputed
    // in backward holds everything again
    let core_kept = plan.recompute != Recompute::Selective;
    let eager = !plan.flash_attention && core_kept;
    if eager {
        // the softmax output (and with dropout its mask and output) over the CP-local sequence
        let s_cp = cdiv(u128::from(plan.seq_len), u128::from(plan.cp.max(1)))?;
        let b = u128::from(plan.micro_batch);
        let per = if plan.memory.dropout { 5 } else { 2 };
        attention = attention.checked_add(cdiv(
            mul(&[per, a, s_cp, s_cp, b])?,
            t.checked_mul(u128::from(plan.sp.max(1)))?,
        )?)?;
    } else if plan.flash_attention && core_kept {
        // the fp32 log-sum-exp per head and token
        attention = attention.checked_add(per_t(a, 4)?)?;
    }
    let gate = if plan.gated_mlp { 2 } else { 1 };
    let mlp = if model.is_moe_layer(i) {
        moe_bytes(model, plan, tokens, rep)?
    } else {
        per_t(u128::from(model.intermediate_size), 2 * (gate + 1))?
    };
    let full = norms
        .checked_add(attention)?
        .checked_add(mlp)?
        .checked_add(masks)?;
    let full = match float8_saved(model, i, plan, tokens)? {
        Some(f) => full.checked_sub(f.bf16_dropped)?.checked_add(f.fp8)?,
        // DTensor's sequence parallelism: `attention` and `feed_forward` all-gather their
        // `Shard(1)` input (`PrepareModuleInput` to `Replicate()`), and the column-parallel
        // products save that whole 16-bit input for their weight gradients
        None if gathers_whole(plan) => full.checked_add(th.checked_mul(4)?)?,
        None => full,
    };
    Some((full, input))
}

/// What an MoE block saves for its backward, for `tokens` tokens on this GPU (`rep`: the
/// sequence-parallel split of the layer's input): the router's fp32 logits, the routed experts'
/// tensors ([`megatron_routed`] under [`Conventions::moe_allgather`](crate::calc::plan::Conventions::moe_allgather), else per routed token the
/// dispatched input and the combined output, 16-bit, and the experts' projections) and
/// DeepSeek's shared experts.
fn moe_bytes(model: &Model, plan: &Setup, tokens: u128, rep: u128) -> Option<u128> {
    let t = u128::from(plan.tp.max(1));
    let gate = if plan.gated_mlp { 2 } else { 1 };
    let e = u128::from(model.num_experts);
    let k = u128::from(model.num_experts_per_tok.max(1));
    let f = u128::from(model.expert_intermediate_size());
    let h = u128::from(model.hidden_size);
    let router = cdiv(mul(&[tokens, e, 4])?, rep)?;
    let etp = u128::from(plan.expert_tp());
    let experts = if plan.memory.moe_allgather {
        megatron_routed(model, plan, cdiv(tokens, rep)?)?
    } else {
        cdiv(tokens.checked_mul(k)?, rep)?.checked_mul(
            h.checked_mul(4)?
                .checked_add(f.checked_mul(2 * (gate + 1))? / etp)?,
        )?
    };
    let shared = if model.model_type.is_deepseek() && model.n_shared_experts > 0 {
        cdiv(
            mul(&[
                tokens,
                f,
                u128::from(model.n_shared_experts),
                2 * (gate + 1),
            ])?,
            t,
        )?
    } else {
        0
    };
    router.checked_add(experts)?.checked_add(shared)
}

/// What Megatron-LM's routed experts save for their backward under the allgather token
/// dispatcher (`--moe-token-dispatcher-type allgather`, the default), for the `local` tokens of
/// the layer's input on this GPU (the sequence-parallel shard). Megatron-LM at 6e091e1b68 (the
/// same at core_v0.19.0), megatron/core/transformer/moe/:
/// - `MoEAllGatherTokenDispatcher.token_dispatch` (token_dispatcher.py) all-gathers the hidden
///   states, the routing map and the probabilities over the expert-TP × EP group: `local ·
///   ETP · EP` tokens (the hidden states into the persistent global buffer, saved by nothing);
/// - `dispatch_postprocess` keeps the tokens routed to this rank's `E ÷ EP` experts: `permute`
///   (moe_utils.py, unfused: `--moe-permute-fusion` is off by default) copies them with
///   `tokens.index_select(0, sorted_indices)`, whose backward saves the int64 indices; under
///   balanced routing (the steady state the estimate is for) `local · k · ETP` tokens, each of
///   the full hidden size (every rank of the expert-TP group runs all of them through its shard of
///   the experts); their probabilities are `masked_select`ed by the local experts' routing map
///   (`[E ÷ EP, local · ETP · EP]` booleans, saved) into 16-bit values (the router's dtype
///   without `--moe-router-dtype`), saved by the product below;
/// - each expert (`SequentialMLP` → `MLP.forward`, megatron/core/transformer/mlp.py; the same
///   products in `TEGroupedMLP`, experts.py) saves its input (the permuted tokens), its first
///   projection's output and the activation's output, and scales that by the token's
///   probability (`per_token_scale`) into a new tensor, the second projection's saved input: a
///   GeLU expert takes this unfused path (the fused bias-GeLU refuses a per-token scale), a gated
///   one with `--bias-swiglu-fusion` (on by default) `weighted_bias_swiglu_impl`, which saves its
///   input and the scale and whose output is the second projection's input, as a dense MLP's;
/// - `unpermute` adds the experts' outputs back (`index_add_`, saving the same indices) and
///   `token_combine` reduce-scatters them: nothing more is saved.
fn megatron_routed(model: &Model, plan: &Setup, local: u128) -> Option<u128> {
    let gate = if plan.gated_mlp { 2 } else { 1 };
    let scaled_copy = if plan.gated_mlp { 0 } else { 1 };
    let k = u128::from(model.num_experts_per_tok.max(1));
    let f = u128::from(model.expert_intermediate_size());
    let h = u128::from(model.hidden_size);
    let etp = u128::from(plan.expert_tp());
    let ep = u128::from(plan.ep.max(1));
    let local_experts = (u128::from(model.num_experts) / ep).max(1);
    let gathered = mul(&[local, etp, ep])?;
    let routed = mul(&[local, k, etp])?;
    // per routed token: the 16-bit input (h), the experts' 16-bit projections (f ÷ ETP each),
    // the int64 index and the 16-bit probability
    let per_token = mul(&[2, h])?
        .checked_add(mul(&[2, gate + 1 + scaled_copy, f])? / etp)?
        .checked_add(8 + 2)?;
    routed
        .checked_mul(per_token)?
        .checked_add(gathered.checked_mul(local_experts)?)
}

/// The elements per token of Q, K, V and the attention output (over all heads).
fn head_elements(model: &Model) -> Option<u128> {
    let a = u128::from(model.num_attention_heads);
    let (qk, v, kv) = if model.is_mla() {
        let qk = u128::from(model.qk_nope_head_dim) + u128::from(model.qk_rope_head_dim);
        (qk, u128::from(model.v_head_dim), a)
    } else {
        let d = u128::from(model.resolved_head_dim()?);
        (d, d, u128::from(model.num_key_value_heads))
    };
    // Q (a heads) and K (kv heads) of qk, V (kv heads) and the output (a heads) of v
    mul(&[a.checked_add(kv)?, qk])?.checked_add(mul(&[a.checked_add(kv)?, v])?)
}

/// What multi-latent attention saves beside Q, K, V and its output: the 16-bit latent inputs
/// of its up projections, the query's `q_lora_rank` (with a low-rank query) and the key/value's
/// `kv_lora_rank`, and with latent norms ([`Model::mla_latent_norms`]) each norm's input as
/// well. Megatron's `MLASelfAttention.get_query_key_value_tensors`
/// (megatron/core/transformer/multi_latent_attention.py at 5fe3f06) runs the down projections
/// as `TELinear(parallel_mode="duplicated")` on the sequence-parallel shard, so the latents are
/// `[s/TP, b, rank]` under sequence parallelism and whole on each TP rank without it; the up
/// projections are column-parallel TE linears, which save their local (not all-gathered) input
/// (`_Linear.forward`: `saved_inputmat = inputmat`, transformer_engine/pytorch/module/linear.py),
/// made contiguous first (`prepare_forward`), so the key/value latent, a split view of the down
/// projection's output, is saved as its own `kv_lora_rank` copy. The rotary position parts keep
/// only their cos/sin tables (`ApplyMLARotaryEmbQ/KV` save `cos, sin`; unfused, the products with
/// them save the tables), and `query`, `key` and `value` are new contiguous tensors (`torch.cat`,
/// `.contiguous()`), counted with the attention.
fn mla_latents(model: &Model, tokens: u128, rep: u128) -> Option<u128> {
    if !model.is_mla() {
        return Some(0);
    }
    let ranks =
        u128::from(model.q_lora_rank.unwrap_or(0)).checked_add(u128::from(model.kv_lora_rank))?;
    let copies = if model.mla_latent_norms() { 2 } else { 1 };
    cdiv(mul(&[tokens, ranks, 2, copies])?, rep)
}

/// Whether each column-parallel linear layer saves its whole all-gathered input: DTensor's
/// tensor parallelism ([`Conventions::dtensor_tp`](crate::calc::plan::Conventions::dtensor_tp)) with sequence parallelism.
fn gathers_whole(plan: &Setup) -> bool {
    plan.memory.dtensor_tp && plan.sequence_parallel && plan.tp > 1
}

/// What torchao's float8 linear layers change in what a layer saves (`Fp8::Tensorwise`, as
/// torchtitan's float8 converter configures them: dynamic tensorwise scaling; torchao at
/// eab345c, the commit of torchtitan's 2024-12 benchmark).
struct Float8Saved {
    /// The 16-bit linear inputs no longer saved: the two norms' outputs and the MLP's product
    /// `silu(w1 x) · w3 x` (each read only by its linear layers).
    bf16_dropped: u128,
    /// The 8-bit tensors saved instead, 1 byte per value.
    fp8: u128,
    /// The 16-bit `abs` of each cast input and weight (per-op checkpointing caches it).
    abs: u128,
}

/// Float8 linear layers (torchao eab345c, `float8/float8_linear.py`): `Float8Linear.forward`
/// casts its input and its weight to float8 and calls `manual_float8_matmul_with_args_in_float8`,
/// whose `forward` keeps `ctx.save_for_backward(input_fp8, weight_fp8_t)`: each linear layer
/// saves its input in fp8 (not its 16-bit input) and its weight's fp8 transpose (1 byte per
/// weight of the layer after TP; `force_recompute_fp8_weight_in_bwd` is off by default and not
/// a torchtitan option at 9dec370). Each layer casts its own input, so eager PyTorch keeps
/// three fp8 copies of the first norm's output (`wq`, `wk`, `wv`) and one per MLP input
/// projection of the second's; torch.compile's common-subexpression pass
/// (`functorch.config.cse`) keeps one of each. The attention output stays saved in 16 bits for
/// the attention's backward and in fp8 for `wo`. Each cast computes its scale as
/// `torch.max(torch.abs(x))` (`float8_utils.tensor_to_amax`): [`Float8Saved::abs`] is those
/// 16-bit `abs` outputs. `None`: not float8 (or an MLA layer); an MoE layer's experts are not
/// converted (their grouped products are no `nn.Linear`), only its attention.
fn float8_saved(model: &Model, i: u64, plan: &Setup, tokens: u128) -> Option<Option<Float8Saved>> {
    if plan.fp8 != Some(crate::calc::plan::Fp8::Tensorwise) || model.is_mla() {
        return Some(None);
    }
    let t = u128::from(plan.tp.max(1));
    let rep = if plan.sequence_parallel { t } else { 1 };
    let h = u128::from(model.hidden_size);
    let ad = u128::from(model.num_attention_heads)
        .checked_mul(u128::from(model.resolved_head_dim()?))?;
    let kvd = u128::from(model.num_key_value_heads)
        .checked_mul(u128::from(model.resolved_head_dim()?))?;
    let f = u128::from(model.intermediate_size);
    let gate = if plan.gated_mlp { 2 } else { 1 };
    let compiled = plan.fusion == crate::calc::plan::Fusion::Compiled;
    let per_rep = |bytes: u128| cdiv(tokens.checked_mul(h)?.checked_mul(bytes)?, rep);
    let per_t =
        |elements: u128, bytes: u128| cdiv(tokens.checked_mul(elements)?.checked_mul(bytes)?, t);
    let dense = !model.is_moe_layer(i);
    // the linear layers' inputs (per cast) and weights, of the attention and a dense MLP
    let (qkv_casts, mlp_casts) = if compiled { (1, 1) } else { (3, gate) };
    // DTensor's sequence parallelism: `PrepareFloat8ModuleInput` casts the module's `Shard(1)`
    // input once and all-gathers it in fp8; its products save that whole fp8 input
    let whole = gathers_whole(plan);
    let norm_cast = |casts: u128| {
        if whole {
            tokens.checked_mul(h)
        } else {
            per_rep(casts)
        }
    };
    let mut casts = norm_cast(qkv_casts)?.checked_add(per_t(ad, 1)?)?;
    let mut weights = h.checked_mul(ad.checked_mul(2)?.checked_add(kvd.checked_mul(2)?)?)?;
    let mut bf16_dropped = per_rep(2)?;
    let mut abs = per_rep(6)?.checked_add(per_t(ad, 2)?)?;
    if dense {
        casts = casts
            .checked_add(norm_cast(mlp_casts)?)?
            .checked_add(per_t(f, 1)?)?;
        weights = weights.checked_add(h.checked_mul(f)?.checked_mul(gate + 1)?)?;
        bf16_dropped = bf16_dropped
            .checked_add(per_rep(2)?)?
            .checked_add(per_t(f, 2)?)?;
        abs = abs
            .checked_add(per_rep(2 * gate)?)?
            .checked_add(per_t(f, 2)?)?;
    }
    let weights = cdiv(weights, t)?;
    Some(Some(Float8Saved {
        bf16_dropped,
        fp8: casts.checked_add(weights)?,
        abs: abs.checked_add(weights.checked_mul(2)?)?,
    }))
}

/// What layer `i` keeps under torchtitan's per-op selective checkpointing (`selective_ac_option
/// = "op"`), or `None` where that rule does not apply (other recompute, an MoE or MLA layer).
///
/// torchtitan's policy (`_save_list` and `_custom_policy` in
/// `torchtitan/parallelisms/parallelize_llama.py` at 9dec370, the same rule in
/// `torchtitan/distributed/activation_checkpoint.py` at HEAD) keeps the outputs of the ops in its
/// save list and recomputes every other op; of the matrix products it keeps the odd ones in
/// forward order (`mm_count % 2 == 0` recomputes the even). A Llama block runs `wq`, `wk`, `wv`,
/// `wo`, then `w2(silu(w1(x)) * w3(x))`: `w1`, `w3`, `w2`. So it keeps the block's input (the
/// checkpoint's argument), `wq`'s and `wv`'s outputs, the attention op's output and fp32
/// log-sum-exp (`_scaled_dot_product_flash_attention` is in the list), `w1`'s and `w2`'s outputs;
/// `w2`'s output is the partial sum before TP's reduction (the full hidden state on each TP rank)
/// and, with sequence parallelism, the reduce-scatter's output (`reduce_scatter_tensor` is in the
/// list) is kept as well. Without a gate the MLP's two products are `w1` (kept) and `w2`.
pub fn per_op_kept(model: &Model, i: u64, plan: &Setup, tokens: u128) -> Option<Option<u128>> {
    if plan.recompute != Recompute::Selective
        || !plan.selective_half_matmuls
        || model.is_mla()
        || model.is_moe_layer(i)
    {
        return Some(None);
    }
    let t = u128::from(plan.tp.max(1));
    let h = u128::from(model.hidden_size);
    let a = u128::from(model.num_attention_heads);
    let d = u128::from(model.resolved_head_dim()?);
    let kv = u128::from(model.num_key_value_heads);
    let f = u128::from(model.intermediate_size);
    let per_t =
        |elements: u128, bytes: u128| cdiv(tokens.checked_mul(elements)?.checked_mul(bytes)?, t);
    let th2 = tokens.checked_mul(h)?.checked_mul(2)?;
    let rep = if plan.sequence_parallel { t } else { 1 };
    let input = cdiv(th2, rep)?;
    // wq, wv and the attention's output (16-bit), its log-sum-exp (fp32)
    let attention = per_t(a.checked_mul(d)?.checked_mul(2)?.checked_add(kv * d)?, 2)?
        .checked_add(per_t(a, 4)?)?;
    // w1's output, and w2's: the seventh product with a gate, the sixth (recomputed) without
    let mut mlp = per_t(f, 2)?;
    if plan.gated_mlp {
        mlp = mlp.checked_add(th2)?;
        if plan.sequence_parallel && t > 1 {
            mlp = mlp.checked_add(cdiv(th2, t)?)?;
        }
    }
    let kept = input.checked_add(attention)?.checked_add(mlp)?;
    // float8 (see [`float8_saved`]): the policy sees a `Float8Tensor`'s product as
    // `aten.mm.default` (torchao's `float8_ops.py` implements it, `float8_mm`), so it keeps the
    // same 16-bit outputs; `abs` is in `_save_list` too ("for low precision training"), so
    // eager caches each cast's 16-bit `abs` output. Compiled, the partitioner bans their
    // recomputation (MUST_SAVE) but the backward needs only the scale `max` reduces them to,
    // so the min cut saves that scalar and no `abs` output (`solve_min_cut`,
    // torch/_functorch/partitioners.py)
    let abs = match float8_saved(model, i, plan, tokens)? {
        Some(f) if plan.fusion != crate::calc::plan::Fusion::Compiled => f.abs,
        _ => 0,
    };
    Some(Some(kept.checked_add(abs)?))
}

/// The bytes one in-flight pass of `layers` consecutive layers (from `first`) keeps, and what its
/// backward adds at most on top while it recomputes a checkpoint group.
fn chunk_bytes(
    model: &Model,
    plan: &Setup,
    first: u64,
    layers: u64,
    tokens: u128,
    alike: bool,
) -> Option<(u128, u128)> {
    if alike && layers > 0 {
        let full = layer_bytes(model, first, plan, tokens)?;
        if let Some(kept) = per_op_kept(model, first, plan, tokens)? {
            let l = u128::from(layers);
            return Some((kept.checked_mul(l)?, full.0.saturating_sub(kept)));
        }
        return alike_chunk_bytes(full, plan, layers);
    }
    let mut kept = 0u128;
    let mut recomputed = 0u128;
    let mut group = 0u128;
    for j in 0..layers {
        let (full, input) = layer_bytes(model, first + j, plan, tokens)?;
        // per-op checkpointing: the layer keeps its saved ops' outputs; its backward rebuilds
        // the rest of what it saves, one layer at a time
        if let Some(k) = per_op_kept(model, first + j, plan, tokens)? {
            kept = kept.checked_add(k)?;
            recomputed = recomputed.max(full.saturating_sub(k));
            continue;
        }
        let checkpointed = plan.recompute == Recompute::Full
            && match plan.recompute_layers {
                RecomputeLayers::Every => true,
                RecomputeLayers::Uniform(_) => true,
                RecomputeLayers::Block(n) => j < n,
            };
        if !checkpointed {
            kept = kept.checked_add(full)?;
            continue;
        }
        let n = match plan.recompute_layers {
            RecomputeLayers::Uniform(n) => n.max(1),
            _ => 1,
        };
        if j % n == 0 {
            kept = kept.checked_add(input)?;
            group = 0;
        }
        group = group.checked_add(full)?;
        recomputed = recomputed.max(group);
    }
    Some((kept, recomputed))
}

/// [`chunk_bytes`] of `layers` alike layers, each keeping `full` bytes (`input` when
/// checkpointed), counted by their number: each checkpoint group keeps its input, the layers
/// past a block keep everything, and the largest group's full activations are recomputed at once.
fn alike_chunk_bytes(
    (full, input): (u128, u128),
    plan: &Setup,
    layers: u64,
) -> Option<(u128, u128)> {
    let l = u128::from(layers);
    if plan.recompute != Recompute::Full {
        return Some((full.checked_mul(l)?, 0));
    }
    let (checkpointed, group) = match plan.recompute_layers {
        RecomputeLayers::Every => (l, 1),
        RecomputeLayers::Uniform(n) => (l, u128::from(n.max(1))),
        RecomputeLayers::Block(n) => (l.min(u128::from(n)), 1),
    };
    let kept = input
        .checked_mul(checkpointed.div_ceil(group))?
        .checked_add(full.checked_mul(l - checkpointed)?)?;
    let recomputed = full.checked_mul(group.min(checkpointed))?;
    Some((kept, recomputed))
}

/// Every pipeline rank's estimate, first rank first.
pub fn stages(model: &Model, params: &Params, plan: &Setup) -> Option<Vec<MemoryParts>> {
    Some(
        stages_of(model, params, plan, false)?
            .into_iter()
            .map(|s| s.parts)
            .collect(),
    )
}

/// One pipeline rank's estimate: the rank, its transformer layers by kind (without and with an
/// MoE block) and its memory by part.
pub(super) struct RankedStage {
    pub rank: u64,
    pub layers: (u64, u64),
    pub parts: MemoryParts,
}

/// Every pipeline rank's estimate with its rank (`few`: only the candidates for the largest, see
/// [`ranks`]), first rank first.
pub(super) fn ranked(
    model: &Model,
    params: &Params,
    plan: &Setup,
    few: bool,
) -> Option<Vec<RankedStage>> {
    stages_of(model, params, plan, few)
}

/// The transformer layers pipeline rank `rank` holds, by kind: `(without, with an MoE block)`.
pub(super) fn rank_layer_kinds(model: &Model, plan: &Setup, rank: u64) -> Option<(u64, u64)> {
    let p = plan.pp.max(1);
    let split = layer_split(model.num_hidden_layers, p, plan.pipeline.as_ref())?;
    let starts = chunk_starts(&split)?;
    rank_kinds(model, (&split, &starts), (p, split.len() as u64 / p, rank))
}

/// The first layer of each virtual stage of `split`.
fn chunk_starts(split: &[u64]) -> Option<Vec<u64>> {
    let mut starts = Vec::with_capacity(split.len());
    let mut at = 0u64;
    for &l in split {
        starts.push(at);
        at = at.checked_add(l)?;
    }
    Some(starts)
}

/// Rank `r`'s layers (its `v` chunks of `p` ranks) by kind: `(without, with an MoE block)`.
fn rank_kinds(
    model: &Model,
    (split, starts): (&[u64], &[u64]),
    (p, v, r): (u64, u64, u64),
) -> Option<(u64, u64)> {
    let (mut dense, mut moe) = (0u64, 0u64);
    for c in 0..v {
        let k = usize::try_from(c.checked_mul(p)?.checked_add(r)?).ok()?;
        let (first, n) = (*starts.get(k)?, *split.get(k)?);
        let m = model.moe_blocks_in(first..first.checked_add(n)?);
        dense = dense.checked_add(n - m)?;
        moe = moe.checked_add(m)?;
    }
    Some((dense, moe))
}

/// The tokens one GPU holds per micro batch: the sequence over CP and Ulysses, times the micro
/// batch.
pub(super) fn local_tokens(plan: &Setup) -> Option<u128> {
    cdiv(
        cdiv(u128::from(plan.seq_len), u128::from(plan.cp.max(1)))?,
        u128::from(plan.sp.max(1)),
    )?
    .checked_mul(u128::from(plan.micro_batch))
}

/// The ranks whose estimate can be the largest: all of them, or, when every layer is alike and
/// the layers split evenly (`few`), the first, the second and the last. Then a middle rank
/// holds no more layers than the second (the first `L mod p·v` virtual stages take one more)
/// and no more micro batches in flight (each schedule's count falls with the rank), and neither
/// the embedding (the first) nor the output layer and the loss (the last).
fn ranks(p: u64, few: bool) -> Vec<u64> {
    if few && p > 3 {
        vec![0, 1, p - 1]
    } else {
        (0..p).collect()
    }
}

/// The candidates for the largest stage (see [`ranks`]), first rank first; what
/// [`super::estimate_with`] picks from.
pub(super) fn largest_candidates(
    model: &Model,
    params: &Params,
    plan: &Setup,
) -> Option<Vec<MemoryParts>> {
    Some(
        stages_of(model, params, plan, true)?
            .into_iter()
            .map(|s| s.parts)
            .collect(),
    )
}

fn stages_of(model: &Model, params: &Params, plan: &Setup, few: bool) -> Option<Vec<RankedStage>> {
    if [plan.tp, plan.pp, plan.cp, plan.sp, plan.ep, plan.shard].contains(&0) {
        return None;
    }
    let p = plan.pp;
    let few = few
        && params.uniform.is_some()
        && plan.pipeline.as_ref().is_none_or(|pl| pl.layers.is_empty());
    let pipeline = plan.pipeline.as_ref();
    let split = layer_split(model.num_hidden_layers, p, pipeline)?;
    let v = split.len() as u64 / p;
    let starts = chunk_starts(&split)?;
    let tokens = local_tokens(plan)?;
    let t = u128::from(plan.tp.max(1));
    let rep = if plan.sequence_parallel { t } else { 1 };
    let h = u128::from(model.hidden_size);
    let mut out = Vec::with_capacity(p as usize);
    for r in ranks(p, few) {
        // the rank's parameters: its layers, the embedding on the first, the output on the last
        let layers = rank_kinds(model, (&split, &starts), (p, v, r))?;
        let (dense, routed) = rank_params(model, params, layers, (p, r))?;
        let plain = if plan.weight_bits == 4 {
            cdiv(unquantized(model, layers, (p, r))?, t)?
        } else {
            0
        };
        let mut e = states(
            plan,
            (cdiv(dense, t)?, plain),
            cdiv(
                routed,
                u128::from(plan.expert_tp()).checked_mul(u128::from(plan.ep.max(1)))?,
            )?,
        )?;
        let (gathered, unsharded) = pipeline_fsdp_kept(model, params, plan, (r, layers))?;
        let [norm, output] = fsdp_output_kept(model, plan, r)?;
        e.weights = e
            .weights
            .checked_add(gathered)?
            .checked_add(norm)?
            .checked_add(output)?;
        e.gradients = e.gradients.checked_add(unsharded)?;
        // activations of the passes in flight, and the largest recompute on top
        let mut activations = 0u128;
        let mut recompute_peak = 0u128;
        let counts = in_flight(pipeline, p, plan.micro_batches, r);
        let mut last_in_flight = 0u128;
        for (c, &n) in counts.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let n = u128::from(n);
            let k = c * p as usize + r as usize;
            let alike = params.uniform.is_some();
            let (kept, again) = chunk_bytes(model, plan, starts[k], split[k], tokens, alike)?;
            activations = activations.checked_add(kept.checked_mul(n)?)?;
            recompute_peak = recompute_peak.max(again);
            if k == 0 && plan.memory.dropout {
                let input = cdiv(tokens.checked_mul(h)?, rep)?;
                activations = activations.checked_add(input.checked_mul(n)?)?;
            }
            if k == split.len() - 1 {
                last_in_flight = n;
            }
        }
        if last_in_flight > 0 {
            activations = with_output_layer(model, plan, tokens, activations, last_in_flight)?;
        }
        e.activations = activations
            .checked_add(recompute_peak)?
            .checked_add(global_buffer_bytes(model, plan, r, layers)?)?;
        out.push(RankedStage {
            rank: r,
            layers,
            parts: e,
        });
    }
    Some(out)
}

/// Megatron-LM's persistent global memory buffer on one GPU of pipeline rank `rank` holding
/// `(dense, moe)` layers ([`Setup::global_buffer`]), counted in the activations: 16-bit, the
/// largest request of the stage, as `GlobalMemoryBuffer.get_tensor` (megatron/core/utils.py at
/// 6e091e1b68, core_v0.19.0; the same at the local records' config commits 60166922, d36e75c and
/// a53107c) keeps one tensor per name and dtype, `("mpu", bf16)` here, allocates a new one
/// only when a request outgrows it and never frees it. Its requests, all under "mpu":
/// - under `--transformer-impl local`, each layer's core attention (`DotProductAttention.forward`,
///   megatron/core/transformer/dot_product_attention.py) takes `matmul_input_buffer`, `[b · a/t,
///   s, s]`, as `baddbmm`'s input (`beta=0`, its contents unused);
/// - with sequence parallelism, `LinearWithGradAccumulationAndAsyncCommunication` (megatron/core/
///   tensor_parallel/layers.py) all-gathers a column-parallel linear's input, `[s, b, h]`, in
///   forward and again for the weight gradient: every layer's under the local implementation,
///   and under Transformer Engine (whose linears gather in their own buffers) only the output
///   layer's, `tensor_parallel.ColumnParallelLinear` in `GPTModel` (the last stage);
/// - the MoE allgather dispatcher (`MoEAllGatherTokenDispatcher.token_dispatch`, megatron/core/
///   transformer/moe/token_dispatcher.py) gathers the hidden states over expert-TP × EP
///   (`use_global_buffer=True`; no gather over one GPU).
pub(super) fn global_buffer_bytes(
    model: &Model,
    plan: &Setup,
    rank: u64,
    (dense, moe): (u64, u64),
) -> Option<u128> {
    use crate::calc::plan::GlobalBuffer;
    let local = match plan.global_buffer {
        GlobalBuffer::None => return Some(0),
        GlobalBuffer::TransformerEngine => false,
        GlobalBuffer::Local => true,
    };
    let layers = dense.checked_add(moe)? > 0;
    let t = u128::from(plan.tp.max(1));
    let tokens = local_tokens(plan)?;
    let h = u128::from(model.hidden_size);
    let mut largest = 0u128;
    if local && layers {
        let s_cp = cdiv(u128::from(plan.seq_len), u128::from(plan.cp.max(1)))?;
        let heads = mul(&[
            u128::from(model.num_attention_heads),
            s_cp,
            s_cp,
            u128::from(plan.micro_batch),
        ])?;
        largest = largest.max(cdiv(heads, t.checked_mul(u128::from(plan.sp.max(1)))?)?);
    }
    let last = rank.checked_add(1)? == plan.pp.max(1);
    if plan.sequence_parallel && t > 1 && ((local && layers) || last) {
        largest = largest.max(tokens.checked_mul(h)?);
    }
    let group = u128::from(plan.expert_tp()).checked_mul(u128::from(plan.ep.max(1)))?;
    if plan.memory.moe_allgather && moe > 0 && group > 1 {
        let rep = if plan.sequence_parallel { t } else { 1 };
        largest = largest.max(mul(&[cdiv(tokens, rep)?, group, h])?);
    }
    largest.checked_mul(2)
}

/// What FSDP2 keeps beside the sharded model states under pipeline parallelism
/// ([`Conventions::fsdp_pipeline_keeps`](crate::calc::plan::Conventions::fsdp_pipeline_keeps)) on one GPU of pipeline rank `rank` holding `layers`
/// (without and with an MoE block): `(gathered, unsharded)`, the stage's parameters gathered in
/// 16 bits (FSDP2's `param_dtype`) at its first forward and kept until its gradients are
/// reduced after the last backward (torchtitan's `reshard_after_forward=False` under PP), and
/// their gradients, unsharded and accumulated over the micro batches in the reduce dtype (fp32
/// with [`Conventions::fp32_grads`](crate::calc::plan::Conventions::fp32_grads), torchtitan's `mixed_precision_reduce`: torch.distributed.pipelining
/// syncs them only after the last backward). Both are the stage's parameters over TP (the
/// routed experts over their TP × EP), not over the sharding group; only trained parameters
/// have gradients. It applies over one GPU too: torchtitan 0.3.0 applies FSDP2 whatever the
/// shard degree (models/llama3/parallelize.py:69-90@0.3.0, "with shard_degree=1 it is a no-op
/// for the all-gather"; 9dec370 applied it only when dp_shard × cp > 1, a release no dpcalc key
/// means), and a world-size-1 group keeps the same two (torch 2.15,
/// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py): `wait_for_unshard`'s
/// `world_size == 1` branch (l.523-552) copies each parameter's 16-bit `all_gather_inputs`
/// into its own `all_gather_outputs` storage, which `reshard` (l.586-596) keeps without
/// `reshard_after_forward`, and with gradient sync off `post_backward` (l.712-716) casts the
/// unsharded gradient to its fp32 `unsharded_grad_dtype` (`_set_unsharded_grad_dtypes`,
/// l.934-951) for the next backward to accumulate into. `(0, 0)` where it does not apply: no
/// pipeline, parameters not sharded ([`Partition::Zero3`]), or the parameters offloaded.
pub(super) fn pipeline_fsdp_kept(
    model: &Model,
    params: &Params,
    plan: &Setup,
    (rank, layers): (u64, (u64, u64)),
) -> Option<(u128, u128)> {
    if !plan.memory.fsdp_pipeline_keeps
        || plan.pp < 2
        || plan.sharding != Partition::Zero3
        || plan.offload_param
    {
        return Some((0, 0));
    }
    let (dense, routed) = rank_params(model, params, layers, (plan.pp, rank))?;
    let t = u128::from(plan.tp.max(1));
    let on_gpu = cdiv(dense, t)?.checked_add(cdiv(
        routed,
        u128::from(plan.expert_tp()).checked_mul(u128::from(plan.ep.max(1)))?,
    )?)?;
    let trained = match plan.trainable {
        None => on_gpu,
        Some(n) => cdiv(n, t.checked_mul(u128::from(plan.pp))?)?,
    };
    let grad_bits = if plan.memory.fp32_grads { 32 } else { 16 };
    Some((
        part(on_gpu, 16, 1, false)?,
        part(trained, grad_bits, 1, false)?,
    ))
}

/// [`pipeline_fsdp_kept`] of pipeline rank `rank`: what the worked step names.
pub fn pipeline_fsdp_kept_at(
    model: &Model,
    params: &Params,
    plan: &Setup,
    rank: u64,
) -> Option<(u128, u128)> {
    let layers = rank_layer_kinds(model, plan, rank)?;
    pipeline_fsdp_kept(model, params, plan, (rank, layers))
}

/// What FSDP2 keeps gathered without pipeline parallelism ([`Conventions::fsdp_output_kept`](crate::calc::plan::Conventions::fsdp_output_kept)) on one
/// GPU of pipeline rank `rank`: `[norm, output]`, the final norm's and the output layer's 16-bit
/// parameters (the tied embedding's weight when tied: the same tensor). torchtitan 0.3.0 shards
/// them as one unit with `reshard_after_forward=reshard_after_forward_policy == "always"`
/// (`apply_fsdp_to_decoder`, torchtitan/distributed/fsdp.py:180-207; with a tied embedding
/// `[tok_embeddings, norm, lm_head]`), and the policy's default is "default"
/// (`fsdp_reshard_after_forward`, config/configs.py:136), so the unit stays gathered from its
/// forward through the loss to its backward (FSDP2's `FSDPParamGroup.reshard` keeps a unit
/// without `reshard_after_forward` in forward; `post_backward` reshards it,
/// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, torch 2.15): beside the logits at
/// the stage's peak. The blocks and an untied embedding reshard after forward
/// (`get_fsdp_reshard_after_forward_policy`: `not pp_enabled`). 0.3.0 applies FSDP2 to the
/// model whatever the shard degree (models/llama3/parallelize.py:69-89: "with shard_degree=1
/// it is a no-op for the all-gather"), and FSDP2 copies the 16-bit parameters into their own
/// storage over one GPU too (`wait_for_unshard`, `world_size == 1`). Over TP the output layer
/// (and a tied embedding) is split by vocabulary (`Shard(0)`) and the norm whole
/// (models/common/decoder_sharding.py `set_decoder_sharding_config`). `[0, 0]` where it does not
/// apply: not the last rank, FSDP that does not reshard after forward (nothing to keep apart)
/// or pipeline parallelism, where [`pipeline_fsdp_kept`] counts the stage whole.
pub fn fsdp_output_kept(model: &Model, plan: &Setup, rank: u64) -> Option<[u128; 2]> {
    if !plan.memory.fsdp_output_kept
        || plan.pp > 1
        || plan.sharding != Partition::Zero3
        || rank + 1 != plan.pp.max(1)
    {
        return Some([0, 0]);
    }
    let output = cdiv(model.output_layer_params()?, u128::from(plan.tp.max(1)))?;
    Some([
        part(model.final_norm_params()?, 16, 1, false)?,
        part(output, 16, 1, false)?,
    ])
}

/// The parameters of pipeline rank `r` of `p` holding `layers` (without and with an MoE
/// block): its layers' dense and routed parameters, the embedding on the first rank, the final
/// norm and output layer on the last.
fn rank_params(
    model: &Model,
    params: &Params,
    (dense_layers, moe_layers): (u64, u64),
    (p, r): (u64, u64),
) -> Option<(u128, u128)> {
    let embedding = model.embedding_params()?;
    let (mut dense, mut routed) = (0u128, 0u128);
    // each kind of layer by its number
    for (count, kind) in [(dense_layers, false), (moe_layers, true)] {
        if count == 0 {
            continue;
        }
        let (all, experts) = params.kind(kind)?;
        let count = u128::from(count);
        dense = dense.checked_add(all.checked_sub(experts)?.checked_mul(count)?)?;
        routed = routed.checked_add(experts.checked_mul(count)?)?;
    }
    if r == 0 {
        dense = dense.checked_add(embedding)?;
    }
    if r == p - 1 {
        dense = dense.checked_add(model.final_norm_params()?)?;
        if !model.tie_word_embeddings || p > 1 {
            dense = dense.checked_add(model.output_layer_params()?)?;
        }
    }
    Some((dense, routed))
}

/// The parameters of pipeline rank `r` of `p` that a 4-bit base leaves in 16 bits: the
/// embedding (first rank), the final norm and the output layer (last rank; transformers'
/// `get_keys_to_not_convert` keeps the output embedding unquantized) and each layer's norms.
fn unquantized(
    model: &Model,
    (dense_layers, moe_layers): (u64, u64),
    (p, r): (u64, u64),
) -> Option<u128> {
    let layers = u128::from(dense_layers.checked_add(moe_layers)?);
    let mut plain = model.layer_norm_params()?.checked_mul(layers)?;
    if r == 0 {
        plain = plain.checked_add(model.embedding_params()?)?;
    }
    if r == p - 1 {
        plain = plain.checked_add(model.final_norm_params()?)?;
        if !model.tie_word_embeddings || p > 1 {
            plain = plain.checked_add(model.output_layer_params()?)?;
        }
    }
    Some(plain)
}

/// The bytes of `n` weights in bitsandbytes' NF4 with double quantization, as axolotl loads a
/// QLoRA base (`loaders/model.py`: `bnb_4bit_quant_type: nf4`, `bnb_4bit_use_double_quant:
/// True`): bitsandbytes `functional.quantize_4bit` packs two 4-bit codes per byte in blocks of
/// `blocksize=64`, each block with an absmax; `compress_statistics` quantizes those absmax to
/// 8 bits (`quantize_blockwise(absmax - offset, blocksize=256)`), each 256 of them with an fp32
/// absmax of its own (the one fp32 offset per tensor is not counted). 4.127 bits per weight.
pub fn nf4_bytes(n: u128) -> Option<u128> {
    let blocks = cdiv(n, 64)?;
    cdiv(n, 2)?
        .checked_add(blocks)?
        .checked_add(cdiv(blocks, 256)?.checked_mul(4)?)
}

/// The activations with the output layer's on the last stage: the saved final hidden state and
/// logits of the `last_in_flight` passes in flight, and one pass's transient logits.
fn with_output_layer(
    model: &Model,
    plan: &Setup,
    tokens: u128,
    activations: u128,
    last_in_flight: u128,
) -> Option<u128> {
    let t = u128::from(plan.tp.max(1));
    let rep = if plan.sequence_parallel { t } else { 1 };
    let h = u128::from(model.hidden_size);
    let logits = cdiv(tokens.checked_mul(u128::from(model.vocab_size))?, t)?;
    // DTensor's sequence parallelism: the output layer (`ColwiseParallel(input_layouts=
    // Shard(1))`) saves its whole all-gathered 16-bit input
    let gathered = if gathers_whole(plan) {
        tokens.checked_mul(h)?.checked_mul(2)?
    } else {
        0
    };
    let saved = cdiv(tokens.checked_mul(h)?.checked_mul(4)?, rep)?
        .checked_add(gathered)?
        .checked_add(logits.checked_mul(u128::from(plan.memory.logit_saved_bytes))?)?;
    let transient = if plan.tp > 1 && plan.memory.loss_parallel_transient_bytes > 0 {
        plan.memory.loss_parallel_transient_bytes
    } else {
        plan.memory.logit_transient_bytes
    };
    activations
        .checked_add(saved.checked_mul(last_in_flight)?)?
        .checked_add(logits.checked_mul(u128::from(transient))?)?
        .checked_add(deferred_wgrad(plan, tokens, h, logits)?)
}

/// What Megatron's deferred embedding weight gradients keep on the last stage
/// ([`Setup::deferred_output_wgrad`]; megatron/core/tensor_parallel/layers.py at cb12e3d, the
/// functional test's config commit): `ColumnParallelLinear.forward` appends the output layer's
/// input (`input_parallel`, 16-bit, the sequence shard under sequence parallelism) to
/// `embedding_activation_buffer`, and `LinearWithGradAccumulationAndAsyncCommunication.backward`
/// appends its `grad_output` (the 16-bit logits' gradient, vocabulary ÷ TP) to
/// `grad_output_buffer` instead of computing the weight gradient, each while the buffer holds
/// fewer than `wgrad_deferral_limit` (0: always); `drain_embedding_wgrad_compute`
/// (megatron/core/utils.py) empties both after the step's last backward. At a micro batch's
/// peak the earlier ones' entries are held: min(limit, m − 1) pairs.
fn deferred_wgrad(plan: &Setup, tokens: u128, h: u128, logits: u128) -> Option<u128> {
    let Some(limit) = plan.deferred_output_wgrad else {
        return Some(0);
    };
    let earlier = plan.micro_batches.saturating_sub(1);
    let held = if limit == 0 {
        earlier
    } else {
        limit.min(earlier)
    };
    let t = u128::from(plan.tp.max(1));
    let rep = if plan.sequence_parallel { t } else { 1 };
    let input = cdiv(tokens.checked_mul(h)?.checked_mul(2)?, rep)?;
    input
        .checked_add(logits.checked_mul(2)?)?
        .checked_mul(u128::from(held))
}

/// The model states of `dense` and `routed` parameters on one GPU (already divided by TP, PP
/// and EP), as [`Setup::sharding`] shards them over [`Setup::shard`] GPUs (the routed experts over
/// `shard ÷ ep`).
fn states(p: &Setup, (dense, plain): (u128, u128), routed: u128) -> Option<MemoryParts> {
    use Partition::*;
    if p.shard == 0 {
        return None;
    }
    // the expert-data-parallel group: the dense sharding group's GPUs times TP, over the
    // experts' TP × EP (Megatron: world ÷ (expert TP × EP × PP))
    let edp = p
        .shard
        .checked_mul(p.tp.max(1))?
        .checked_div(p.expert_tp().checked_mul(p.ep.max(1))?)?
        .max(1);
    let zero3 = p.sharding == Zero3;
    let both = |params: [u128; 2], bits: u64, sharded: bool| -> Option<u128> {
        part(params[0], bits, p.shard, sharded)?.checked_add(part(params[1], bits, edp, sharded)?)
    };
    // fp32 parameters (FSDP2's sharded parameters) are the master weights: the optimizer
    // keeps only its states then
    let weight_bits = if p.memory.fp32_params {
        32
    } else {
        p.weight_bits
    };
    let mut weights = if weight_bits == 4 {
        // a 4-bit base: its linear layers in NF4 with their constants, `plain` in 16 bits
        let n = u128::from(if zero3 { p.shard } else { 1 });
        let nf4 = nf4_bytes(dense.checked_sub(plain)?.checked_add(routed)?)?;
        cdiv(nf4, n)?.checked_add(part(plain, 16, p.shard, zero3)?)?
    } else {
        both([dense, routed], weight_bits, zero3)?
    };
    let trains = match p.trainable {
        None => [dense, routed],
        Some(n) => {
            let n = cdiv(
                n,
                u128::from(p.tp.max(1)).checked_mul(u128::from(p.pp.max(1)))?,
            )?;
            weights = weights.checked_add(part(n, 16, p.shard, zero3)?)?;
            [n, 0]
        }
    };
    let grad_bits = if p.memory.fp32_grads || p.sharding == DistributedOptimizer {
        32
    } else {
        16
    };
    let mut gradients = both(trains, grad_bits, matches!(p.sharding, Zero2 | Zero3))?;
    let k = if p.memory.fp32_params {
        p.optimizer_bytes_per_param.saturating_sub(4)
    } else {
        p.optimizer_bytes_per_param
    };
    let mut optimizer = both(trains, k.checked_mul(8)?, p.sharding != Replicated)?;
    if p.optimizer_8bit {
        // bitsandbytes' block-wise 8-bit states: `absmax1` and `absmax2`, one fp32 each per
        // 256 parameters (optim/optimizer.py `Optimizer2State.init_state`), 1/32 byte each
        let n = u128::from(if p.sharding != Replicated { p.shard } else { 1 });
        let params = trains[0].checked_add(trains[1])?;
        optimizer = optimizer.checked_add(cdiv(cdiv(params, 32)?, n)?)?;
    }
    if p.offload_optimizer {
        (gradients, optimizer) = (0, 0);
    }
    if zero3 && p.offload_param {
        weights = 0;
    }
    Some(MemoryParts {
        weights,
        gradients,
        optimizer,
        activations: 0,
    })
}

#[cfg(test)]
mod float8 {
    //! [`float8_saved`] in exact bytes for one Llama 3.1 8B layer (h 4096, 32 heads of 128, 8 KV
    //! heads, SwiGLU 14336) on 1,000 tokens at TP 1: eager casts each linear layer's input
    //! itself, compiled keeps one cast per shared input; per-op checkpointing adds the `abs`
    //! outputs eager only.
    use super::{float8_saved, layer_bytes, per_op_kept, Setup};
    use crate::calc::model::preset;
    use crate::calc::plan::{Fp8, Fusion, Recompute};

    const TOKENS: u128 = 1000;
    /// Every linear weight once in fp8: h·(2·a·d + 2·kv·d) + 3·h·f.
    const WEIGHTS: u128 = 4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 14336;

    fn setup(fusion: Fusion, fp8: bool, recompute: Recompute) -> Setup {
        Setup {
            fusion,
            fp8: fp8.then_some(Fp8::Tensorwise),
            recompute,
            selective_half_matmuls: true,
            gated_mlp: true,
            ..Setup::default()
        }
    }

    #[test]
    fn eager_and_compiled_casts_in_exact_bytes() {
        let m = preset("meta-llama/Llama-3.1-8B").expect("preset");
        let eager = setup(Fusion::Eager, true, Recompute::None);
        let f = float8_saved(&m, 0, &eager, TOKENS).unwrap().unwrap();
        // wq, wk, wv and w1, w3 cast the normed inputs (5 × h), wo the attention output, w2 f
        assert_eq!(f.fp8, TOKENS * (5 * 4096 + 4096 + 14336) + WEIGHTS);
        assert_eq!(f.fp8, 257_015_808);
        // the two norms' outputs and the MLP's product, 16-bit
        assert_eq!(f.bf16_dropped, TOKENS * (2 * 2 * 4096 + 2 * 14336));
        // abs: 5 normed inputs, the attention output and the MLP's product in 16 bits, weights
        assert_eq!(f.abs, TOKENS * 2 * (5 * 4096 + 4096 + 14336) + 2 * WEIGHTS);
        let compiled = setup(Fusion::Compiled, true, Recompute::None);
        let c = float8_saved(&m, 0, &compiled, TOKENS).unwrap().unwrap();
        assert_eq!(c.fp8, TOKENS * (2 * 4096 + 4096 + 14336) + WEIGHTS);
        assert_eq!(c.fp8, 244_727_808);
        assert_eq!(c.bf16_dropped, f.bf16_dropped);
        // not float8: nothing changes
        let bf16 = setup(Fusion::Eager, false, Recompute::None);
        assert!(float8_saved(&m, 0, &bf16, TOKENS).unwrap().is_none());
        // without checkpointing a layer saves the fp8 copies instead of the 16-bit inputs
        let with = layer_bytes(&m, 0, &eager, TOKENS).unwrap().0;
        let without = layer_bytes(&m, 0, &bf16, TOKENS).unwrap().0;
        assert_eq!(with + f.bf16_dropped, without + f.fp8);
    }

    #[test]
    fn per_op_checkpointing_keeps_abs_eager_only() {
        let m = preset("meta-llama/Llama-3.1-8B").expect("preset");
        let kept = |fusion, fp8| {
            per_op_kept(&m, 0, &setup(fusion, fp8, Recompute::Selective), TOKENS)
                .unwrap()
                .unwrap()
        };
        let abs = float8_saved(
            &m,
            0,
            &setup(Fusion::Eager, true, Recompute::Selective),
            TOKENS,
        )
        .unwrap()
        .unwrap()
        .abs;
        assert_eq!(abs, 514_031_616);
        assert_eq!(kept(Fusion::Eager, true), kept(Fusion::Eager, false) + abs);
        assert_eq!(kept(Fusion::Compiled, true), kept(Fusion::Compiled, false));
        // no per-op checkpointing: `per_op_kept` does not apply
        let full = setup(Fusion::Eager, true, Recompute::Full);
        assert!(per_op_kept(&m, 0, &full, TOKENS).unwrap().is_none());
    }
}

#[cfg(test)]
mod mla {
    //! Megatron's multi-latent attention in exact bytes, for the layer of its functional test
    //! `gpt3_mcore_te_tp2_pp2_mla` (h 512, 8 heads, q_lora_rank 192, kv_lora_rank 64,
    //! qk_head_dim 16, qk_pos_emb_head_dim 8, v_head_dim 16, GeLU MLP of 2048, LayerNorm,
    //! linear biases) on a micro batch of 4 × 1024 tokens at TP 2 with sequence parallelism,
    //! unfused attention and dropout.
    use super::{layer_bytes, mla_latents, Setup};
    use crate::calc::estimate::Params;
    use crate::calc::model::{Model, ModelType};

    const TOKENS: u128 = 4 * 1024;

    fn model() -> Model {
        let mut m = Model::blank(ModelType::MegatronGpt);
        (m.hidden_size, m.num_hidden_layers, m.num_attention_heads) = (512, 4, 8);
        (m.num_key_value_heads, m.intermediate_size, m.vocab_size) = (8, 2048, 50257);
        (m.gated_mlp, m.linear_bias, m.layer_norm) = (false, true, true);
        m.multi_latent_attention = true;
        (m.q_lora_rank, m.kv_lora_rank) = (Some(192), 64);
        (m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim) = (16, 8, 16);
        m
    }

    fn setup(sequence_parallel: bool) -> Setup {
        Setup {
            tp: 2,
            sequence_parallel,
            micro_batch: 4,
            seq_len: 1024,
            memory: crate::calc::plan::Conventions {
                dropout: true,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            gated_mlp: false,
            ..Setup::default()
        }
    }

    #[test]
    fn a_layers_parameters_are_mla_self_attentions() {
        // input norm 2h; q_down h·192, q_up 192·8·24, kv_down h·72, kv_up 64·8·32 (no biases,
        // no latent norms without --qk-layernorm); linear_proj 8·16·h + h; fc1's fused norm
        // 2h, fc1 h·4h + 4h, fc2 4h·h + h
        let layer = 1024
            + 512 * 192
            + 192 * 8 * 24
            + 512 * 72
            + 64 * 8 * 32
            + (8 * 16 * 512 + 512)
            + 1024
            + (512 * 2048 + 2048)
            + (2048 * 512 + 512);
        assert_eq!(layer, 2_356_224);
        let p = Params::of(&model()).unwrap();
        assert_eq!(p.kind(false).unwrap().0, layer);
        // --qk-layernorm fuses a LayerNorm (weight and bias) into each up projection
        let mut normed = model();
        normed.qk_norm = true;
        let q = Params::of(&normed).unwrap().kind(false).unwrap().0;
        assert_eq!(q, layer + 2 * 192 + 2 * 64);
    }

    #[test]
    fn a_layer_saves_its_latents_and_heads_in_exact_bytes() {
        let m = model();
        // q_compressed and kv_compressed, 16-bit, on the sequence shard
        assert_eq!(mla_latents(&m, TOKENS, 2), Some(TOKENS * 256 * 2 / 2));
        assert_eq!(mla_latents(&m, TOKENS, 2), Some(1_048_576));
        let (full, input) = layer_bytes(&m, 0, &setup(true), TOKENS).unwrap();
        assert_eq!(input, TOKENS * 512 * 2 / 2);
        let norms = TOKENS * 512 * 8 / 2;
        let masks = TOKENS * 512 * 2 / 2;
        // Q and K of 16 + 8, V and the output of 16, per head, ÷ TP
        let heads = TOKENS * 8 * (24 + 24 + 16 + 16) * 2 / 2;
        // the unfused softmax output, its dropout mask and output: 5 bytes per score
        let scores = 5 * 8 * 1024 * 1024 * 4 / 2;
        let mlp = TOKENS * 2048 * 4 / 2;
        assert_eq!(full, norms + masks + heads + scores + mlp + 1_048_576);
        assert_eq!(full, 114_819_072);
        // without sequence parallelism each TP rank holds the whole latents
        let (whole, _) = layer_bytes(&m, 0, &setup(false), TOKENS).unwrap();
        let (n, k) = (TOKENS * 512 * 10, 1_048_576);
        assert_eq!(whole, full + n - n / 2 + k);
        // latent norms save their inputs too
        let mut normed = m.clone();
        normed.qk_norm = true;
        assert_eq!(mla_latents(&normed, TOKENS, 2), Some(2 * 1_048_576));
    }
}

#[cfg(test)]
mod deferred {
    //! [`deferred_wgrad`] in exact bytes for the last stage of Megatron's functional test
    //! `gpt3_mcore_te_tp2_pp2_defer_embedding_wgrad_compute` (h 512, padded vocabulary 50,432,
    //! TP 2, a micro batch of 4 × 1024 tokens, 4 micro batches, limit 2).
    use super::{deferred_wgrad, Setup};

    const TOKENS: u128 = 4 * 1024;
    const LOGITS: u128 = TOKENS * 50_432 / 2;

    fn setup(limit: Option<u64>, micro_batches: u64, sequence_parallel: bool) -> Setup {
        Setup {
            tp: 2,
            sequence_parallel,
            micro_batches,
            deferred_output_wgrad: limit,
            ..Setup::default()
        }
    }

    #[test]
    fn the_earlier_micro_batches_inputs_and_logit_gradients_are_held() {
        let pair = TOKENS * 512 * 2 + LOGITS * 2;
        assert_eq!(pair, 210_763_776);
        let held = |s: &Setup| deferred_wgrad(s, TOKENS, 512, LOGITS).unwrap();
        // limit 2 of 4 micro batches: two pairs
        assert_eq!(held(&setup(Some(2), 4, false)), 421_527_552);
        // limit 0 defers every micro batch: the three before the last one's peak
        assert_eq!(held(&setup(Some(0), 4, false)), 3 * pair);
        // a limit above the micro batches, or one micro batch
        assert_eq!(held(&setup(Some(9), 4, false)), 3 * pair);
        assert_eq!(held(&setup(Some(2), 1, false)), 0);
        // not deferred
        assert_eq!(held(&setup(None, 4, false)), 0);
        // sequence parallelism: the output layer's input is the sequence shard
        assert_eq!(
            held(&setup(Some(2), 4, true)),
            2 * (TOKENS * 512 + LOGITS * 2)
        );
    }
}

#[cfg(test)]
mod pipeline_fsdp {
    //! [`pipeline_fsdp_kept`] in exact bytes for Llama 3.2 1B (h 2048, 16 layers of 60,821,504
    //! parameters: q and o 2048², k and v 2048 × 512, a SwiGLU MLP of 3 × 2048 × 8192, two norms;
    //! a tied embedding of 128,256 × 2048, copied to the last stage under PP) at TP 2, PP 2,
    //! FSDP2 over 4 GPUs: each stage's parameters over TP, 2 B gathered and 4 B of fp32
    //! gradients each, on top of the sharded states.
    use super::{stages, Params, Partition, Setup};
    use crate::calc::model::preset;

    const LAYER: u128 = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048;
    const EMBEDDING: u128 = 128_256 * 2048;

    fn setup(keeps: bool) -> Setup {
        Setup {
            tp: 2,
            pp: 2,
            shard: 4,
            sharding: Partition::Zero3,
            micro_batches: 4,
            seq_len: 1024,
            memory: crate::calc::plan::Conventions {
                fp32_grads: true,
                fp32_params: true,
                fsdp_pipeline_keeps: keeps,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            ..Setup::default()
        }
    }

    #[test]
    fn gathered_parameters_and_fp32_gradients_in_exact_bytes() {
        let m = preset("meta-llama/Llama-3.2-1B").expect("preset");
        let params = Params::of(&m).unwrap();
        let with = stages(&m, &params, &setup(true)).unwrap();
        let without = stages(&m, &params, &setup(false)).unwrap();
        assert_eq!(LAYER, 60_821_504);
        // the first stage: 8 layers and the embedding; the last: 8 layers, the final norm and
        // the output layer (the tied embedding's copy)
        let per_gpu = [
            (8 * LAYER + EMBEDDING) / 2,
            (8 * LAYER + 2048 + EMBEDDING) / 2,
        ];
        assert_eq!(per_gpu, [374_620_160, 374_621_184]);
        for ((w, wo), n) in with.iter().zip(&without).zip(per_gpu) {
            assert_eq!(w.weights - wo.weights, 2 * n);
            assert_eq!(w.gradients - wo.gradients, 4 * n);
            assert_eq!((w.optimizer, w.activations), (wo.optimizer, wo.activations));
        }
        assert_eq!(with[0].weights - without[0].weights, 749_240_320);
        assert_eq!(with[1].gradients - without[1].gradients, 1_498_484_736);
    }

    #[test]
    fn a_world_size_1_group_keeps_the_same_in_exact_bytes() {
        // torchtitan 0.3.0 applies FSDP2 at shard degree 1: the same gathered copy and fp32
        // gradients, and the sharded states whole on the GPU
        let m = preset("meta-llama/Llama-3.2-1B").expect("preset");
        let params = Params::of(&m).unwrap();
        let one = |keeps| Setup {
            shard: 1,
            ..setup(keeps)
        };
        let with = stages(&m, &params, &one(true)).unwrap();
        let without = stages(&m, &params, &one(false)).unwrap();
        let per_gpu = [374_620_160u128, 374_621_184];
        for ((w, wo), n) in with.iter().zip(&without).zip(per_gpu) {
            assert_eq!(w.weights - wo.weights, 2 * n);
            assert_eq!(w.gradients - wo.gradients, 4 * n);
            // fp32 parameters and sharded gradients, unsharded over one GPU: 4 B each
            assert_eq!((wo.weights, wo.gradients), (4 * n, 4 * n));
        }
        assert_eq!(with[1].weights, 6 * 374_621_184);
    }

    #[test]
    fn only_fsdp_under_a_pipeline() {
        let m = preset("meta-llama/Llama-3.2-1B").expect("preset");
        let params = Params::of(&m).unwrap();
        let unchanged = |plan: Setup| {
            let off = Setup {
                memory: crate::calc::plan::Conventions {
                    fsdp_pipeline_keeps: false,
                    ..plan.memory
                },
                ..plan.clone()
            };
            stages(&m, &params, &plan) == stages(&m, &params, &off)
        };
        assert!(!unchanged(setup(true)));
        assert!(unchanged(Setup {
            pp: 1,
            ..setup(true)
        }));
        assert!(!unchanged(Setup {
            shard: 1,
            ..setup(true)
        }));
        assert!(unchanged(Setup {
            sharding: Partition::Zero2,
            ..setup(true)
        }));
        assert!(unchanged(Setup {
            offload_param: true,
            ..setup(true)
        }));
        // 16-bit gradients where the reduce dtype is the parameters'
        let bf16 = Setup {
            memory: crate::calc::plan::Conventions {
                fp32_grads: false,
                ..setup(true).memory
            },
            ..setup(true)
        };
        let off = Setup {
            memory: crate::calc::plan::Conventions {
                fsdp_pipeline_keeps: false,
                ..bf16.memory
            },
            ..bf16.clone()
        };
        let (a, b) = (
            stages(&m, &params, &bf16).unwrap(),
            stages(&m, &params, &off).unwrap(),
        );
        assert_eq!(a[0].gradients - b[0].gradients, 749_240_320);
    }
}

#[cfg(test)]
mod output_kept {
    //! [`fsdp_output_kept`] in exact bytes: Llama 3.1 8B's final norm (4,096) and output layer
    //! (128,256 × 4,096 = 525,336,576 parameters, split by TP), 2 B each, in the weights of the
    //! one stage; Llama 3.2 1B's tied embedding (128,256 × 2,048) the same way.
    use super::{stages, Params, Partition, Setup};
    use crate::calc::estimate::reserved::stage_tensors;
    use crate::calc::model::preset;

    fn setup(keeps: bool) -> Setup {
        Setup {
            tp: 2,
            shard: 8,
            sharding: Partition::Zero3,
            seq_len: 8192,
            micro_batch: 2,
            memory: crate::calc::plan::Conventions {
                fp32_grads: true,
                fp32_params: true,
                fsdp_output_kept: keeps,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            ..Setup::default()
        }
    }

    /// The weights `plan` adds over the same plan without the term, the other parts unchanged.
    fn added(name: &str, plan: Setup) -> u128 {
        let m = preset(name).expect("preset");
        let params = Params::of(&m).unwrap();
        let off = Setup {
            memory: crate::calc::plan::Conventions {
                fsdp_output_kept: false,
                ..plan.memory
            },
            ..plan.clone()
        };
        let (a, b) = (
            stages(&m, &params, &plan).unwrap(),
            stages(&m, &params, &off).unwrap(),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (x.gradients, x.optimizer, x.activations),
                (y.gradients, y.optimizer, y.activations)
            );
        }
        a.iter().zip(&b).map(|(x, y)| x.weights - y.weights).sum()
    }

    #[test]
    fn the_norm_and_the_output_layer_in_16_bits_over_tp() {
        const NORM: u128 = 4096 * 2;
        assert_eq!(
            added("meta-llama/Llama-3.1-8B", setup(true)),
            NORM + 128_256 * 4096 / 2 * 2
        );
        assert_eq!(added("meta-llama/Llama-3.1-8B", setup(true)), 525_344_768);
        let tp1 = Setup {
            tp: 1,
            ..setup(true)
        };
        assert_eq!(added("meta-llama/Llama-3.1-8B", tp1), 1_050_681_344);
        // a tied embedding is the output layer's one tensor
        let tied = Setup {
            tp: 1,
            ..setup(true)
        };
        assert_eq!(
            added("meta-llama/Llama-3.2-1B", tied),
            2048 * 2 + 128_256 * 2048 * 2
        );
        // 0.3.0 applies FSDP2 over one GPU too, and FSDP2 still copies the 16-bit parameters
        let one = Setup {
            shard: 1,
            ..setup(true)
        };
        assert_eq!(added("meta-llama/Llama-3.1-8B", one), 525_344_768);
    }

    #[test]
    fn not_under_pp_nor_without_resharding_after_forward() {
        let none = |plan: Setup| added("meta-llama/Llama-3.1-8B", plan);
        assert_eq!(
            none(Setup {
                pp: 2,
                micro_batches: 2,
                ..setup(true)
            }),
            0
        );
        assert_eq!(
            none(Setup {
                sharding: Partition::Zero2,
                ..setup(true)
            }),
            0
        );
        assert_eq!(
            none(Setup {
                sharding: Partition::Replicated,
                ..setup(true)
            }),
            0
        );
        assert_eq!(none(setup(false)), 0);
    }

    #[test]
    fn a_tensor_each_in_the_reserved_figure() {
        let m = preset("meta-llama/Llama-3.1-8B").expect("preset");
        let params = Params::of(&m).unwrap();
        let tensors = |plan: &Setup| {
            let parts = stages(&m, &params, plan).unwrap()[0];
            stage_tensors(&m, &params, plan, 0, &parts).unwrap()
        };
        let (with, without) = (tensors(&setup(true)), tensors(&setup(false)));
        for t in [(8192, 1), (525_336_576, 1)] {
            assert_eq!(
                with.iter().filter(|&&x| x == t).count(),
                without.iter().filter(|&&x| x == t).count() + 1,
                "{t:?}"
            );
        }
        // the sharded weights' flat buffer is the same
        let flat = |ts: &[(u128, u128)]| ts[0];
        assert_eq!(flat(&with), flat(&without));
    }
}

#[cfg(test)]
mod megatron_moe {
    //! Megatron's MoE layer under the allgather token dispatcher in exact bytes, for the layer of
    //! its functional test `gpt3_mcore_tp2_pp2_ep2_etp2_te_4experts2parallel` (h 512, 8 heads,
    //! 4 experts of a GeLU MLP of 2048, top-1, no linear biases, LayerNorm) on a micro batch of
    //! 4 × 1024 tokens at TP 4 with sequence parallelism, EP 2, expert TP 2, unfused attention
    //! and dropout.
    use super::{layer_bytes, megatron_routed, Setup};
    use crate::calc::model::{Model, ModelType};

    const TOKENS: u128 = 4 * 1024;

    fn model() -> Model {
        let mut m = Model::blank(ModelType::MegatronGpt);
        (m.hidden_size, m.num_hidden_layers, m.num_attention_heads) = (512, 12, 8);
        (m.num_key_value_heads, m.intermediate_size, m.vocab_size) = (8, 2048, 50257);
        (m.gated_mlp, m.linear_bias, m.layer_norm) = (false, false, true);
        (m.num_experts, m.num_experts_per_tok) = (4, 1);
        m
    }

    fn setup(moe_allgather: bool) -> Setup {
        Setup {
            tp: 4,
            ep: 2,
            etp: 2,
            sequence_parallel: true,
            micro_batch: 4,
            seq_len: 1024,
            memory: crate::calc::plan::Conventions {
                dropout: true,
                moe_allgather,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            gated_mlp: false,
            ..Setup::default()
        }
    }

    #[test]
    fn the_allgather_dispatchers_experts_save_exact_bytes() {
        let (m, plan) = (model(), setup(true));
        // 1024 tokens on the sequence shard, gathered over ETP 2 × EP 2 to 4096; balanced top-1
        // routing sends 4096 ÷ EP 2 = 2048 of them to this rank's 2 experts
        let routed = 2048u128;
        // the permuted input (16-bit h), fc1's output, GeLU's output and its product with the
        // probability (16-bit, 2048 ÷ ETP 2 each), the int64 index and the 16-bit probability
        let per_token = 2 * 512 + 3 * 2 * 1024 + 8 + 2;
        // the local experts' routing map over the gathered tokens, 1 byte each
        let mask = 4096 * 2;
        let experts = megatron_routed(&m, &plan, TOKENS / 4).unwrap();
        assert_eq!(experts, routed * per_token + mask);
        assert_eq!(experts, 14_708_736);
        // the whole layer: the norms (8 B per element) and masks (2 B) on the sequence shard,
        // Q, K, V and the output ÷ TP, the eager softmax (5 B per score, 2 of 8 heads), the
        // router's fp32 logits on the shard, and the experts
        let norms = TOKENS * 512 * 8 / 4;
        let masks = TOKENS * 512 * 2 / 4;
        let heads = TOKENS * 2048 * 2 / 4;
        let scores = 5 * 8 * 1024 * 1024 * 4 / 4;
        let router = TOKENS * 4 * 4 / 4;
        let (full, input) = layer_bytes(&m, 0, &plan, TOKENS).unwrap();
        assert_eq!(full, norms + masks + heads + scores + router + experts);
        assert_eq!(full, 66_105_344);
        assert_eq!(input, TOKENS * 512 * 2 / 4);
        // the count without the dispatcher (1024 routed tokens of 4h + 2 · 2 · 2048 ÷ ETP bytes)
        // is 8,417,280 bytes less: the gathered tokens each rank of the expert-TP group runs,
        // the product's copy, the indices and the mask
        let (generic, _) = layer_bytes(&m, 0, &setup(false), TOKENS).unwrap();
        assert_eq!(full - generic, experts - 1024 * (4 * 512 + 4 * 2048 / 2));
        assert_eq!(full - generic, 8_417_280);
    }

    #[test]
    fn the_routed_tokens_follow_the_expert_tp_group() {
        let m = model();
        // expert TP = TP 4 (with EP 2 over two data-parallel replicas): the 1024 tokens of the
        // shard gathered over 8 ranks, 8192, half of them routed here, so each rank runs as many
        // tokens as a micro batch holds (4096) through its quarter of the experts; the 8192
        // tokens' map of the 2 local experts
        let wide = Setup {
            etp: 4,
            ..setup(true)
        };
        let per_token = 2 * 512 + 3 * 2 * 512 + 8 + 2;
        assert_eq!(
            megatron_routed(&m, &wide, TOKENS / 4),
            Some(4096 * per_token + 8192 * 2)
        );
        // a gated expert with the fused weighted SwiGLU: fc1's 2f and its f output, no copy
        let mut gated = model();
        gated.gated_mlp = true;
        let swiglu = Setup {
            gated_mlp: true,
            ..setup(true)
        };
        let per_token = 2 * 512 + 3 * 2 * 1024 + 8 + 2;
        assert_eq!(
            megatron_routed(&gated, &swiglu, TOKENS / 4),
            Some(2048 * per_token + 4096 * 2)
        );
    }
}

#[cfg(test)]
mod global_buffer {
    //! Megatron's persistent global memory buffer in exact bytes, for the GPT of its functional
    //! tests `gpt3_mcore_tp1_pp2` (local implementation, h 512, 8 heads, GeLU MLP of 2048, a
    //! micro batch of 4 × 1024 tokens, 8 micro batches) and `gpt3_mcore_tp2_pp2_ep2_etp2_te_
    //! 4experts2parallel` (local, TP 4 with sequence parallelism, 4 experts over EP 2, ETP 2).
    use super::{global_buffer_bytes, stages, Setup};
    use crate::calc::estimate::Params;
    use crate::calc::model::{Model, ModelType};
    use crate::calc::plan::GlobalBuffer;

    fn model(experts: u64) -> Model {
        let mut m = Model::blank(ModelType::MegatronGpt);
        (m.hidden_size, m.num_hidden_layers, m.num_attention_heads) = (512, 12, 8);
        (m.num_key_value_heads, m.intermediate_size, m.vocab_size) = (8, 2048, 50257);
        (m.gated_mlp, m.linear_bias, m.layer_norm) = (false, true, true);
        if experts > 0 {
            (m.num_experts, m.num_experts_per_tok) = (experts, 2);
            m.moe_intermediate_size = 2048;
        }
        m
    }

    fn setup(buffer: GlobalBuffer, tp: u64, sequence_parallel: bool) -> Setup {
        Setup {
            tp,
            pp: 2,
            sequence_parallel,
            micro_batch: 4,
            seq_len: 1024,
            micro_batches: 8,
            memory: crate::calc::plan::Conventions {
                dropout: true,
                moe_allgather: true,
                ..crate::calc::plan::Conventions::DEFAULT
            },
            gated_mlp: false,
            global_buffer: buffer,
            ..Setup::default()
        }
    }

    #[test]
    fn local_attention_input_is_the_largest_request() {
        let m = model(0);
        let local = setup(GlobalBuffer::Local, 1, false);
        // `matmul_input_buffer`: [b · a/t, s, s] = [4 · 8, 1024, 1024], 16-bit
        let attention = 4 * 8 * 1024 * 1024 * 2;
        assert_eq!(attention, 67_108_864);
        for rank in [0, 1] {
            assert_eq!(
                global_buffer_bytes(&m, &local, rank, (6, 0)),
                Some(attention)
            );
        }
        // a stage without layers runs no attention
        assert_eq!(global_buffer_bytes(&m, &local, 0, (0, 0)), Some(0));
        // each stage's estimate holds it once, whatever its micro batches in flight
        let params = Params::of(&m).unwrap();
        let with = stages(&m, &params, &local).unwrap();
        let none = setup(GlobalBuffer::None, 1, false);
        let without = stages(&m, &params, &none).unwrap();
        for (w, o) in with.iter().zip(&without) {
            assert_eq!(w.activations, o.activations + attention);
            assert_eq!(w.weights, o.weights);
        }
    }

    #[test]
    fn transformer_engine_uses_it_for_the_output_layer_gather_only() {
        let m = model(0);
        let te = setup(GlobalBuffer::TransformerEngine, 2, true);
        // the output layer's all-gathered input, [s, b, h] = 1024 × 4 × 512, 16-bit
        assert_eq!(global_buffer_bytes(&m, &te, 1, (6, 0)), Some(4_194_304));
        // the first stage: TE's linears gather in their own buffers
        assert_eq!(global_buffer_bytes(&m, &te, 0, (6, 0)), Some(0));
        // no sequence parallelism: no gather
        let plain = setup(GlobalBuffer::TransformerEngine, 2, false);
        assert_eq!(global_buffer_bytes(&m, &plain, 1, (6, 0)), Some(0));
    }

    #[test]
    fn moe_record_takes_the_attention_input_over_the_gathers() {
        let m = model(4);
        let mut s = setup(GlobalBuffer::Local, 4, true);
        (s.ep, s.etp) = (2, 2);
        // attention [4 · 8/4, 1024, 1024] = 8 Mi values; the sequence-parallel gather 2 Mi; the
        // dispatcher's gather (4096/4 tokens × ETP 2 × EP 2) × 512 = 2 Mi
        assert_eq!(global_buffer_bytes(&m, &s, 1, (0, 6)), Some(16_777_216));
        // under Transformer Engine the dispatcher's gather is the largest on a middle stage
        s.global_buffer = GlobalBuffer::TransformerEngine;
        assert_eq!(global_buffer_bytes(&m, &s, 0, (0, 6)), Some(4_194_304));
    }
}
