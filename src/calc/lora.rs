//! LoRA's trainable parameters, as PEFT 0.21 counts them (`get_nb_trainable_parameters()`) for the
//! `LoraConfig` axolotl 0.21.0 builds (`_build_peft_lora_config`) on a transformers 5 model.
//!
//! axolotl's targets are `lora_target_modules` plus, with `lora_target_linear: true`, the leaf
//! names `find_all_linear_names` collects (every `nn.Linear` but `lm_head`). It always passes a
//! list, so PEFT's per-architecture default targets never apply: no targets at all is PEFT's
//! refusal. PEFT then matches names (here: module names such as `q_proj`; a dotted path is refused
//! by dpcalc), and each adapted module adds `r·(in + out)` (an `nn.Linear(in, out)`, or an
//! `nn.Embedding(vocab, hidden)` as `embed_tokens`; a tied `lm_head` gets its own adapter). A name
//! the model lacks is ignored while another matches. (A YAML string, not a list, for
//! `lora_target_modules` is a regex to PEFT: not modelled.)
//!
//! On Mixtral, Qwen3-MoE and DeepSeek-V3, PEFT first rewrites the v4 expert names
//! (`convert_peft_config_for_transformers`): `w1`+`w3` (Mixtral) or `gate_proj`+`up_proj` become
//! the fused `gate_up_proj` parameter at rank 2r, `w2`/`down_proj` the `down_proj` parameter, `gate`
//! the router weight; one of a fused pair alone is refused. A fused parameter `(E, out, in)` adds
//! `E·r·(in + out)`, the router `r·(hidden + E)`, per MoE layer. The rewritten names leave the module
//! targets, so dense MLPs (DeepSeek-V3's first layers, Qwen3-MoE's `mlp_only_layers`) and
//! DeepSeek-V3's shared experts are not adapted: `lora_target_linear` on DeepSeek-V3 adapts the
//! attention and the routed experts only.
//!
//! QLoRA counts the same: bitsandbytes' `Linear4bit` keeps the names and shapes, `lm_head` and
//! the fused experts stay unquantized, and the adapters are not quantized.
//! tests/lora.rs asserts every count and refusal recorded in tests/fixtures/model_peft.json.

use super::model::{Model, ModelType};
use std::fmt;

/// axolotl's `lora_target_linear` and `lora_target_modules` (a list of module names).
#[derive(Clone, Copy, Debug)]
pub struct LoraTarget<'a> {
    pub linear: bool,
    pub modules: &'a [&'a str],
}

/// Why PEFT (or dpcalc) refuses; `Display` gives PEFT's own message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoraError {
    /// `r` ≤ 0 with a module matched.
    Rank,
    /// No target at all (neither `lora_target_linear` nor `lora_target_modules`).
    NoTargets,
    /// No target matched; the names as given (Python prints its set in hash order).
    NotFound(Vec<String>),
    /// One name of a fused pair: (present, missing).
    Unfused(&'static str, &'static str),
    /// A dotted path: dpcalc takes module names only.
    Path(String),
    Overflow,
}

impl fmt::Display for LoraError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            LoraError::Rank => write!(f, "`r` should be a positive integer value but the value passed is 0"),
            LoraError::NoTargets => write!(f, "No `target_modules` passed but also no `target_parameters` found. Please check the values for these arguments."),
            LoraError::NotFound(n) => {
                let set: Vec<String> = n.iter().map(|s| format!("'{s}'")).collect();
                write!(f, "Target modules {{{}}} not found in the base model. Please check the target modules and try again.", set.join(", "))
            }
            LoraError::Unfused(p, m) => write!(f, "Cannot convert PEFT target(s) {p} without also targeting {m} because they are fused into gate_up_proj."),
            LoraError::Path(p) => write!(f, "{p}: dpcalc takes module names such as q_proj, not paths"),
            LoraError::Overflow => write!(f, "the count overflows"),
        }
    }
}

