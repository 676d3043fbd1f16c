//! YAML: a flat config (axolotl's, `Reads::Yaml`: the keys of its form, a nested mapping with a
//! key it reads as `parent.child`, a list of scalars as comma-separated text) and a nested one
//! read as dotted paths (nanotron's, `Reads::YamlNested`: `parallelism.dp`, `tokens.…`,
//! `model.model_config.…`). Read as `yaml-rust2`'s events, never as a tree: aliases of a
//! collection are never expanded. Scalars are read as the frameworks' loader (PyYAML's
//! `safe_load`, YAML 1.1) reads them.

use super::leaves::{capped, read_leaves, Leaf, MAX_DEPTH, MAX_LEAVES};
use super::{config_field, Imported, MAX_LISTED};
use crate::calc::{num, Field, Kind};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

fn at(mark: &Marker) -> String {
    format!("line {}, column {}", mark.line(), mark.col() + 1)
}

/// Plain scalars YAML reads as null (`null`, `~`, nothing): the key is unset.
fn is_null(value: &str, style: TScalarStyle) -> bool {
    style == TScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// The text of a scalar as the frameworks' YAML loader (PyYAML's `safe_load`, YAML 1.1) reads
/// it: a plain `yes`/`on`/`True` is the boolean `true`, `500_000` and `0x1F` are the ints
/// 500000 and 31, `1_0.5` the float 10.5, while `1e5` (no point) stays the string it is to
/// PyYAML. Quoted scalars are always text.
fn scalar_text(value: String, style: TScalarStyle) -> String {
    if style == TScalarStyle::Plain {
        if let Some(text) = pyyaml_plain(&value) {
            return text;
        }
    }
    value
}

/// PyYAML 6's implicit resolvers for a plain scalar (`yaml/resolver.py`, tried in its order:
/// bool, float, int) and its constructors (`yaml/constructor.py`: underscores dropped, `0b`,
/// `0x` and a leading `0` (octal) as bases, `a:b:c` in base 60): the value as Python prints it,
/// or `None` for a string. A value PyYAML's constructor would fail on is left as written.
fn pyyaml_plain(v: &str) -> Option<String> {
    match v {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some("true".into())
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some("false".into())
        }
        _ => {}
    }
    let (sign, body) = match v.strip_prefix(['-', '+']) {
        Some(rest) => (&v[..1], rest),
        None => ("", v),
    };
    let float = pyyaml_float(sign, body);
    if let Some(x) = float {
        // the text as written when it already reads as that float (`1.0e-05`, `0.10`), else
        // the value as Python prints it (`1_0.5` → 10.5, `.inf` → inf, `1:30.5` → 90.5)
        if !v.contains(['_', ':']) && v.parse::<f64>().ok() == Some(x) {
            return Some(v.to_string());
        }
        return Some(num::float_repr(x));
    }
    let parsed: Option<i128> = pyyaml_int(body);
    parsed.map(|n| {
        if sign == "-" {
            (-n).to_string()
        } else {
            n.to_string()
        }
    })
}

/// `[0-9_]`-style digits: not empty, each `_` or `ok`.
fn digits(t: &str, ok: fn(char) -> bool) -> bool {
    !t.is_empty() && t.chars().all(|c| c == '_' || ok(c))
}

/// Decimal digits with underscores.
fn dec(t: &str) -> bool {
    digits(t, |c| c.is_ascii_digit())
}

/// Base-60 parts after the first: `:` then one or two digits, the first of 0-5.
fn sexagesimal(parts: &[&str]) -> bool {
    parts.iter().all(|p| {
        let b = p.as_bytes();
        match b.len() {
            1 => b[0].is_ascii_digit(),
            2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
            _ => false,
        }
    })
}

