//! Training FLOPs per token, in each framework's own convention.
//!
//! The conventions differ in what they count, so a figure is meaningless without its name:
//! - [`hf`]: transformers 5.24 `Trainer.floating_point_ops` ÷ tokens = 6 × `num_parameters(
//!   exclude_embeddings=True)`. No attention term; every expert of an MoE counts.
//! - [`megatron`]: megatron-core 0.19.2 `num_floating_point_operations(args, batch)` ÷ tokens, for
//!   the arguments a Megatron run of the model has (`--swiglu` for a gated MLP: 3 projections'
//!   worth of FLOPs, else 2; GQA groups = `num_key_value_heads`, `--kv-channels` = head_dim, the
//!   MoE sizes, DeepSeek-V3's MLA and `moe_layer_freq`, no MTP; biases, norms and position
//!   embeddings are not counted). Causal-halved attention core; the logits use Megatron's padded
//!   vocabulary (a multiple of `make_vocab_size_divisible_by × TP`), so it depends on TP. Its
//!   float steps (the `/ 2` of the attention core, the int + float sum) are Python's.
//! - [`torchtitan`]: torchtitan 0.3.0 `get_nparams_and_flops(model, seq_len)` for the families it
//!   has a model for (llama3, qwen3 dense and MoE, deepseek_v3): 6 × matmul parameters (embedding
//!   out unless tied; routed experts scaled by `top_k // num_experts`) + 6·L·heads·(q/k + v head
//!   dims)·seq, without causal halving. `None` for Mistral, Mixtral, Qwen2 and Gemma.
//! - [`nanotron`]: nanotron 0.4 `get_flops(...)` ÷ tokens with the arguments `get_flops_per_sec`
//!   passes; it uses `hidden_size // num_heads` as the head size (it ignores `head_dim`) and has
//!   no MoE, MLA or plain-MLP term, so `None` for those models.
//!
//! Each is checked against tests/fixtures/model_flops.json by tests/model.rs.

use super::model::{Model, ModelType};
use super::num;

fn m(xs: &[u128]) -> Option<u128> {
    xs.iter().try_fold(1u128, |acc, &x| acc.checked_mul(x))
}

fn add(xs: &[u128]) -> Option<u128> {
    xs.iter().try_fold(0u128, |acc, &x| acc.checked_add(x))
}

fn ratio(a: u128, b: u128) -> Option<f64> {
    num::itruediv(i128::try_from(a).ok()?, i128::try_from(b).ok()?).ok()
}

/// HF Trainer's FLOPs per token: `6 × num_parameters(exclude_embeddings=True)` (an exact int).
pub fn hf(model: &Model) -> Option<u128> {
    model.num_parameters_exclude_embeddings()?.checked_mul(6)
}

/// Megatron's padded vocabulary (`_vocab_size_with_padding`): the vocabulary rounded up to a
/// multiple of `make_vocab_size_divisible_by × tensor_model_parallel_size`.
pub fn megatron_padded_vocab_size(
    vocab_size: u64,
    make_vocab_size_divisible_by: u64,
    tensor_model_parallel_size: u64,
) -> Option<u128> {
    let multiple = m(&[
        make_vocab_size_divisible_by.into(),
        tensor_model_parallel_size.into(),
    ])?;
    if multiple == 0 {
        return None;
    }
    let v = u128::from(vocab_size);
    v.div_ceil(multiple).checked_mul(multiple)
}

/// Megatron's `num_floating_point_operations` for `batch_size` sequences of `seq_length` (a
/// Python float: an exact int part plus the float attention core).
pub fn megatron_num_floating_point_operations(
    model: &Model,
    seq_length: u64,
    batch_size: u64,
    padded_vocab_size: u128,
) -> Option<f64> {
    let h = u128::from(model.hidden_size);
    let n = u128::from(model.num_attention_heads);
    let layers = u128::from(model.num_hidden_layers);
    let tokens = m(&[batch_size.into(), seq_length.into()])?;
    let seq_sq = m(&[tokens, seq_length.into()])?;
    let (attn_linear, core_per_layer) = if model.is_mla() {
        let (nope, rope, v) = (
            u128::from(model.qk_nope_head_dim),
            u128::from(model.qk_rope_head_dim),
            u128::from(model.v_head_dim),
        );
        let q_term = match model.q_lora_rank {
            None => m(&[h, n, nope + rope])?,
            Some(r) => m(&[r.into(), add(&[h, m(&[n, nope + rope])?, 1])?])?,
        };
        let kv = u128::from(model.kv_lora_rank);
        let linear = q_term
            .checked_add(m(&[kv, add(&[h, m(&[n, nope + v])?, 1])?])?)?
            .checked_add(m(&[h, rope])?)?
            .checked_add(m(&[n, v, h])?)?;
        let core = 6.0 * (ratio(m(&[n, nope + rope])?, 2)? + ratio(m(&[n, v])?, 2)?);
        (m(&[6, linear])?, core)
    } else {
        let d = u128::from(model.resolved_head_dim()?);
        let q = m(&[d, n])?;
        let kv = m(&[d, model.num_key_value_heads.into()])?;
        let linear = m(&[h, add(&[q, kv, kv])?])?.checked_add(m(&[q, h])?)?;
        let core = ratio(m(&[6, q])?, 2)? * 2.0;
        (m(&[6, linear])?, core)
    };
    let moe_layers = u128::from(model.num_moe_layers());
    let dense_layers = layers - moe_layers;
    let ffn = u128::from(model.intermediate_size);
    // ffn_expansion_factor: h → 2·ffn and ffn → h stacked with SwiGLU, h → ffn → h without
    let expansion: u128 = if model.gated_mlp { 3 } else { 2 };
    let (routed, shared) = if model.is_moe() {
        let f = u128::from(model.expert_intermediate_size());
        let shared = if model.model_type.is_deepseek() {
            m(&[f, model.n_shared_experts.into()])?
        } else {
            0
        };
        (
            m(&[f, model.num_experts_per_tok.into(), expansion])?,
            m(&[shared, expansion])?,
        )
    } else {
        (0, 0)
    };
    let mlp = m(&[6, h])?.checked_mul(
        m(&[ffn, expansion, dense_layers])?
            .checked_add(m(&[routed, moe_layers])?)?
            .checked_add(m(&[shared, moe_layers])?)?,
    )?;
    let per_token = mlp
        .checked_add(m(&[attn_linear, layers])?)?
        .checked_add(m(&[6, h, padded_vocab_size])?)?;
    let int_part = i128::try_from(m(&[tokens, per_token])?).ok()?;
    let core_term = core_per_layer * layers as f64;
    let total = int_part as f64 + (i128::try_from(seq_sq).ok()? as f64) * core_term;
    total.is_finite().then_some(total)
}

