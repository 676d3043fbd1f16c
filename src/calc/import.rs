//! Config import: a pasted axolotl YAML, DeepSpeed JSON or Megatron-LM command line becomes form
//! inputs, with every key dpcalc does not read listed and ignored.
//!
//! The parsers are maintained crates, not hand-written ones: `serde_json` for DeepSpeed's
//! `ds_config.json` (the keys `deepspeed/runtime/config.py` reads: `train_batch_size`,
//! `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`, `tensor_parallel.autotp_size`,
//! `sequence_parallel_size`), `yaml-rust2`'s event parser for axolotl's config YAML (the keys of
//! `src/axolotl/utils/schemas/config.py` that dpcalc has as fields) and `shlex` for the shell words
//! of a Megatron-LM launch (`megatron/training/arguments.py`: `--flag value`, `--flag=value`,
//! `store_true` flags, `nargs='*'` lists such as `--rampup-batch-size`).
//!
//! Nothing here interprets a value: each is handed to the form as text and the framework module
//! parses it, so a bad value shows its usual message at its field. Hostile input is bounded: the
//! text is capped at [`MAX_INPUT`] bytes; YAML is read as events (iterative, no tree is built and
//! aliases are never expanded, so an alias bomb costs nothing); JSON nesting stops at
//! serde_json's recursion limit (128); the lists of unknown keys and errors are capped.

use super::field::{CLUSTER, THROUGHPUT};
use super::spec::Reads;
use super::{Field, Framework, RawInputs};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// The largest text accepted (a real config is a few KB).
pub const MAX_INPUT: usize = 256 * 1024;

/// At most this many unknown keys or errors are listed; the rest are counted.
const MAX_LISTED: usize = 100;

/// What a pasted config gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// The framework the text is for (detected, or the one forced).
    pub framework: Framework,
    /// The fields filled, in the order the text gave them, each at most once.
    pub inputs: Vec<(Field, String)>,
    /// Keys (or flags, as written) that dpcalc does not read; they are ignored.
    pub unknown: Vec<String>,
    /// Why something could not be read, with the line and column where the parser knows them.
    pub errors: Vec<String>,
    /// A model's config.json: it fills the architecture and keeps the other inputs.
    pub model: bool,
    more_unknown: usize,
    more_errors: usize,
}

impl Imported {
    fn new(framework: Framework) -> Self {
        Imported {
            framework,
            ..Imported::default()
        }
    }

    /// The inputs as the form holds them.
    pub fn raw(&self) -> RawInputs {
        RawInputs::from_pairs(self.inputs.iter().map(|(f, v)| (*f, v.as_str())))
    }

    /// The text of `field`, if the config gave it.
    pub fn get(&self, field: Field) -> Option<&str> {
        self.inputs
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }

    fn unknown(&mut self, key: impl Into<String>) {
        if self.unknown.len() < MAX_LISTED {
            self.unknown.push(super::parse::shorten(&key.into()));
        } else {
            self.more_unknown += 1;
        }
    }

    fn error(&mut self, message: impl Into<String>) {
        if self.errors.len() < MAX_LISTED {
            self.errors.push(message.into());
        } else {
            self.more_errors += 1;
        }
    }

    /// Records a value; a key given twice is an error and neither value is taken (the framework
    /// would keep the last one silently, and dpcalc never picks one for the user).
    fn input(&mut self, field: Field, value: String, seen: &mut Vec<(Field, String)>, at: &str) {
        if let Some((_, first)) = seen.iter().find(|(f, _)| *f == field) {
            let first = first.clone();
            self.inputs.retain(|(f, _)| *f != field);
            self.error(format!(
                "{}: {} is given again (first {first}); the field is left empty, keep one",
                at,
                field.key()
            ));
            return;
        }
        seen.push((field, at.to_string()));
        self.inputs.push((field, value));
    }

    fn finish(mut self) -> Self {
        if self.more_unknown > 0 {
            let more = std::mem::take(&mut self.more_unknown);
            self.unknown.push(format!("\u{2026} and {more} more"));
        }
        if self.more_errors > 0 {
            let more = std::mem::take(&mut self.more_errors);
            self.errors.push(format!("\u{2026} and {more} more errors"));
        }
        self
    }
}