/// PyYAML's float resolver and constructor on an unsigned `body` (`sign` is `-`, `+` or empty):
/// decimal, exponent, base 60, `.inf`, `.nan`.
fn pyyaml_float(sign: &str, body: &str) -> Option<f64> {
    // float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9][0-9_]*(...)? (no sign) |
    // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
    let exponent_ok = |e: &str| {
        e.is_empty()
            || e.strip_prefix(['e', 'E'])
                .and_then(|r| r.strip_prefix(['-', '+']))
                .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    };
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        Some(if sign == "-" {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })
    } else if sign.is_empty() && matches!(body, ".nan" | ".NaN" | ".NAN") {
        Some(f64::NAN)
    } else if let Some((int_part, rest)) = body.split_once('.') {
        let frac_end = rest.find(['e', 'E']).unwrap_or(rest.len());
        let (frac, exp) = rest.split_at(frac_end);
        let frac_ok = frac.chars().all(|c| c == '_' || c.is_ascii_digit());
        let mut parts = int_part.split(':');
        let head = parts.next().unwrap_or_default();
        let tail: Vec<&str> = parts.collect();
        let head_ok = head.starts_with(|c: char| c.is_ascii_digit()) && dec(head);
        if !tail.is_empty() {
            // base 60: no exponent
            (head_ok && sexagesimal(&tail) && frac_ok && exp.is_empty()).then(|| {
                let whole = tail.iter().fold(
                    head.replace('_', "").parse::<f64>().unwrap_or(0.0),
                    |acc, p| acc * 60.0 + p.parse::<f64>().unwrap_or(0.0),
                );
                let f = format!("0.{}", frac.replace('_', ""))
                    .parse::<f64>()
                    .unwrap_or(0.0);
                let x = whole + f;
                if sign == "-" {
                    -x
                } else {
                    x
                }
            })
        } else if (head_ok
            || (head.is_empty()
                && sign.is_empty()
                && frac.starts_with(|c: char| c.is_ascii_digit())))
            && frac_ok
            && exponent_ok(exp)
        {
            format!(
                "{sign}{}.{}{exp}",
                head.replace('_', ""),
                frac.replace('_', "")
            )
            .trim_end_matches('.')
            .parse::<f64>()
            .ok()
        } else {
            None
        }
    } else {
        None
    }
}

/// PyYAML's int resolver and constructor on an unsigned `body`: `0b`, `0x`, octal `0…`,
/// decimal and base 60.
fn pyyaml_int(body: &str) -> Option<i128> {
    // int: [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ |
    // [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
    if let Some(b) = body.strip_prefix("0b") {
        digits(b, |c| c == '0' || c == '1')
            .then(|| i128::from_str_radix(&b.replace('_', ""), 2).ok())
            .flatten()
    } else if let Some(h) = body.strip_prefix("0x") {
        digits(h, |c| c.is_ascii_hexdigit())
            .then(|| i128::from_str_radix(&h.replace('_', ""), 16).ok())
            .flatten()
    } else if body == "0" {
        Some(0)
    } else if let Some(o) = body.strip_prefix('0') {
        digits(o, |c| ('0'..='7').contains(&c))
            .then(|| {
                let o = o.replace('_', "");
                // `0_` is 0 to PyYAML (int('0', 8)); otherwise base 8
                if o.is_empty() {
                    Some(0)
                } else {
                    i128::from_str_radix(&o, 8).ok()
                }
            })
            .flatten()
    } else if body.starts_with(|c: char| ('1'..='9').contains(&c)) {
        let mut parts = body.split(':');
        let head = parts.next().unwrap_or_default();
        let tail: Vec<&str> = parts.collect();
        if !dec(head) || (!tail.is_empty() && !sexagesimal(&tail)) {
            None
        } else {
            tail.iter()
                .try_fold(head.replace('_', "").parse::<i128>().ok()?, |acc, p| {
                    acc.checked_mul(60)?.checked_add(p.parse::<i128>().ok()?)
                })
        }
    } else {
        None
    }
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
    /// Where each key that is not text (a collection, an alias of one) is: its value is not read.
    not_text: Vec<Marker>,
    /// The next node is the value of a key that is not text (skipped).
    skip_value: bool,
}