/// Megatron's FLOPs per token at one sequence length: `num_floating_point_operations(args, 1) /
/// seq_length`, with the vocabulary padded for `make_vocab_size_divisible_by` (128 by default) × TP.
pub fn megatron(
    model: &Model,
    seq_length: u64,
    make_vocab_size_divisible_by: u64,
    tensor_model_parallel_size: u64,
) -> Option<f64> {
    let vocab = megatron_padded_vocab_size(
        model.vocab_size,
        make_vocab_size_divisible_by,
        tensor_model_parallel_size,
    )?;
    let total = megatron_num_floating_point_operations(model, seq_length, 1, vocab)?;
    if seq_length == 0 {
        return None;
    }
    Some(total / seq_length as f64)
}

/// torchtitan's `num_flops_per_token` from `get_nparams_and_flops(model, seq_len)` (an int), for
/// the families torchtitan 0.3.0 has a model for.
pub fn torchtitan(model: &Model, seq_len: u64) -> Option<u128> {
    let heads = u128::from(model.num_attention_heads);
    let head_dims = match model.model_type {
        // llama3: 2 * (dim // n_heads)
        ModelType::Llama => {
            2 * u128::from(model.hidden_size.checked_div(model.num_attention_heads)?)
        }
        ModelType::Qwen3 | ModelType::Qwen3Moe => 2 * u128::from(model.resolved_head_dim()?),
        ModelType::DeepseekV3 => {
            u128::from(model.qk_nope_head_dim)
                + u128::from(model.qk_rope_head_dim)
                + u128::from(model.v_head_dim)
        }
        _ => return None,
    };
    let total = model.num_parameters()?;
    let mut matmul = if model.tie_word_embeddings {
        total
    } else {
        total.checked_sub(model.output_layer_params()?)?
    };
    if model.is_moe() {
        let experts = model.routed_expert_params()?;
        let active =
            m(&[experts, model.num_experts_per_tok.into()])? / u128::from(model.num_experts);
        matmul = matmul.checked_sub(experts)?.checked_add(active)?;
    }
    m(&[6, matmul])?.checked_add(m(&[
        6,
        model.num_hidden_layers.into(),
        heads,
        head_dims,
        seq_len.into(),
    ])?)
}

/// nanotron's `get_flops(...)[0]` for one sequence of `seq_len` tokens (an int); `None` for MoE,
/// MLA and plain-MLP models, which it has no term for.
pub fn nanotron_get_flops(model: &Model, seq_len: u64) -> Option<u128> {
    if model.is_moe() || model.is_mla() || !model.gated_mlp {
        return None;
    }
    let l = u128::from(model.num_hidden_layers);
    let h = u128::from(model.hidden_size);
    let n = u128::from(model.num_attention_heads);
    let kv = u128::from(model.num_key_value_heads);
    let d = h.checked_div(n)?;
    let s = u128::from(seq_len);
    let f = u128::from(model.intermediate_size);
    let v = u128::from(model.vocab_size);
    let decoder = [
        m(&[2, l, s, h, n, d])?,     // q projection
        m(&[2, l, s, h, 2, kv, d])?, // k and v projections
        m(&[2, l, n, s, d, s])?,     // q·kᵀ
        m(&[2, l, n, s, s, d])?,     // scores·v
        m(&[2, l, n, s, d, h])?,     // attention output
        m(&[4, l, s, h, f])?,        // gate and up
        m(&[2, l, s, f, h])?,        // down
        m(&[2, s, h, v])?,           // lm head
    ];
    add(&decoder)?.checked_mul(3)
}

/// nanotron's FLOPs per token: `get_flops(...)[0] / seq_len`.
pub fn nanotron(model: &Model, seq_len: u64) -> Option<f64> {
    ratio(nanotron_get_flops(model, seq_len)?, seq_len.into())
}