/// The frameworks whose configs can be pasted, in registry order.
pub fn importable() -> impl Iterator<Item = Framework> {
    Framework::ALL
        .iter()
        .copied()
        .filter(|f| f.spec().import.is_some())
}

/// The framework whose configs are read in `reads` (the first in the registry).
fn reading(reads: Reads) -> Option<Framework> {
    importable().find(|f| f.spec().import.as_ref().map(|i| i.reads) == Some(reads))
}

/// What a pasted config of `framework` is called ("an axolotl YAML").
fn format_name(framework: Framework) -> Option<String> {
    let noun = match framework.spec().import.as_ref()?.reads {
        Reads::Yaml => "YAML",
        Reads::Json => "JSON",
        Reads::CommandLine => "command line",
    };
    let name = framework.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    Some(format!("{article} {name} {noun}"))
}

/// The syntax of a pasted text: JSON when it starts with `{`; a command line when a word outside
/// a comment starts with `--` and a letter and the first line is not a YAML `key:`; else YAML.
/// The framework is the one whose configs are read in that syntax.
pub fn detect(text: &str) -> Framework {
    let reads = detect_syntax(text);
    reading(reads)
        .or_else(|| importable().next())
        .unwrap_or_default()
}

fn detect_syntax(text: &str) -> Reads {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim_start().starts_with('{') {
        return Reads::Json;
    }
    let mut lines = text
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let yaml_key = |line: &str| {
        line.split_once(':').is_some_and(|(k, rest)| {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && (rest.is_empty() || rest.starts_with([' ', '\t']))
        })
    };
    if lines
        .clone()
        .next()
        .is_some_and(|l| yaml_key(l) || l.starts_with("---"))
    {
        return Reads::Yaml;
    }
    let flag = lines.any(|line| {
        line.split_whitespace().any(|w| {
            w.strip_prefix("--")
                .and_then(|r| r.chars().next())
                .is_some_and(|c| c.is_ascii_alphabetic())
        })
    });
    if flag {
        Reads::CommandLine
    } else {
        Reads::Yaml
    }
}

/// Reads a pasted config, detecting its format with [`detect`].
pub fn import(text: &str) -> Imported {
    import_as(detect(text), text)
}

/// Reads a pasted config in `framework`'s format (its `Spec::import`). A framework whose configs
/// are not read gives an error saying which formats are.
pub fn import_as(framework: Framework, text: &str) -> Imported {
    let mut out = Imported::new(framework);
    if text.len() > MAX_INPUT {
        out.error(format!(
            "the text is {} KB; at most {} KB is read (a config is a few KB)",
            text.len() / 1024,
            MAX_INPUT / 1024
        ));
        return out;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match framework.spec().import.as_ref().map(|i| i.reads) {
        Some(Reads::Yaml) => yaml(text, &mut out),
        Some(Reads::Json) => json(text, &mut out),
        Some(Reads::CommandLine) => cli(text, &mut out),
        None => {
            let names: Vec<String> = importable().filter_map(format_name).collect();
            let list = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                Some((last, _)) => last.clone(),
                None => String::new(),
            };
            out.error(format!(
                "{} configs cannot be imported; paste {list}",
                framework.name()
            ))
        }
    }
    out.finish()
}

/// The field a config key of `framework` fills: a key of its form that a config file can hold
/// (the cluster shape and the measured throughput are dpcalc's own inputs, not config keys), or
/// a key its `Spec::import.alias` reads.
fn config_field(framework: Framework, key: &str) -> Option<Field> {
    framework
        .field(key)
        .filter(|f| !CLUSTER.contains(f) && !THROUGHPUT.1.contains(f))
        .or_else(|| (framework.spec().import.as_ref()?.alias)(key))
}

fn at(mark: &Marker) -> String {
    format!("line {}, column {}", mark.line(), mark.col() + 1)
}

// ---- axolotl YAML ------------------------------------------------------------------------