/// PyYAML's reader refuses a text holding a character outside YAML's printable set before it
/// parses anything (`yaml/reader.py`, `Reader.check_printable`, PyYAML 6.0.4: `NON_PRINTABLE =
/// [^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]`): so does
/// dpcalc, with PyYAML's words (`/work/venvs/mcore-0.16.1/bin/python -c "import yaml;
/// yaml.safe_load('a: \x15')"` raises `ReaderError: unacceptable character #x0015: special
/// characters are not allowed`). Whether it refused.
fn unprintable(text: &str, out: &mut Imported) -> bool {
    let printable = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}')
            || matches!(c, '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
    };
    let Some(at) = text.find(|c: char| !printable(c)) else {
        return false;
    };
    let c = text[at..].chars().next().unwrap_or_default();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    out.malformed(format!(
        "YAML error at line {}, column {}: unacceptable character #x{:04x}: special characters are not allowed",
        text[..at].matches('\n').count() + 1,
        text[line_start..at].chars().count() + 1,
        c as u32
    ));
    true
}

/// A flat YAML config (axolotl's), unless PyYAML refuses a character of it.
pub(super) fn read(text: &str, out: &mut Imported) {
    if !unprintable(text, out) {
        read_flat(text, out);
    }
}

fn read_flat(text: &str, out: &mut Imported) {
    let mut parser = Parser::new_from_str(text);
    // Collections open (the top mapping is depth 1). Inside the top mapping, nodes alternate
    // key, value; a nested value is skipped whole. Scalar anchors are kept so a scalar alias is
    // resolved; an alias of a collection is never expanded.
    let mut depth = 0usize;
    let mut documents = 0usize;
    let mut t = TopMap {
        expect_key: true,
        ..TopMap::default()
    };
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(e) => e,
            Err(e) => {
                out.malformed(format!("YAML error at {}: {}", at(e.marker()), e.info()));
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
                let sequence = matches!(event, Event::SequenceStart(..));
                if !t.start(depth, sequence, mark, out) {
                    return;
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
                if anchor != 0 && t.anchors.len() < 4096 {
                    t.anchors.push((anchor, value.clone(), style));
                }
                if depth == 0 {
                    if single_value(&value, style, &mark, out) {
                        return;
                    }
                    continue;
                }
                if depth > 1 {
                    if depth == 2 {
                        t.nested_scalar(value, style, mark);
                    }
                    continue;
                }
                Node::Scalar(value, style)
            }
            Event::Alias(id) => {
                if depth == 2 {
                    t.nested_alias(id, mark);
                }
                if depth != 1 {
                    continue;
                }
                Node::Alias(id)
            }
        };
        t.complete(node, mark, out);
    }
}

/// A document that is a single value (not null): an axolotl config is a mapping; whether it is
/// refused.
fn single_value(value: &str, style: TScalarStyle, mark: &Marker, out: &mut Imported) -> bool {
    if !is_null(value, style) {
        out.error(format!(
            "{}: the YAML is a single value; an axolotl config is a mapping of keys",
            at(mark)
        ));
        return true;
    }
    false
}

/// The top mapping as it is read: whether the next node is a key, the key waiting for its value,
/// and what the current value holds so far.
#[derive(Default)]
struct TopMap {
    expect_key: bool,
    pending: Option<(String, Marker)>,
    nested_at: Option<Marker>,
    anchors: Vec<(usize, String, TScalarStyle)>,
    seen: Vec<(Field, String)>,
    /// The mapping value of the current top-level key, while it is open.
    nested: Option<Nested>,
    /// The list value of the current top-level key, while it is open: its scalar items (`None`
    /// once an item is a collection: such a list is not read).
    list: Option<Option<Vec<String>>>,
}

