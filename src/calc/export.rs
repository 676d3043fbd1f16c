//! Config export: the selected framework's config fragment, generated from the same inputs and
//! [`Report`] the page shows, in the framework's own format and key names (its `Spec::export`:
//! the syntax, the keys in its documentation's order, the launcher; its `Spec::written`: where a
//! key goes within the syntax). One writer per [`Syntax`]: flat YAML (a dotted key one nested
//! level), nested YAML and TOML (the keys grouped in the framework's sections, in its order), JSON
//! (a dotted path a nested object), a Python `TrainingArguments(...)` call (keys of another class
//! as comments) and a launcher command with one `--flag` per key.
//!
//! Emitted: every key the user gave (in form order), plus the derived values the framework needs
//! to reproduce the same numbers (its `Spec::export.derive`), taken from the report only. A value
//! with an error in the report, or one that does not parse, is left out with a note saying why.
//! The cluster shape goes into the launcher line (a comment, except in a command, where it is the
//! command). Every value is a literal of its format: integers as digits, booleans as
//! `true`/`True`, floats in a form every reader (YAML 1.1 and 1.2, TOML, JSON, Python) parses back
//! to the same double (`1.0e-05`, never PyYAML's string `1e-5`), text quoted. JSON has no
//! comments, so there the notes are only in [`Export::notes`] (every format also lists them
//! there, for the page).

use super::field::{CLUSTER, THROUGHPUT};
use super::parse::Reader;
use super::spec::{self, Entry, Syntax, Value, Written};
use super::{cluster, Field, Framework, Kind, Param, RawInputs, Report};

/// A config fragment ready to copy.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The syntax: `yaml`, `json`, `sh`, `toml` or `python` (a highlighter's language name).
    pub lang: &'static str,
    /// The usual file name for it (`config.yml`, `ds_config.json`, …).
    pub file_name: &'static str,
    /// The fragment. Its comments repeat [`Export::notes`] (not in JSON, which has none).
    pub text: String,
    /// What the page should say beside it: the launcher line, left-out fields, derived keys,
    /// the numbers dpcalc computed.
    pub notes: Vec<String>,
}

/// Builds the fragment for `framework` at `release` from the inputs and the report computed
/// from them (`framework.compute(release, raw)`).
pub fn export(framework: Framework, release: &str, raw: &RawInputs, report: &Report) -> Export {
    let mut notes = Vec::new();
    let label = framework
        .release(release)
        .map_or(release, |r| r.id)
        .to_string();
    notes.push(format!(
        "{} {} config from dpcalc (the fields given, and values the framework derives)",
        framework.name(),
        label
    ));
    let mut entries = given(framework, raw, report, &mut notes);
    derive(framework, raw, report, &mut entries, &mut notes);
    let shape = cluster_shape(raw, report, &mut notes);
    let derived: Vec<&str> = entries
        .iter()
        .filter(|e| e.derived)
        .map(|e| e.field.key())
        .collect();
    if !derived.is_empty() {
        notes.push(format!(
            "derived from the other values, as {} would: {}",
            framework.name(),
            derived.join(", ")
        ));
    }
    let computed = results(framework, report);
    let spec = &framework.spec().export;
    let written = &framework.spec().written;
    let body = match spec.syntax {
        Syntax::Yaml => yaml_flat(&entries),
        Syntax::YamlNested => yaml_nested(&entries, written),
        Syntax::Json => json(&entries, written),
        Syntax::Shell => String::new(),
        Syntax::Toml => toml(&entries, written),
        Syntax::Python => python(&entries, written, &mut notes),
    };
    let launch = shape.map(|(n, g)| (spec.launcher)(n, g));
    if let Some(line) = &launch {
        // a shell fragment is the launch command itself
        if spec.syntax != Syntax::Shell {
            notes.insert(1, format!("launch: {line}"));
        }
    }
    if !computed.is_empty() {
        notes.push(format!("dpcalc computed: {}", computed.join(", ")));
    }
    let text = match spec.syntax {
        // JSON has no comments
        Syntax::Json => body,
        Syntax::Shell => {
            let mut t = comments(&notes, "# ");
            let command = launch.unwrap_or_else(|| format!("python {}", spec.script));
            let words = framework
                .spec()
                .import
                .as_ref()
                .map_or(spec::all_words as fn(Field) -> Option<usize>, |i| i.words);
            t.push_str(&command_line(command, &entries, words));
            t
        }
        _ => {
            let mut t = comments(&notes, "# ");
            t.push_str(&body);
            t
        }
    };
    let (lang, file_name) = (spec.lang, spec.file_name);
    Export {
        lang,
        file_name,
        text,
        notes,
    }
}