/// Plain scalars YAML reads as null (`null`, `~`, nothing): the key is unset.
fn is_null(value: &str, style: TScalarStyle) -> bool {
    style == TScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// The text a plain YAML boolean stands for (`True` → `true`); other scalars as written.
fn scalar_text(value: String, style: TScalarStyle) -> String {
    if style == TScalarStyle::Plain {
        match value.as_str() {
            "true" | "True" | "TRUE" => return "true".into(),
            "false" | "False" | "FALSE" => return "false".into(),
            _ => {}
        }
    }
    value
}

/// A complete value inside the top mapping.
enum Node {
    Scalar(String, TScalarStyle),
    Alias(usize),
    Collection,
}

/// A nested entry: its key, its scalar value (`None` for a collection), where the key is.
type Entry = (String, Option<(String, TScalarStyle)>, Marker);

/// A mapping nested one level inside the top mapping (`fsdp_config:` with its keys): its scalar
/// entries are read as `parent.child` keys (the dotted names of a framework's nested keys).
#[derive(Default)]
struct Nested {
    /// The next scalar at depth 2 is a key.
    expect_key: bool,
    key: Option<(String, Marker)>,
    entries: Vec<Entry>,
}

fn yaml(text: &str, out: &mut Imported) {
    let mut parser = Parser::new_from_str(text);
    // Collections open (the top mapping is depth 1). Inside the top mapping, nodes alternate
    // key, value; a nested value is skipped whole. Scalar anchors are kept so a scalar alias is
    // resolved; an alias of a collection is never expanded.
    let mut depth = 0usize;
    let mut documents = 0usize;
    let mut expect_key = true;
    let mut pending: Option<(String, Marker)> = None;
    let mut nested_at: Option<Marker> = None;
    let mut anchors: Vec<(usize, String, TScalarStyle)> = Vec::new();
    let mut seen = Vec::new();
    // the mapping value of the current top-level key, while it is open
    let mut nested: Option<Nested> = None;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(e) => e,
            Err(e) => {
                out.error(format!("YAML error at {}: {}", at(e.marker()), e.info()));
                return;
            }
        };
        let node = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    out.error(format!(
                        "{}: a second YAML document (---); only the first is read",
                        at(&mark)
                    ));
                    return;
                }
                continue;
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth == 1 && matches!(event, Event::SequenceStart(..)) {
                    out.error(format!(
                        "{}: the YAML is a list; an axolotl config is a mapping of keys",
                        at(&mark)
                    ));
                    return;
                }
                if depth == 2 {
                    nested_at = Some(mark);
                    if matches!(event, Event::MappingStart(..)) && !expect_key {
                        nested = Some(Nested {
                            expect_key: true,
                            ..Nested::default()
                        });
                    }
                }
                if depth == 3 {
                    // a collection inside the nested mapping: its child is not read
                    if let Some(n) = nested.as_mut() {
                        if let Some((k, m)) = n.key.take() {
                            n.entries.push((k, None, m));
                            n.expect_key = true;
                        }
                    }
                }
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.saturating_sub(1);
                if depth != 1 {
                    continue;
                }
                Node::Collection
            }
            Event::Scalar(value, style, anchor, _tag) => {
                if anchor != 0 && anchors.len() < 4096 {
                    anchors.push((anchor, value.clone(), style));
                }
                if depth == 0 {
                    if !is_null(&value, style) {
                        out.error(format!(
                            "{}: the YAML is a single value; an axolotl config is a mapping of keys",
                            at(&mark)
                        ));
                        return;
                    }
                    continue;
                }
                if depth > 1 {
                    if depth == 2 {
                        if let Some(n) = nested.as_mut() {
                            n.scalar(value, style, mark);
                        }
                    }
                    continue;
                }
                Node::Scalar(value, style)
            }
            Event::Alias(id) => {
                if depth == 2 {
                    if let Some(n) = nested.as_mut() {
                        match anchors.iter().find(|(a, _, _)| *a == id) {
                            Some((_, v, st)) => n.scalar(v.clone(), *st, mark),
                            None => n.scalar(String::new(), TScalarStyle::Plain, mark),
                        }
                    }
                }
                if depth != 1 {
                    continue;
                }
                Node::Alias(id)
            }
        };
        // a node of the top mapping is complete
        let node = match node {
            Node::Alias(id) => match anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, s)) => Node::Scalar(v.clone(), *s),
                None => Node::Alias(id),
            },
            n => n,
        };
        let node_mark = match node {
            Node::Collection => nested_at.take().unwrap_or(mark),
            _ => mark,
        };
        if expect_key {
            expect_key = false;
            pending = match node {
                Node::Scalar(k, _) => Some((k, node_mark)),
                _ => {
                    out.unknown(format!("a key that is not text, at {}", at(&node_mark)));
                    None
                }
            };
        } else {
            expect_key = true;
            let Some((key, kmark)) = pending.take() else {
                continue;
            };
            match (node, nested.take()) {
                (Node::Scalar(value, style), _) => {
                    yaml_value(out, &mut seen, key, &kmark, value, style)
                }
                // a nested mapping with a key the framework reads (`fsdp_config.state_dict_type`):
                // each entry as `key.child`; one with none stays one unknown key
                (Node::Collection, Some(n))
                    if n.entries.iter().any(|(c, _, _)| {
                        config_field(out.framework, &format!("{key}.{c}")).is_some()
                    }) =>
                {
                    for (child, value, m) in n.entries {
                        let dotted = format!("{key}.{child}");
                        match value {
                            Some((v, st)) => yaml_value(out, &mut seen, dotted, &m, v, st),
                            None => out.unknown(dotted),
                        }
                    }
                }
                // a list, or an alias of a collection (`<<: *base`): not read
                _ => out.unknown(key),
            }
        }
    }
}

