//! A model's `config.json` (a JSON object with `model_type`): its architecture keys as the
//! current framework's fields, applied over the other inputs (`Scope::Model`).

use super::{Imported, Scope, MAX_INPUT};
use crate::calc::spec::ConfigJson;
use crate::calc::Framework;

/// config.json's key under the framework's name (its `Import::config_json`), or one of the MoE
/// spellings (`num_local_experts` in Mixtral, `n_routed_experts` in DeepSeek-V3).
fn model_key(framework: Framework, key: &str) -> &str {
    match key {
        "num_local_experts" | "n_routed_experts" => "num_experts",
        k => config_json(framework).and_then(|c| (c.key)(k)).unwrap_or(k),
    }
}

fn config_json(framework: Framework) -> Option<&'static ConfigJson> {
    framework.spec().import.as_ref().map(|i| i.config_json)
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
    let consumed = config_json(framework).map_or(&[][..], |c| c.consumed);
    // derived in the file's key order, where its source key stands
    let derived = config_json(framework).map_or(Vec::new(), |c| {
        (c.derived)(&|k| match map.get(k)? {
            serde_json::Value::Bool(b) => Some(b.to_string()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::String(s) => Some(s.clone()),
            _ => None,
        })
    });
    for (key, value) in map {
        for (f, v, from) in &derived {
            if *from == key && consumed.contains(from) {
                out.input(*f, v.clone(), &mut seen, key);
            }
        }
        let name = model_key(framework, key);
        if consumed.contains(&key.as_str()) {
            continue;
        }
        let field = match name {
            _ if crate::calc::parse::model::is_architecture_key(name) => {
                crate::calc::parse::model::field_of(spec, name)
            }
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
    for (f, v, from) in &derived {
        if !consumed.contains(from) {
            out.input(*f, v.clone(), &mut seen, from);
        }
    }
    Some(out.finish())
}