// ---- what goes in ------------------------------------------------------------------------

/// The framework's config keys (no cluster shape, no measured throughput).
fn config_fields(framework: Framework) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::new();
    for f in framework
        .spec()
        .export
        .keys
        .iter()
        .copied()
        .chain(framework.fields())
    {
        if !CLUSTER.contains(&f) && !THROUGHPUT.1.contains(&f) && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// The given fields, typed; an invalid one is left out with a note.
fn given(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    notes: &mut Vec<String>,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    for field in config_fields(framework) {
        let text = raw.get(field).trim();
        if text.is_empty() && raw.conflict(field).is_none() {
            continue;
        }
        let mut diags = Vec::new();
        let value = parse(field, raw, &mut diags);
        if field == Field::NumSamples {
            // dpcalc's own input (the rows the dataloader sees), not a key of any config
            if let Some(v) = &value {
                notes.push(format!(
                    "num_samples {}: training rows, dpcalc's input (not a config key)",
                    note_lit(v)
                ));
            }
            continue;
        }
        let spec = framework.spec();
        if !(spec.export.in_file)(field) {
            // the model stage's inputs that this file has no key for
            match &value {
                Some(v) => notes.push(format!(
                    "{} left out: {} = {} is dpcalc's model input, not a key of {}",
                    field.key(),
                    field.key(),
                    note_lit(v),
                    spec.export.file_name
                )),
                // not dropped silently: the note says why
                None => notes.push(format!(
                    "{} left out: {}",
                    field.key(),
                    diags
                        .first()
                        .map_or("it has an error".into(), |d| d.message.clone())
                )),
            }
            continue;
        }
        let why = report
            .error_at(field)
            .or_else(|| diags.first().map(|d| d.message.clone()))
            // a text the framework reads no further (an unused schedule) may hold anything typed;
            // a control character (a tab aside) would sit unseen in the file, or break its line
            .or_else(|| {
                (text.chars().any(|c| c.is_control() && c != '\t')).then(|| {
                    "it holds a control character, which the file would carry unseen".into()
                })
            })
            .or_else(|| flag_word(framework, field, text));
        match (value, why) {
            (Some(value), None) => entries.push(Entry {
                field,
                value,
                derived: false,
            }),
            (_, why) => notes.push(format!(
                "{} left out: {}",
                field.key(),
                why.unwrap_or_else(|| "it has an error".into())
            )),
        }
    }
    entries
}

/// In a command line, a word of a value of several words that starts with `-` (and is no
/// number) is read by argparse as the next flag (`--rampup-batch-size 32 32 --bf16`): such a
/// value is left out, and this says why.
fn flag_word(framework: Framework, field: Field, text: &str) -> Option<String> {
    let spec = framework.spec();
    let words = spec
        .import
        .as_ref()
        .map_or(spec::all_words as fn(Field) -> Option<usize>, |i| i.words);
    if spec.export.syntax != Syntax::Shell || field.kind() != Kind::Text || words(field) == Some(1)
    {
        return None;
    }
    let flag = text
        .split_whitespace()
        .find(|w| w.starts_with('-') && w.parse::<f64>().is_err())?;
    Some(format!(
        "its word \u{201c}{}\u{201d} would be read as a flag on the command line",
        super::parse::shorten(flag)
    ))
}

/// A field's text as a typed value (parsed by its kind, as the framework modules do).
fn parse(field: Field, raw: &RawInputs, diags: &mut Vec<super::Diag>) -> Option<Value> {
    let mut r = Reader { raw, diags };
    match field.kind() {
        Kind::Count => r.count(field).given().map(|v| Value::Int(v.into())),
        Kind::Int => r.int(field).given().map(|v| Value::Int(v.into())),
        Kind::Flag => r.flag(field).given().map(Value::Bool),
        Kind::Text => match r.text(field) {
            // a key that is a boolean or a word (axolotl's `bf16`: true, false or auto) writes
            // its booleans as booleans
            Param::Given(t) if field.choices().is_some_and(|(_, c)| c.contains(&"true")) => {
                Some(match t.to_ascii_lowercase().as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => Value::Text(t),
                })
            }
            Param::Given(t) => Some(Value::Text(t)),
            _ => None,
        },
        Kind::Real => {
            let text = raw.get(field).trim();
            // a whole number stays one (`num_epochs: 3`), as the user wrote it
            match r.real(field) {
                Param::Given(_)
                    if raw.conflict(field).is_none()
                        && text.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    text.parse::<u64>()
                        .ok()
                        .map(|v| Value::Int(v.into()))
                        .or_else(|| text.parse::<f64>().ok().map(Value::Float))
                }
                Param::Given(v) => Some(Value::Float(v)),
                _ => None,
            }
        }
    }
}