impl TopMap {
    /// A collection opens at `depth` (1: the top mapping, which a list cannot be; 2: a value
    /// of the top mapping; 3: inside that value, not read). Whether the reading goes on.
    fn start(&mut self, depth: usize, sequence: bool, mark: Marker, out: &mut Imported) -> bool {
        if depth == 1 && sequence {
            out.error(format!(
                "{}: the YAML is a list; an axolotl config is a mapping of keys",
                at(&mark)
            ));
            return false;
        }
        if depth == 2 {
            self.nested_at = Some(mark);
            if !sequence && !self.expect_key {
                self.nested = Some(Nested {
                    expect_key: true,
                    ..Nested::default()
                });
            }
            if sequence && !self.expect_key {
                self.list = Some(Some(Vec::new()));
            }
        }
        if depth == 3 {
            if let Some(items) = self.list.as_mut() {
                *items = None;
            }
            // a collection inside the nested mapping: its child is not read
            if let Some(n) = self.nested.as_mut() {
                n.collection(mark);
            }
        }
        true
    }

    /// A scalar inside a value of the top mapping: an entry of the nested mapping, or a list item.
    fn nested_scalar(&mut self, value: String, style: TScalarStyle, mark: Marker) {
        if let Some(n) = self.nested.as_mut() {
            n.scalar(value, style, mark);
        } else if let Some(items) = self.list.as_mut() {
            // a null item (`- ` or `~`: the framework gets None in its list) or a list longer
            // than any a config holds: the list is not read (and listed), never read in part
            match items {
                Some(list) if list.len() < MAX_LISTED && !is_null(&value, style) => {
                    list.push(value)
                }
                _ => *items = None,
            }
        }
    }