/// An adaptable module: leaf name, in, out, how many, whether it is an `nn.Linear`.
type Site = (&'static str, u64, u64, u64, bool);

fn sites(m: &Model) -> Option<Vec<Site>> {
    let (h, l, n) = (m.hidden_size, m.num_hidden_layers, m.num_attention_heads);
    let moe = m.num_moe_layers();
    let p = |a: u64, b: u64| a.checked_mul(b);
    let mut s = vec![
        ("embed_tokens", m.vocab_size, h, 1, false),
        ("lm_head", h, m.vocab_size, 1, true),
    ];
    if m.is_mla() {
        let qk = m.qk_nope_head_dim.checked_add(m.qk_rope_head_dim)?;
        match m.q_lora_rank {
            Some(q) => s.extend([
                ("q_a_proj", h, q, l, true),
                ("q_b_proj", q, p(n, qk)?, l, true),
            ]),
            None => s.push(("q_proj", h, p(n, qk)?, l, true)),
        }
        let kv = m.kv_lora_rank;
        let kv_b = p(n, m.qk_nope_head_dim.checked_add(m.v_head_dim)?)?;
        s.extend([
            (
                "kv_a_proj_with_mqa",
                h,
                kv.checked_add(m.qk_rope_head_dim)?,
                l,
                true,
            ),
            ("kv_b_proj", kv, kv_b, l, true),
            ("o_proj", p(n, m.v_head_dim)?, h, l, true),
        ]);
    } else {
        let (q, kv) = (
            p(n, m.resolved_head_dim()?)?,
            p(m.num_key_value_heads, m.resolved_head_dim()?)?,
        );
        if m.model_type == ModelType::Phi3 {
            // Phi-3's fused projections are single nn.Linear modules
            let qkv = q.checked_add(kv.checked_mul(2)?)?;
            s.extend([("qkv_proj", h, qkv, l, true), ("o_proj", q, h, l, true)]);
        } else {
            s.extend([
                ("q_proj", h, q, l, true),
                ("k_proj", h, kv, l, true),
                ("v_proj", h, kv, l, true),
                ("o_proj", q, h, l, true),
            ]);
        }
    }
    let mlp = |s: &mut Vec<Site>, f: u64, k: u64| {
        s.extend([
            ("gate_proj", h, f, k, true),
            ("up_proj", h, f, k, true),
            ("down_proj", f, h, k, true),
        ])
    };
    if m.model_type == ModelType::Phi3 {
        // Phi-3's fused gate_up_proj is one nn.Linear
        let f = m.intermediate_size;
        s.extend([
            ("gate_up_proj", h, f.checked_mul(2)?, l, true),
            ("down_proj", f, h, l, true),
        ]);
    } else {
        mlp(&mut s, m.intermediate_size, l.saturating_sub(moe));
    }
    if m.model_type.is_deepseek() {
        mlp(
            &mut s,
            p(m.expert_intermediate_size(), m.n_shared_experts)?,
            moe,
        ); // shared_experts
    }
    s.retain(|x| x.3 > 0);
    Some(s)
}

/// The trainable parameters PEFT reports for axolotl's LoRA (or QLoRA) config with rank `r`.
pub fn lora_trainable_parameters(m: &Model, r: u64, t: LoraTarget) -> Result<u128, LoraError> {
    let sites = sites(m).ok_or(LoraError::Overflow)?;
    let mut names: Vec<&str> = Vec::new();
    let linear = sites
        .iter()
        .filter(|x| t.linear && x.4 && x.0 != "lm_head")
        .map(|x| x.0);
    for name in t.modules.iter().copied().chain(linear) {
        if name.contains('.') {
            return Err(LoraError::Path(name.into()));
        }
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Err(LoraError::NoTargets);
    }
    // PEFT's v4 → v5 rewrite of the expert names into fused parameters: [gate_up pair, down].
    let fused = match m.model_type {
        ModelType::Mixtral => Some(["w1", "w3", "w2"]),
        ModelType::Qwen3Moe | ModelType::DeepseekV2 | ModelType::DeepseekV3 => {
            Some(["gate_proj", "up_proj", "down_proj"])
        }
        _ => None,
    };
    let (mut router, mut gate_up, mut down) = (false, false, false);
    if let Some([a, b, d]) = fused {
        let (ha, hb) = (names.contains(&a), names.contains(&b));
        match (ha, hb) {
            (true, false) => return Err(LoraError::Unfused(a, b)),
            (false, true) => return Err(LoraError::Unfused(b, a)),
            _ => {}
        }
        (router, gate_up, down) = (names.contains(&"gate"), ha, names.contains(&d));
        names.retain(|x| ![a, b, d, "gate"].contains(x));
    }
    // each adapter: r·(in + out) per matrix, k matrices (a fused expert parameter holds E)
    let lora = |k: Option<u128>, io: u128| k?.checked_mul(r.into())?.checked_mul(io);
    let io = |i: u64, o: u64| u128::from(i) + u128::from(o);
    let mut terms: Vec<Option<u128>> = sites
        .iter()
        .filter(|x| names.contains(&x.0))
        .map(|&(_, i, o, k, _)| lora(Some(k.into()), io(i, o)))
        .collect();
    let (moe, e) = (u128::from(m.num_moe_layers()), m.num_experts);
    if moe > 0 && e > 0 {
        let (h, f) = (m.hidden_size, m.expert_intermediate_size());
        let me = moe * u128::from(e); // < 2^128: both below 2^64
        for (on, k, io) in [
            (router, Some(moe), io(h, e)),
            (gate_up, me.checked_mul(2), io(h, f) + u128::from(f)), // rank 2r, out 2f
            (down, Some(me), io(f, h)),
        ] {
            if on {
                terms.push(lora(k, io));
            }
        }
    }
    if terms.is_empty() {
        return Err(if names.is_empty() {
            LoraError::NoTargets
        } else {
            LoraError::NotFound(names.iter().map(|s| s.to_string()).collect())
        });
    }
    if r == 0 {
        return Err(LoraError::Rank);
    }
    terms
        .into_iter()
        .try_fold(0u128, |a, x| a.checked_add(x?))
        .ok_or(LoraError::Overflow)
}