/// Adds what the framework derives and needs written down to give the same numbers (its
/// `Spec::export.derive`).
fn derive(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    entries: &mut Vec<Entry>,
    notes: &mut Vec<String>,
) {
    (framework.spec().export.derive)(raw, report, entries, notes)
}

/// The cluster shape for the launcher: `world_size` when given (split over the given nodes or
/// GPUs per node when it divides, else one node), else nodes × GPUs per node with dpcalc's
/// defaults. `None` (with a note) when the cluster fields have errors.
fn cluster_shape(raw: &RawInputs, report: &Report, notes: &mut Vec<String>) -> Option<(u64, u64)> {
    let mut diags = Vec::new();
    let mut r = Reader {
        raw,
        diags: &mut diags,
    };
    let (n, g, w) = (
        r.count(Field::Nodes),
        r.count(Field::GpusPerNode),
        r.count(Field::WorldSize),
    );
    if let Some(msg) = CLUSTER
        .iter()
        .find_map(|&f| report.error_at(f))
        .or_else(|| diags.first().map(|d| d.message.clone()))
    {
        notes.push(format!("no launcher line: {msg}"));
        return None;
    }
    let positive = |p: Param<u64>| p.given().filter(|&v| v > 0);
    let shape = match positive(w) {
        Some(ws) => match (positive(n), positive(g)) {
            (Some(n), _) if ws % n == 0 => (n, ws / n),
            (_, Some(g)) if ws % g == 0 => (ws / g, g),
            _ => (1, ws),
        },
        None => (
            positive(n).unwrap_or(cluster::DEFAULT_NODES),
            positive(g).unwrap_or(cluster::DEFAULT_GPUS_PER_NODE),
        ),
    };
    if w.is_given() {
        notes.push(format!(
            "world_size {}: {} node(s) × {} GPUs",
            shape.0 * shape.1,
            shape.0,
            shape.1
        ));
    }
    Some(shape)
}

/// The report's values, under the framework's names.
fn results(framework: Framework, report: &Report) -> Vec<String> {
    framework
        .outputs()
        .iter()
        .filter_map(|&o| {
            let v = report.value(o)?;
            Some(format!("{} {}", framework.label(o).1, v.raw()))
        })
        .collect()
}

// ---- literals ----------------------------------------------------------------------------

/// A float every reader takes back as the same double: Rust's shortest round-trip digits,
/// always with a point, and an exponent with a sign (`1.0e-05`, `1.5`, `3.0`, `1.0e+300`).
/// PyYAML (YAML 1.1) reads `1e-5` as a string, so the point is required.
pub fn float_lit(x: f64) -> String {
    let s = format!("{x:?}");
    let Some(e) = s.find('e') else {
        return if s.contains('.') { s } else { format!("{s}.0") };
    };
    let (mant, exp) = s.split_at(e);
    let exp = &exp[1..];
    let mant = if mant.contains('.') {
        mant.to_string()
    } else {
        format!("{mant}.0")
    };
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exp.strip_prefix('+').unwrap_or(exp)),
    };
    format!("{mant}e{sign}{digits:0>2}")
}

/// A double-quoted string: JSON's escapes, which YAML, TOML and Python read the same way.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The value as a YAML or TOML literal.
/// A value as a note quotes it: a note is one comment line, so a control character is U+FFFD.
fn note_lit(v: &Value) -> String {
    plain_lit(v)
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

fn plain_lit(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(x) => float_lit(*x),
        Value::Bool(b) => b.to_string(),
        Value::Text(t) => quoted(t),
    }
}

fn python_lit(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => plain_lit(other),
    }
}