    /// An alias inside a value of the top mapping: a scalar's value in the nested mapping; a list
    /// with one is not read.
    fn nested_alias(&mut self, id: usize, mark: Marker) {
        if let Some(n) = self.nested.as_mut() {
            match self.anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, st)) => n.scalar(v.clone(), *st, mark),
                // an alias of a collection: a key that is not text, or a value not read
                None => n.collection(mark),
            }
        } else if let Some(items) = self.list.as_mut() {
            // an alias inside a list: the list is not read
            *items = None;
        }
    }

    /// A node of the top mapping is complete: a key, or the value of the pending key.
    fn complete(&mut self, node: Node, mark: Marker, out: &mut Imported) {
        // a node of the top mapping is complete
        let node = match node {
            Node::Alias(id) => match self.anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, s)) => Node::Scalar(v.clone(), *s),
                None => Node::Alias(id),
            },
            n => n,
        };
        let node_mark = match node {
            Node::Collection => self.nested_at.take().unwrap_or(mark),
            _ => mark,
        };
        if self.expect_key {
            self.expect_key = false;
            self.pending = match node {
                Node::Scalar(k, _) => Some((k, node_mark)),
                _ => {
                    out.unknown(format!("a key that is not text, at {}", at(&node_mark)));
                    None
                }
            };
        } else {
            self.expect_key = true;
            let Some((key, kmark)) = self.pending.take() else {
                return;
            };
            let items = self.list.take().flatten();
            match (node, self.nested.take()) {
                (Node::Scalar(value, style), _) => {
                    yaml_value(out, &mut self.seen, key, &kmark, value, style)
                }
                // a list of scalars under a key the framework reads as text (axolotl's `plugins`,
                // `fsdp`): its items comma-separated, as the form takes them
                (Node::Collection, None)
                    if items.is_some()
                        && config_field(out.framework, &key)
                            .is_some_and(|f| f.kind() == Kind::Text) =>
                {
                    let items = items.unwrap_or_default();
                    if items.is_empty() {
                        // an empty list is not read, and listed so (never skipped unsaid)
                        out.unknown(key);
                    } else {
                        let text = items.join(", ");
                        yaml_value(out, &mut self.seen, key, &kmark, text, TScalarStyle::Plain)
                    }
                }
                // a nested mapping with a key the framework reads (`fsdp_config.state_dict_type`):
                // each entry as `key.child`; one with none stays one unknown key
                (Node::Collection, Some(n))
                    if n.entries.iter().any(|(c, _, _)| {
                        config_field(out.framework, &format!("{key}.{c}")).is_some()
                    }) =>
                {
                    for m in &n.not_text {
                        out.unknown(format!("a key that is not text, at {}", at(m)));
                    }
                    for (child, value, m) in n.entries {
                        let dotted = format!("{key}.{child}");
                        match value {
                            Some((v, st)) => yaml_value(out, &mut self.seen, dotted, &m, v, st),
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
    /// A collection (or an alias of one) as a node of the nested mapping: a key that is not
    /// text, or a value that is not read.
    fn collection(&mut self, mark: Marker) {
        if self.skip_value {
            self.skip_value = false;
            self.expect_key = true;
        } else if self.expect_key {
            self.not_text.push(mark);
            self.expect_key = false;
            self.skip_value = true;
        } else if let Some((k, m)) = self.key.take() {
            self.entries.push((k, None, m));
            self.expect_key = true;
        }
    }

    fn scalar(&mut self, value: String, style: TScalarStyle, mark: Marker) {
        if self.skip_value {
            self.skip_value = false;
            self.expect_key = true;
        } else if self.expect_key {
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

/// A YAML mapping's values by their dotted paths (scalar anchors resolved, collection aliases
/// never expanded, lists not read). `None` after an error (recorded in `out`).
pub(super) fn yaml_leaves(text: &str, out: &mut Imported, what: &str) -> Option<Vec<Leaf>> {
    if unprintable(text, out) {
        return None;
    }
    let mut parser = Parser::new_from_str(text);
    let mut frames: Vec<Frame> = Vec::new();
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut anchors: Vec<(usize, String, TScalarStyle)> = Vec::new();
    let mut documents = 0usize;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(e) => e,
            Err(e) => {
                out.malformed(format!("YAML error at {}: {}", at(e.marker()), e.info()));
                return None;
            }
        };
        // a scalar (resolved), or the start of a collection (true: a mapping)
        let node: Result<(String, TScalarStyle), bool> = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    out.error(format!(
                        "{}: a second YAML document (---); only the first is read",
                        at(&mark)
                    ));
                    return None;
                }
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                continue;
            }
            Event::MappingStart(..) => Err(true),
            Event::SequenceStart(..) => Err(false),
            Event::Scalar(value, style, anchor, _) => {
                if anchor != 0 && anchors.len() < 4096 {
                    anchors.push((anchor, value.clone(), style));
                }
                Ok((value, style))
            }
            Event::Alias(id) => match anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, st)) => Ok((v.clone(), *st)),
                // an alias of a collection: not expanded (read as a list would be)
                None => {
                    alias_of_collection(&mut frames, &mut leaves, mark);
                    continue;
                }
            },
        };
        let depth = frames.len();
        if frames.is_empty() {
            // the document's root
            root_node(&mut frames, node, &mark, out, what)?;
            continue;
        }
        map_node(&mut frames, &mut leaves, node, mark, depth);
    }
    capped(leaves.len(), out);
    Some(leaves)
}

enum Frame {
    /// A mapping at `path` (`None`: the top mapping); the pending key and where it is (`None`
    /// until one is read; its text `None` for a key that is not text).
    Map {
        path: Option<String>,
        key: Option<(Option<String>, Marker)>,
    },
    /// A list, a too-deep mapping, or a collection used as a key: not read.
    Skip,
}
/// `path.key`, or `key` at the top: an empty key is a key (`"": {b: 1}` is `.b`, never the
/// top's `b`).
fn join(path: &Option<String>, key: &str) -> String {
    match path {
        None => key.to_string(),
        Some(path) => format!("{path}.{key}"),
    }
}

