//! A JSON config (`Reads::Json`, DeepSpeed's `ds_config.json`, read by `serde_json`): its keys
//! by their dotted paths (`zero_optimization.stage`, `tensor_parallel.autotp_size`), a key given
//! twice an error, and the cluster its three batch keys fix ([`batch_cluster`]).

use super::{config_field, Imported};
use crate::calc::{cluster, parse, Field, Kind};

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
    for (key, value) in &map {
        match key.as_str() {
            "tensor_parallel" => match value {
                serde_json::Value::Object(tp) => {
                    for (k, v) in tp {
                        let name = format!("tensor_parallel.{k}");
                        if k == "autotp_size" {
                            json_value(out, &mut seen, Field::AutotpSize, &name, v);
                        } else {
                            out.unknown(name);
                        }
                    }
                }
                serde_json::Value::Null => {}
                _ => out.error(
                    "tensor_parallel is not an object; DeepSpeed reads tensor_parallel.autotp_size",
                ),
            },
            // autotp_size is only read inside tensor_parallel
            "autotp_size" => out.unknown(key.clone()),
            k => json_entry(out, &mut seen, k.to_string(), value, 0),
        }
    }
}

/// The cluster a `ds_config.json` fixes: DeepSpeed asserts `train_batch_size ==
/// train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size` when all three are
/// given (`runtime/config.py::_batch_assertion`), with `world_size` the whole world, or
/// `dist.get_world_size() / sequence_parallel_size` when the config has that key (AutoTP's ranks
/// are counted in the world). So the three keys give the world exactly: `train ÷ (micro × GA)`,
/// times `sequence_parallel_size`, filled in as nodes × GPUs per node. Otherwise the file does
/// not say it, and the note says so.
pub(super) fn batch_cluster(out: &mut Imported) {
    let get = |f: Field| out.get(f).and_then(|v| v.trim().parse::<u64>().ok());
    let (t, m, g) = (
        get(Field::TrainBatchSize),
        get(Field::TrainMicroBatchSizePerGpu),
        get(Field::GradientAccumulationSteps),
    );
    let sp = match out.get(Field::SequenceParallelSize) {
        None => Some(1),
        Some(v) => v.trim().parse::<u64>().ok().filter(|&s| s > 0),
    };
    let per = m
        .zip(g)
        .and_then(|(m, g)| m.checked_mul(g))
        .filter(|&p| p > 0);
    // with an mpu the check counts its data-parallel ranks, which do not give the world
    let mpu = out.get(Field::MpuDataParallelWorldSize).is_some();
    let world = match (t, per, sp) {
        (Some(t), Some(per), Some(sp)) if t > 0 && t % per == 0 && !mpu => {
            (t / per).checked_mul(sp)
        }
        _ => None,
    };
    match (world, t, m, g) {
        (Some(world), Some(t), Some(m), Some(g)) => {
            let w = world / sp.unwrap_or(1);
            let via = if sp.unwrap_or(1) > 1 {
                format!(" × sequence_parallel_size {}", sp.unwrap_or(1))
            } else {
                String::new()
            };
            // as nodes × GPUs per node (dpcalc's 8 per node where it divides), so a launcher's
            // --nodes given after still changes the world as it would
            let gpus = cluster::DEFAULT_GPUS_PER_NODE;
            let (nodes, gpus) = if world % gpus == 0 {
                (world / gpus, gpus)
            } else {
                (1, world)
            };
            out.inputs.push((Field::Nodes, nodes.to_string()));
            out.inputs.push((Field::GpusPerNode, gpus.to_string()));
            out.notes.push(format!(
                "The cluster: {world} GPUs ({nodes} node(s) × {gpus}), from DeepSpeed's batch \
                 check train_batch_size = micro × GA × world ({t} = {m} × {g} × {w}){via}."
            ));
        }
        _ => out.notes.push(
            "The cluster is not in this file: only train_batch_size, \
             train_micro_batch_size_per_gpu and gradient_accumulation_steps together (train a \
             multiple of micro × GA, no mpu_data_parallel_world_size) fix it; set nodes and \
             gpus_per_node."
                .into(),
        ),
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