impl Nested {
    fn scalar(&mut self, value: String, style: TScalarStyle, mark: Marker) {
        if self.expect_key {
            self.key = Some((value, mark));
            self.expect_key = false;
        } else if let Some((k, m)) = self.key.take() {
            self.entries.push((k, Some((value, style)), m));
            self.expect_key = true;
        }
    }
}

fn yaml_value(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    key: String,
    kmark: &Marker,
    value: String,
    style: TScalarStyle,
) {
    match config_field(out.framework, &key) {
        None => out.unknown(key),
        Some(_) if is_null(&value, style) => {}
        Some(field) => {
            let text = scalar_text(value, style);
            out.input(field, text, seen, &at(kmark));
        }
    }
}

// ---- DeepSpeed JSON ----------------------------------------------------------------------

fn json(text: &str, out: &mut Imported) {
    let top: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.error(format!(
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
    json_duplicates(text, out);
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
            k => match config_field(out.framework, k) {
                Some(field) => json_value(out, &mut seen, field, k, value),
                None => out.unknown(key.clone()),
            },
        }
    }
}

fn json_reason(e: &serde_json::Error) -> String {
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
        Value::String(s) if s == "auto" => out.error(format!(
            "{name} is \"auto\": the Hugging Face Trainer fills it in from its TrainingArguments \
             (transformers integrations/deepspeed.py), so this file alone does not say it; \
             the field is left empty (use the Hugging Face Trainer form, or type the number)"
        )),
        Value::String(s) => out.error(format!(
            "{name} is the string \"{}\", not a number; DeepSpeed needs a number, so the field is left empty",
            super::parse::shorten(s)
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
fn json_duplicates(text: &str, out: &mut Imported) {
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
                "\"{}\" is given more than once; DeepSpeed would keep the last one silently",
                super::parse::shorten(&pair[0])
            ));
        }
    }
}

// ---- Megatron-LM command line ------------------------------------------------------------

/// torchrun's flags for the cluster shape (`torch/distributed/run.py`).
fn launcher_field(flag: &str) -> Option<Field> {
    match flag {
        "nnodes" => Some(Field::Nodes),
        "nproc-per-node" | "nproc_per_node" => Some(Field::GpusPerNode),
        _ => None,
    }
}

