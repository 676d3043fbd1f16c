//! The link format: the query string is the state.
//!
//! This is the only module that knows URL parameter names. Parameter names are the config keys of
//! [`Field`] (`?nodes=2&gpus_per_node=8&tensor_parallel_size=2`). Decoding never loses what the
//! user wrote: a bad value is kept as text (the core reports it at its field), a parameter given
//! twice keeps every value (an error at that field), and an unknown parameter is kept and carried
//! into every re-shared link, so a link made by a newer dpcalc survives an edit by an older one.
//! Parsing and escaping are serde_urlencoded's (form_urlencoded), not hand-written.

use crate::calc::{Field, RawInputs};

/// A decoded link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    pub inputs: RawInputs,
    /// Parameters dpcalc does not know, in their original order, with their values.
    pub unknown: Vec<(String, String)>,
}

/// Decodes a query string, with or without its leading `?`. Never fails: undecodable escapes
/// become U+FFFD, as form_urlencoded does.
pub fn decode(query: &str) -> Link {
    let query = query.strip_prefix('?').unwrap_or(query);
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    let mut seen: Vec<(Field, Vec<String>)> = Vec::new();
    let mut link = Link::default();
    for (key, value) in pairs {
        match Field::from_key(&key) {
            Some(field) => match seen.iter_mut().find(|(f, _)| *f == field) {
                Some((_, values)) => values.push(value),
                None => seen.push((field, vec![value])),
            },
            None => link.unknown.push((key, value)),
        }
    }
    for (field, mut values) in seen {
        // An empty repeat (`a=1&a=`) adds nothing a user could mean.
        values.retain(|v| !v.is_empty());
        match values.len() {
            0 => {}
            1 => link.inputs.set(field, values.pop().unwrap_or_default()),
            _ => link.inputs.set_conflict(field, values),
        }
    }
    link
}

/// Whether a given text is the value dpcalc assumes when the parameter is absent, so the link
/// can leave it out. Only fields whose presence means nothing by itself qualify: axolotl's
/// validators count `micro_batch_size`, `gradient_accumulation_steps` and `batch_size` when they
/// are present, and `nodes`/`gpus_per_node` are checked against `world_size` when present.
fn is_default(inputs: &RawInputs, field: Field, text: &str) -> bool {
    let text = text.trim();
    match field {
        Field::Nodes => text == "1" && inputs.get(Field::WorldSize).is_empty(),
        Field::GpusPerNode => text == "8" && inputs.get(Field::WorldSize).is_empty(),
        Field::TensorParallelSize | Field::ContextParallelSize => text == "1",
        Field::NumEpochs => text == "1" || text == "1.0",
        Field::SequenceLen => text == "512",
        Field::SamplePacking => text.eq_ignore_ascii_case("false"),
        _ => false,
    }
}

/// The canonical query string (without `?`): known fields in form order, defaults left out,
/// then unknown parameters as they came.
pub fn encode(link: &Link) -> String {
    let inputs = &link.inputs;
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for &field in Field::ALL {
        if let Some(values) = inputs.conflict(field) {
            pairs.extend(values.iter().map(|v| (field.key(), v.as_str())));
            continue;
        }
        let text = inputs.get(field);
        if !text.trim().is_empty() && !is_default(inputs, field, text) {
            pairs.push((field.key(), text));
        }
    }
    pairs.extend(link.unknown.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    serde_urlencoded::to_string(&pairs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_known_unknown_and_repeated() {
        let link = decode("?nodes=2&foo=bar&micro_batch_size=2&micro_batch_size=4&num_epochs=1.5");
        assert_eq!(link.inputs.get(Field::Nodes), "2");
        assert_eq!(link.inputs.get(Field::NumEpochs), "1.5");
        assert_eq!(link.inputs.get(Field::MicroBatchSize), "");
        assert_eq!(
            link.inputs.conflict(Field::MicroBatchSize),
            Some(&["2".to_string(), "4".to_string()][..])
        );
        assert_eq!(link.unknown, vec![("foo".to_string(), "bar".to_string())]);
    }

    #[test]
    fn encodes_canonically_and_round_trips() {
        let link = decode("foo=bar&tensor_parallel_size=1&nodes=2&micro_batch_size=2&micro_batch_size=4&num_samples=x%20y");
        let q = encode(&link);
        assert_eq!(
            q,
            "nodes=2&micro_batch_size=2&micro_batch_size=4&num_samples=x+y&foo=bar"
        );
        assert_eq!(decode(&q), decode(&encode(&decode(&q))));
    }

    #[test]
    fn keeps_nodes_when_world_size_is_given() {
        let link = decode("nodes=1&world_size=4");
        assert_eq!(encode(&link), "nodes=1&world_size=4");
        assert_eq!(encode(&decode("nodes=1&gpus_per_node=8")), "");
    }

    #[test]
    fn hostile_input_never_panics() {
        for q in [
            "%",
            "%zz=1",
            "a=%ff%fe",
            "=&=&&",
            "nodes=%E2%80%AE",
            "nodes=1;nodes=2",
            "\u{0}",
        ] {
            let link = decode(q);
            let _ = encode(&link);
        }
        let long = format!("nodes={}", "9".repeat(100_000));
        assert_eq!(decode(&long).inputs.get(Field::Nodes).len(), 100_000);
    }
}