/// An alias of a collection at `mark`: not expanded (read as a list would be).
fn alias_of_collection(frames: &mut [Frame], leaves: &mut Vec<Leaf>, mark: Marker) {
    if let Some(Frame::Map { path, key }) = frames.last_mut() {
        match key.take() {
            None => *key = Some((None, mark)),
            Some((Some(k), m)) => leaves.push(Leaf {
                path: join(path, &k),
                value: None,
                at: at(&m),
            }),
            Some((None, m)) => leaves.push(not_text(&m)),
        }
    }
}

/// A value whose key is not text (a list, a mapping or an alias of one as a key): not read, and
/// named so by where the key is (no path can name it).
fn not_text(mark: &Marker) -> Leaf {
    Leaf {
        path: format!("a key that is not text, at {}", at(mark)),
        value: None,
        at: at(mark),
    }
}

/// The document's root: a mapping opens the top frame; a list or a single value is refused
/// (`None`).
fn root_node(
    frames: &mut Vec<Frame>,
    node: Result<(String, TScalarStyle), bool>,
    mark: &Marker,
    out: &mut Imported,
    what: &str,
) -> Option<()> {
    match node {
        Err(true) => frames.push(Frame::Map {
            path: None,
            key: None,
        }),
        Err(false) => {
            out.error(format!(
                "{}: the YAML is a list; {what} is a mapping of keys",
                at(mark)
            ));
            return None;
        }
        Ok((v, st)) if is_null(&v, st) => {}
        Ok(_) => {
            out.error(format!(
                "{}: the YAML is a single value; {what} is a mapping of keys",
                at(mark)
            ));
            return None;
        }
    }
    Some(())
}

/// A node inside the open frame (`depth` frames deep): a key, a value read as a leaf, or a
/// collection opened (a mapping within [`MAX_DEPTH`]) or skipped.
fn map_node(
    frames: &mut Vec<Frame>,
    leaves: &mut Vec<Leaf>,
    node: Result<(String, TScalarStyle), bool>,
    mark: Marker,
    depth: usize,
) {
    let Some(top) = frames.last_mut() else {
        return;
    };
    let Frame::Map { path, key } = top else {
        if node.is_err() {
            frames.push(Frame::Skip);
        }
        return;
    };
    match (key.take(), node) {
        // a key
        (None, Ok((k, _))) => *key = Some((Some(k), mark)),
        (None, Err(_)) => {
            *key = Some((None, mark));
            frames.push(Frame::Skip);
        }
        // a value
        (Some((k, m)), node) => {
            if k.is_none() && leaves.len() < MAX_LEAVES {
                leaves.push(not_text(&m));
            }
            let entry = k.map(|k| (join(path, &k), at(&m)));
            match (entry, node) {
                (Some((p, a)), Ok((v, st))) => {
                    if !is_null(&v, st) && leaves.len() < MAX_LEAVES {
                        leaves.push(Leaf {
                            path: p,
                            value: Some(scalar_text(v, st)),
                            at: a,
                        });
                    }
                }
                (Some((p, _)), Err(true)) if depth < MAX_DEPTH => frames.push(Frame::Map {
                    path: Some(p),
                    key: None,
                }),
                (Some((p, a)), Err(_)) => {
                    if leaves.len() < MAX_LEAVES {
                        leaves.push(Leaf {
                            path: p,
                            value: None,
                            at: a,
                        });
                    }
                    frames.push(Frame::Skip);
                }
                (None, Err(_)) => frames.push(Frame::Skip),
                (None, Ok(_)) => {}
            }
        }
    }
}

/// nanotron's config YAML (`src/nanotron/config/config.py`): `parallelism.dp`, `tokens.…`,
/// `model.model_config.…`, through the Spec's alias.
pub(super) fn read_nested(text: &str, out: &mut Imported) {
    let what = format!("a {} config", out.framework.name());
    let Some(leaves) = yaml_leaves(text, out, &what) else {
        return;
    };
    let framework = out.framework;
    read_leaves(out, leaves, |path| config_field(framework, path));
}
