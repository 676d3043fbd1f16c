//! A JSON config (`Reads::Json`, DeepSpeed's `ds_config.json`, read by `serde_json`): its keys
//! by their dotted paths (`zero_optimization.stage`, `tensor_parallel.autotp_size`), a key given
//! twice an error, and the cluster the file fixes by itself ([`file_cluster`]).

use super::{config_field, Imported};
use crate::calc::{parse, spec, Field, Kind};

pub(super) fn read(text: &str, out: &mut Imported) {
    let top: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.malformed(format!(
                "JSON error at line {}, column {}: {}",
                e.line(),
                e.column(),
                json_reason(&e)
            ));
            return;
        }
    };
    let serde_json::Value::Object(map) = top else {
        out.error("the JSON is not an object; a DeepSpeed config is { \"key\": value, … }");
        return;
    };
    // serde_json keeps the last of a repeated key; the duplicates check is in `json_duplicates`.
    let mut seen = Vec::new();
    json_duplicates(text, out, "DeepSpeed");
    // keys the framework files in a section their own name does not say (`Spec::written`:
    // DeepSpeed's `tensor_parallel.autotp_size`) are read there, and only there
    let framework = out.framework;
    let written = framework.spec().written;
    let elsewhere: Vec<(Field, (&str, &str))> = framework
        .fields()
        .map(|f| (f, (written.place)(f)))
        .filter(|&(f, place)| place != spec::by_dots(f))
        .collect();
    for (key, value) in &map {
        let inside: Vec<&(Field, (&str, &str))> =
            elsewhere.iter().filter(|(_, p)| p.0 == key).collect();
        if !inside.is_empty() {
            match value {
                serde_json::Value::Object(section) => {
                    for (k, v) in section {
                        let name = format!("{key}.{k}");
                        match inside.iter().find(|(_, p)| p.1 == k) {
                            Some((f, _)) => json_value(out, &mut seen, *f, &name, v),
                            None => out.unknown(name),
                        }
                    }
                }
                serde_json::Value::Null => {}
                _ => out.error(format!(
                    "{key} is not an object; {} reads {}",
                    framework.name(),
                    inside
                        .iter()
                        .map(|(_, p)| format!("{}.{}", p.0, p.1))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        } else if elsewhere.iter().any(|(f, _)| f.key() == key) {
            out.unknown(key.clone());
        } else {
            json_entry(out, &mut seen, key.to_string(), value, 0);
        }
    }
}

/// The cluster the file fixes by itself (the framework's `Import::file_cluster`: DeepSpeed's
/// three batch keys), as nodes × GPUs per node with its note; otherwise the note says it does
/// not.
pub(super) fn file_cluster(out: &mut Imported) {
    let Some(derive) = out
        .framework
        .spec()
        .import
        .as_ref()
        .and_then(|i| i.file_cluster)
    else {
        return;
    };
    let found = derive(&|f| out.get(f).map(str::to_string));
    match found {
        Ok((nodes, gpus, note)) => {
            out.inputs.push((Field::Nodes, nodes.to_string()));
            out.inputs.push((Field::GpusPerNode, gpus.to_string()));
            out.notes.push(note);
        }
        Err(note) => out.notes.push(note),
    }
}

/// One JSON entry under its dotted path: a key the framework reads, or an object whose keys
/// are read as `parent.child` (DeepSpeed's `zero_optimization.offload_optimizer.device`), or an
/// unknown key. Nesting deeper than four levels is not a key dpcalc reads.
fn json_entry(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    path: String,
    value: &serde_json::Value,
    depth: usize,
) {
    match (config_field(out.framework, &path), value) {
        (Some(field), _) => json_value(out, seen, field, &path, value),
        (None, serde_json::Value::Object(map)) if depth < 4 => {
            for (k, v) in map {
                json_entry(out, seen, format!("{path}.{k}"), v, depth + 1);
            }
        }
        _ => out.unknown(path),
    }
}

pub(super) fn json_reason(e: &serde_json::Error) -> String {
    // serde_json's Display ends with " at line L column C"; the position is given separately
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn json_value(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    field: Field,
    name: &str,
    value: &serde_json::Value,
) {
    use serde_json::Value;
    match value {
        // DeepSpeed's get_scalar_param returns None for null: the key counts as not given
        Value::Null => {}
        Value::Number(n) => out.input(field, n.to_string(), seen, name),
        // a switch or a text of the form (dataloader_drop_last, zero_optimization.… devices)
        Value::Bool(b) if field.kind() == Kind::Flag => {
            out.input(field, b.to_string(), seen, name)
        }
        Value::String(s) if field.kind() == Kind::Text => {
            out.input(field, s.clone(), seen, name)
        }
        Value::String(s) if s == "auto" => out.error(format!(
            "{name} is \"auto\": the Hugging Face Trainer fills it in from its TrainingArguments \
             (transformers integrations/deepspeed.py), so this file alone does not say it; \
             the field is left empty (use the Hugging Face Trainer form, or type the number)"
        )),
        Value::String(s) => out.error(format!(
            "{name} is the string \"{}\", not a number; DeepSpeed needs a number, so the field is left empty",
            parse::shorten(s)
        )),
        other => out.error(format!(
            "{name} is {}, not a number; the field is left empty",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Array(_) => "a list",
                _ => "an object",
            }
        )),
    }
}

/// Reports a top-level key given twice (serde_json keeps the last silently, as Python's `json`
/// does for DeepSpeed). Reads the text again with serde_json's streaming visitor.
pub(super) fn json_duplicates(text: &str, out: &mut Imported, who: &str) {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(k);
            }
            Ok(keys)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let Ok(keys) = de.deserialize_map(Keys) else {
        return;
    };
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let mut reported: Vec<&str> = Vec::new();
    for pair in sorted.windows(2) {
        if pair[0] == pair[1] && !reported.contains(&pair[0].as_str()) {
            reported.push(&pair[0]);
            out.error(format!(
                "\"{}\" is given more than once; {who} would keep the last one silently",
                parse::shorten(&pair[0])
            ));
        }
    }
}
