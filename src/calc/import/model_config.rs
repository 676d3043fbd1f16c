//! A model's `config.json` (a JSON object with `model_type`): its architecture keys as the
//! current framework's fields, applied over the other inputs (`Scope::Model`).

use super::{Imported, Scope, MAX_INPUT};
use crate::calc::{fit, Field, Framework};

/// config.json keys with another name under Megatron (`--num-layers`, …), or one of the MoE
/// spellings (`num_local_experts` in Mixtral, `n_routed_experts` in DeepSeek-V3).
fn model_key(framework: Framework, key: &str) -> &str {
    let megatron = framework.has(Field::NumLayers);
    match key {
        "num_local_experts" | "n_routed_experts" => "num_experts",
        "num_hidden_layers" if megatron => "num_layers",
        "intermediate_size" if megatron => "ffn_hidden_size",
        "num_key_value_heads" if megatron => "num_query_groups",
        "head_dim" if megatron => "kv_channels",
        "num_experts_per_tok" if megatron => "moe_router_topk",
        "moe_intermediate_size" if megatron => "moe_ffn_hidden_size",
        k => k,
    }
}

/// A pasted model `config.json` (a JSON object with `model_type`): its architecture keys as the
/// current framework's fields (Megatron's own names under Megatron), the rest listed as ignored.
/// `None` when the text is not one. [`Imported::merged_into`] applies it over the other inputs.
pub fn model_config(framework: Framework, text: &str) -> Option<Imported> {
    if text.len() > MAX_INPUT {
        return None;
    }
    let top: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let map = top.as_object()?;
    map.get("model_type")?.as_str()?;
    let mut out = Imported::new(framework);
    out.scope = Scope::Model;
    let mut seen = Vec::new();
    let spec = framework.spec();
    for (key, value) in map {
        let name = model_key(framework, key);
        let field = match name {
            "tie_word_embeddings" if framework.has(Field::UntieEmbeddingsAndOutputWeights) => {
                if let Some(b) = value.as_bool() {
                    out.input(
                        Field::UntieEmbeddingsAndOutputWeights,
                        (!b).to_string(),
                        &mut seen,
                        key,
                    );
                }
                continue;
            }
            _ if fit::is_architecture_key(name) => fit::field_of(spec, name),
            _ => None,
        };
        match (field, value) {
            (Some(_), serde_json::Value::Null) => {}
            (Some(f), serde_json::Value::String(s)) => out.input(f, s.clone(), &mut seen, key),
            (Some(f), serde_json::Value::Bool(b)) => out.input(f, b.to_string(), &mut seen, key),
            (Some(f), serde_json::Value::Number(n)) => out.input(f, n.to_string(), &mut seen, key),
            _ => out.unknown(key.clone()),
        }
    }
    if framework.has(Field::GroupQueryAttention) {
        let heads = map
            .get("num_attention_heads")
            .and_then(serde_json::Value::as_u64);
        let kv = map
            .get("num_key_value_heads")
            .and_then(serde_json::Value::as_u64);
        if let (Some(h), Some(k)) = (heads, kv) {
            out.input(
                Field::GroupQueryAttention,
                (k != h).to_string(),
                &mut seen,
                "num_key_value_heads",
            );
        }
    }
    Some(out.finish())
}