fn cli(text: &str, out: &mut Imported) {
    let mut lexer = shlex::Shlex::new(text);
    // shlex yields an empty word for a `\` line continuation after a space; an empty word is
    // never a value dpcalc could use, so empty words are dropped
    let words: Vec<String> = lexer.by_ref().filter(|w| !w.is_empty()).collect();
    if lexer.had_error {
        out.error(format!(
            "the command line has an unclosed quote or a trailing backslash (line {})",
            lexer.line_no
        ));
        return;
    }
    // The script (…/pretrain_gpt.py) splits the launcher's flags from Megatron's; without one,
    // every flag is Megatron's.
    let script = words.iter().position(|w| w.ends_with(".py"));
    let (launcher, megatron) = match script {
        Some(i) => (&words[..i], &words[i + 1..]),
        None => (&words[..0], &words[..]),
    };
    let mut seen = Vec::new();
    for (flag, values) in flags(launcher) {
        if flag.is_empty() {
            continue; // torchrun, python -m torch.distributed.run, …
        }
        let name = flag.split_once('=').map_or(flag, |(n, _)| n);
        match (launcher_field(name), one_value(flag, &values)) {
            (Some(field), Some(v)) => out.input(field, v, &mut seen, &format!("--{name}")),
            (Some(_), None) => out.error(format!("--{name} needs one value")),
            (None, _) => out.unknown(format!("--{name}")),
        }
    }
    let mut leading = true;
    for (flag, values) in flags(megatron) {
        if flag.is_empty() {
            // words before the first flag: positional arguments Megatron does not take
            if leading {
                for v in values {
                    out.unknown(v.to_string());
                }
            }
            continue;
        }
        leading = false;
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (flag, None),
        };
        let key = name.replace('-', "_");
        let shown = format!("--{name}");
        let Some(field) = config_field(out.framework, &key) else {
            out.unknown(shown);
            continue;
        };
        let value = match (inline, field.kind()) {
            (Some(v), _) if values.is_empty() => v.to_string(),
            (Some(_), _) => {
                out.error(format!(
                    "{shown}= is followed by more words ({}); the field is left empty",
                    values.join(" ")
                ));
                continue;
            }
            // a store_true flag takes no value; words after it are positional
            (None, super::Kind::Flag) => {
                for v in values {
                    out.unknown(v.to_string());
                }
                "true".to_string()
            }
            (None, _) if values.is_empty() => {
                out.error(format!("{shown} needs a value"));
                continue;
            }
            (None, _) => values.join(" "),
        };
        if value.contains('$') || value.contains('`') {
            out.error(format!(
                "{shown} {value}: a shell variable or substitution; dpcalc cannot know its value, so the field is left empty"
            ));
            continue;
        }
        out.input(field, value, &mut seen, &shown);
    }
}

/// One value for a launcher flag (`--nnodes 2` or `--nnodes=2`).
fn one_value(flag: &str, values: &[&str]) -> Option<String> {
    match (flag.split_once('='), values) {
        (Some((_, v)), []) => Some(v.to_string()),
        (None, [v]) => Some(v.to_string()),
        _ => None,
    }
}

/// Groups words into `(flag without "--", following words)`; words before the first flag come
/// with an empty flag. A word is a flag when it starts with `--` and is longer than that, so
/// negative numbers (`-1`) are values.
fn flags(words: &[String]) -> Vec<(&str, Vec<&str>)> {
    let mut groups: Vec<(&str, Vec<&str>)> = vec![("", Vec::new())];
    for w in words {
        match w.strip_prefix("--").filter(|r| !r.is_empty()) {
            Some(flag) => groups.push((flag, Vec::new())),
            None => {
                if let Some(last) = groups.last_mut() {
                    last.1.push(w);
                }
            }
        }
    }
    if groups[0].1.is_empty() {
        groups.remove(0);
    }
    groups
}

// ---- a model's config.json ----------------------------------------------------------------

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
    out.model = true;
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
            _ if super::fit::is_architecture_key(name) => super::fit::field_of(spec, name),
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

impl Imported {
    /// The inputs after an import: a config replaces them; a model config replaces only the
    /// model (its preset key and every architecture key) and keeps the rest.
    pub fn merged_into(&self, current: &RawInputs) -> RawInputs {
        if !self.model {
            return self.raw();
        }
        let spec = self.framework.spec();
        let mut raw = current.clone();
        raw.set(spec.fit.model_key, "");
        for f in self.framework.fields() {
            let key = f
                .key()
                .strip_prefix("model.model_config.")
                .unwrap_or(f.key());
            if super::fit::is_architecture_key(key) {
                raw.set(f, "");
            }
        }
        for (f, v) in &self.inputs {
            raw.set(*f, v.as_str());
        }
        raw
    }
}