/// Comment lines (control characters become spaces, so a message cannot end a comment).
fn comments(notes: &[String], prefix: &str) -> String {
    let mut out = String::new();
    for n in notes {
        let clean: String = n
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        out.push_str(prefix);
        out.push_str(&clean);
        out.push('\n');
    }
    out
}

// ---- formats -----------------------------------------------------------------------------

fn yaml_flat(entries: &[Entry]) -> String {
    let mut out = String::new();
    let mut block: Option<&str> = None;
    for e in entries {
        // a key written with a dot (axolotl's `fsdp_config.state_dict_type`) is one nested level
        match e.field.key().split_once('.') {
            Some((head, key)) => {
                if block != Some(head) {
                    out.push_str(&format!("{head}:\n"));
                    block = Some(head);
                }
                out.push_str(&format!("  {key}: {}\n", plain_lit(&e.value)));
            }
            None => {
                block = None;
                out.push_str(&format!("{}: {}\n", e.field.key(), plain_lit(&e.value)));
            }
        }
    }
    out
}

/// The entries of each section the framework lists (`Written::sections`), in its order, each
/// with its key in the section (`Written::place`); a section without entries is left out, as is
/// an entry placed in no listed section.
fn by_section<'a>(
    entries: &'a [Entry],
    written: &Written,
) -> Vec<(&'static str, Vec<(&'static str, &'a Entry)>)> {
    written
        .sections
        .iter()
        .map(|&title| {
            let rows = entries
                .iter()
                .filter_map(|e| {
                    let (section, key) = (written.place)(e.field);
                    (section == title).then_some((key, e))
                })
                .collect::<Vec<_>>();
            (title, rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// Nested YAML: each section (a dotted path is nested mappings) with its keys.
fn yaml_nested(entries: &[Entry], written: &Written) -> String {
    let mut out = String::new();
    let mut previous: Vec<&str> = Vec::new();
    for (title, rows) in by_section(entries, written) {
        let parts: Vec<&str> = title.split('.').collect();
        // a section inside the one just written (`optimizer`, then
        // `optimizer.learning_rate_scheduler`) continues its mapping: a key twice is no YAML
        let shared = if previous.len() < parts.len() && parts.starts_with(&previous) {
            previous.len()
        } else {
            0
        };
        let mut indent = "  ".repeat(shared);
        for part in &parts[shared..] {
            out.push_str(&format!("{indent}{part}:\n"));
            indent.push_str("  ");
        }
        previous = parts;
        for (key, e) in rows {
            out.push_str(&format!("{indent}{key}: {}\n", plain_lit(&e.value)));
        }
    }
    out
}

/// JSON: each key in the nested objects its section names (`Written::place`).
fn json(entries: &[Entry], written: &Written) -> String {
    use serde_json::{Map, Value as J};
    let lit = |v: &Value| match v {
        Value::Int(i) => u64::try_from(*i)
            .map(J::from)
            .or_else(|_| i64::try_from(*i).map(J::from))
            .unwrap_or_else(|_| J::String(i.to_string())),
        Value::Float(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
        Value::Bool(b) => J::Bool(*b),
        Value::Text(t) => J::String(t.clone()),
    };
    let mut top = Map::new();
    'entries: for e in entries {
        // a section is a nested object (`zero_optimization.stage`)
        let (section, key) = (written.place)(e.field);
        let mut at = &mut top;
        for p in section.split('.').filter(|p| !p.is_empty()) {
            let slot = at
                .entry(p.to_string())
                .or_insert_with(|| J::Object(Map::new()));
            if !slot.is_object() {
                *slot = J::Object(Map::new());
            }
            match slot {
                J::Object(m) => at = m,
                _ => continue 'entries,
            }
        }
        at.insert(key.into(), lit(&e.value));
    }
    let mut s = serde_json::to_string_pretty(&J::Object(top)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// TOML: each section as a table with its keys.
fn toml(entries: &[Entry], written: &Written) -> String {
    let mut out = String::new();
    for (title, rows) in by_section(entries, written) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{title}]\n"));
        for (key, e) in rows {
            out.push_str(&format!("{key} = {}\n", plain_lit(&e.value)));
        }
    }
    out
}

/// A `TrainingArguments(...)` call: the keyword arguments; a key of another class
/// (`Written::aside`) and the keys of an argument object (`Written::gathered`) as comments, the
/// latter also in a note.
fn python(entries: &[Entry], written: &Written, notes: &mut Vec<String>) -> String {
    let gathered_fields = written.gathered.as_ref().map_or(&[][..], |g| g.fields);
    let mut out =
        String::from("from transformers import TrainingArguments\n\nargs = TrainingArguments(\n");
    let mut gathered = Vec::new();
    for e in entries {
        let aside = written.aside.iter().find(|(f, _)| *f == e.field);
        if gathered_fields.contains(&e.field) {
            gathered.push(format!("{}={}", e.field.key(), python_lit(&e.value)));
        } else if let Some((_, words)) = aside {
            out.push_str(&format!(
                "    # {}={} {words}\n",
                e.field.key(),
                python_lit(&e.value)
            ));
        } else {
            out.push_str(&format!(
                "    {}={},\n",
                e.field.key(),
                python_lit(&e.value)
            ));
        }
    }
    if let (Some(g), false) = (&written.gathered, gathered.is_empty()) {
        let argument = format!("{}={}({})", g.argument, g.class, gathered.join(", "));
        out.push_str(&format!(
            "    # {argument},  # from {} import {}\n",
            g.module, g.class
        ));
        notes.push(format!("{}: {argument}", g.module));
    }
    out.push_str(")\n");
    out
}

/// A launch command followed by one `--flag value` per entry, a line each with `\`
/// continuations; a flag that takes several words (`words`: argparse's `nargs`, the framework's
/// `Spec::import.words`) has a text's words as its own.
fn command_line(command: String, entries: &[Entry], words: fn(Field) -> Option<usize>) -> String {
    let mut lines = vec![command];
    for e in entries {
        let flag = format!("--{}", e.field.key().replace('_', "-"));
        let word =
            |s: &str| shlex::try_quote(s).map_or_else(|_| "''".to_string(), |c| c.into_owned());
        let line = match &e.value {
            Value::Bool(true) => flag,
            // store_true: false is the default, so the flag is simply absent
            Value::Bool(false) => continue,
            Value::Int(i) => format!("{flag} {i}"),
            Value::Float(x) => format!("{flag} {}", float_lit(*x)),
            // nargs='*' lists are words; other text is one argument
            Value::Text(t) if words(e.field) != Some(1) => {
                let w: Vec<String> = t.split_whitespace().map(word).collect();
                format!("{flag} {}", w.join(" "))
            }
            // a value that starts with `-` is argparse's only as `--flag=-value` (as its own
            // word it is taken for an option: "expected one argument")
            Value::Text(t) if t.starts_with('-') => format!("{flag}={}", word(t)),
            Value::Text(t) => format!("{flag} {}", word(t)),
        };
        lines.push(format!("    {line}"));
    }
    let mut out = lines.join(" \\\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }
    use crate::calc::{Level, Num, Output};

    fn report(values: &[(Output, i128)]) -> Report {
        let mut r = Report::default();
        for &(o, v) in values {
            r.set(o, Num::Int(v));
        }
        r
    }

    fn json_of(e: &Export) -> serde_json::Value {
        serde_json::from_str(&e.text).expect("valid JSON")
    }

    #[test]
    fn floats_keep_a_point_and_a_signed_exponent() {
        for (x, s) in [
            (1.5, "1.5"),
            (3.0, "3.0"),
            (1e-5, "1.0e-05"),
            (1e300, "1.0e+300"),
            (0.1, "0.1"),
            (2.5e-7, "2.5e-07"),
        ] {
            assert_eq!(float_lit(x), s);
            assert_eq!(float_lit(x).parse::<f64>(), Ok(x));
        }
    }

    /// DeepSpeed's `_set_batch_related_parameters` (`runtime/config.py`), with W = 2: train +
    /// micro → GA = train // micro // W, so
    /// (32, 8) gives GA 2 — the export writes all three, and they satisfy DeepSpeed's equality.
    #[test]
    fn deepspeed_writes_all_three_when_consistent() {
        let raw = RawInputs::from_pairs([
            (Field::Nodes, "1"),
            (Field::GpusPerNode, "2"),
            (Field::TrainBatchSize, "32"),
            (Field::TrainMicroBatchSizePerGpu, "8"),
        ]);
        let r = report(&[
            (Output::WorldSize, 2),
            (Output::GlobalBatchSize, 32),
            (Output::GradientAccumulationSteps, 2),
        ]);
        let e = export(fw("deepspeed"), "newest", &raw, &r);
        let j = json_of(&e);
        assert_eq!(j["train_batch_size"], 32);
        assert_eq!(j["train_micro_batch_size_per_gpu"], 8);
        assert_eq!(j["gradient_accumulation_steps"], 2);
        assert!(e
            .notes
            .iter()
            .any(|n| n.contains("derived") && n.contains("gradient_accumulation_steps")));
        // train + GA (32, _, 2), W 2 → micro 8 (the same function, run)
        let raw = RawInputs::from_pairs([
            (Field::GpusPerNode, "2"),
            (Field::TrainBatchSize, "32"),
            (Field::GradientAccumulationSteps, "2"),
        ]);
        let j = json_of(&export(fw("deepspeed"), "newest", &raw, &r));
        assert_eq!(j["train_micro_batch_size_per_gpu"], 8);
        // with Ulysses sp 2 on 4 GPUs, W = 4 / 2 = 2
        let raw = RawInputs::from_pairs([
            (Field::GpusPerNode, "4"),
            (Field::TrainMicroBatchSizePerGpu, "8"),
            (Field::GradientAccumulationSteps, "2"),
            (Field::SequenceParallelSize, "2"),
        ]);
        let r4 = report(&[(Output::WorldSize, 4), (Output::GlobalBatchSize, 32)]);
        let j = json_of(&export(fw("deepspeed"), "newest", &raw, &r4));
        assert_eq!(j["train_batch_size"], 32);
        assert_eq!(j["sequence_parallel_size"], 2);
    }

    /// (33, 17, 2) on W 2 is DeepSpeed's refused triple: when the report's numbers do not satisfy
    /// the equality, nothing is derived and DeepSpeed is left to derive (and refuse) itself.
    #[test]
    fn deepspeed_inconsistent_values_are_not_written() {
        let raw = RawInputs::from_pairs([
            (Field::GpusPerNode, "2"),
            (Field::TrainBatchSize, "33"),
            (Field::TrainMicroBatchSizePerGpu, "17"),
        ]);
        let r = report(&[
            (Output::WorldSize, 2),
            (Output::GradientAccumulationSteps, 2),
        ]);
        let e = export(fw("deepspeed"), "newest", &raw, &r);
        let j = json_of(&e);
        assert_eq!(j.get("gradient_accumulation_steps"), None);
        assert!(e.notes.iter().any(|n| n.contains("do not satisfy")));
        // no report values at all (a module that computed nothing): only the given keys
        let e = export(fw("deepspeed"), "newest", &raw, &Report::default());
        assert_eq!(json_of(&e).as_object().map(|o| o.len()), Some(2));
    }

    #[test]
    fn megatron_gets_the_global_batch_and_nanotron_dp() {
        let raw = RawInputs::from_pairs([(Field::MicroBatchSize, "2")]);
        let r = report(&[
            (Output::WorldSize, 8),
            (Output::GlobalBatchSize, 16),
            (Output::DpWorldSize, 8),
        ]);
        let e = export(fw("megatron"), "newest", &raw, &r);
        assert!(
            e.text
                .contains("    --micro-batch-size 2 \\\n    --global-batch-size 16\n"),
            "{}",
            e.text
        );
        // not with a ramp-up, which sets the batch per step
        let raw2 = RawInputs::from_pairs([
            (Field::MicroBatchSize, "2"),
            (Field::RampupBatchSize, "4 4 100"),
        ]);
        assert!(!export(fw("megatron"), "newest", &raw2, &r)
            .text
            .contains("--global-batch-size"));
        let e = export(fw("nanotron"), "newest", &RawInputs::default(), &r);
        assert!(e.text.contains("parallelism:\n  dp: 8\n"), "{}", e.text);
    }

    #[test]
    fn an_error_in_the_report_leaves_the_field_out() {
        let raw = RawInputs::from_pairs([
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
        ]);
        let mut r = Report::default();
        r.diag(
            Field::MicroBatchSize,
            Level::Error,
            "micro_batch_size is\nbad",
        );
        r.diag(
            Field::GradientAccumulationSteps,
            Level::Warning,
            "only a warning",
        );
        let e = export(fw("axolotl"), "0.19.0", &raw, &r);
        assert!(!e.text.contains("micro_batch_size: 2"));
        assert!(e
            .text
            .contains("# micro_batch_size left out: micro_batch_size is bad\n"));
        assert!(e.text.contains("\ngradient_accumulation_steps: 4\n"));
    }
}
