//! A TOML config (`Reads::Toml`, torchtitan's job config, parsed by `basic-toml` behind a
//! nesting guard): each `[table] key` read as `table.key`, and the framework's joined keys
//! (`Import::joined`: torchtitan's `[model] name` and `flavor`) as one value.

use super::leaves::{capped, read_leaves, Leaf, MAX_DEPTH, MAX_LEAVES};
use super::{config_field, Imported};
use crate::calc::Framework;

/// The deepest nesting of arrays and inline tables read (basic-toml recurses without a limit).
const MAX_TOML_NESTING: usize = 32;

/// The line where `[`/`{` nesting outside strings and comments, or a dotted key or table name,
/// first goes deeper than [`MAX_TOML_NESTING`], if it does: a guard before the parser (TOML's four string forms and its
/// comments are skipped as the TOML spec lexes them), not a parser.
fn toml_too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut line) = (0usize, 0usize, 1usize);
    // the dotted segments of the line's key or table header (`a.b.c`): tables nest too
    let (mut dots, mut in_value) = (0usize, false);
    // the end of a string opened at `i` by `delim` (escapes only in basic strings)
    let skip = |mut i: usize, delim: &[u8], line: &mut usize| {
        let escapes = delim[0] == b'"';
        while i < b.len() {
            if b[i] == b'\n' {
                *line += 1;
            }
            if escapes && b[i] == b'\\' {
                i += 2;
                continue;
            }
            if b[i..].starts_with(delim) {
                return i + delim.len();
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
                (dots, in_value) = (0, false);
            }
            b'=' => {
                in_value = true;
                i += 1;
            }
            b'.' if !in_value => {
                dots += 1;
                if dots > MAX_TOML_NESTING {
                    return Some(line);
                }
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let triple = [q, q, q];
                i = if b[i..].starts_with(&triple) {
                    skip(i + 3, &triple, &mut line)
                } else {
                    skip(i + 1, &triple[..1], &mut line)
                };
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_TOML_NESTING {
                    return Some(line);
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// torchtitan's job TOML (`torchtitan/config/job_config.py`), parsed by `basic-toml` (into a
/// JSON value): each `[table] key` is read as `table.key` through the Spec's alias, in the
/// text's order.
pub(super) fn read(text: &str, out: &mut Imported) {
    use serde_json::Value;
    if let Some(line) = toml_too_deep(text) {
        out.malformed(format!(
            "TOML error at line {line}: arrays, inline tables or dotted keys nested more than {MAX_TOML_NESTING} deep; a job config has none"
        ));
        return;
    }
    let top: Value = match basic_toml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            // basic-toml's message ends with " at line L column C"
            let e = e.to_string();
            out.malformed(match e.rfind(" at line ") {
                Some(i) => format!("TOML error at {}: {}", &e[i + 4..], &e[..i]),
                None => format!("TOML error: {e}"),
            });
            return;
        }
    };
    // where each dotted key is: its table header and its `key =` line (the parser keeps none)
    let lines = key_lines(text);
    // each key's first line, looked up once per leaf (a scan per leaf was quadratic: 20,000
    // keys took most of a second)
    let mut first_line: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(lines.len());
    for (k, n) in &lines {
        first_line.entry(k.as_str()).or_insert(*n);
    }
    let line_of = |p: &str| first_line.get(p).copied();
    let mut leaves: Vec<(usize, Leaf)> = Vec::new();
    // (`None`: the top table; an empty key is a key: `[""] a = 1` is `.a`, never the top's `a`)
    let mut stack: Vec<(Option<String>, &Value, usize)> = vec![(None, &top, 0)];
    while let Some((path, v, depth)) = stack.pop() {
        let Value::Object(map) = v else { continue };
        for (k, v) in map {
            let p = match &path {
                None => k.clone(),
                Some(path) => format!("{path}.{k}"),
            };
            let value = match v {
                Value::Object(_) if depth < MAX_DEPTH => {
                    stack.push((Some(p), v, depth + 1));
                    continue;
                }
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            let line = line_of(&p).unwrap_or(usize::MAX);
            if leaves.len() < MAX_LEAVES {
                leaves.push((
                    line,
                    Leaf {
                        at: format!("line {line}"),
                        path: p,
                        value,
                    },
                ));
            }
        }
    }
    capped(leaves.len(), out);
    leaves.sort_by_key(|(line, _)| *line);
    let framework = out.framework;
    let mut leaves: Vec<Leaf> = leaves.into_iter().map(|(_, l)| l).collect();
    join_leaves(framework, &mut leaves);
    read_leaves(out, leaves, |path| config_field(framework, path));
}

/// Each dotted key's line: its table header and its `key =` line, in the text's order (at most
/// `MAX_LEAVES`).
fn key_lines(text: &str) -> Vec<(String, usize)> {
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut table = String::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[') {
            table = h
                .trim_matches(|c| c == '[' || c == ']' || c == ' ')
                .to_string();
        } else if let Some((k, _)) = l.split_once('=') {
            let k = k.trim().trim_matches('"');
            let path = if table.is_empty() {
                k.to_string()
            } else {
                format!("{table}.{k}")
            };
            if lines.len() < MAX_LEAVES {
                lines.push((path, n + 1));
            }
        }
    }
    lines
}

/// The framework's joined keys (`Import::joined`): the second's value appended to the first's
/// as `first/second`, the second then read; without the first, the second stays unknown.
fn join_leaves(framework: Framework, leaves: &mut Vec<Leaf>) {
    let Some(import) = framework.spec().import.as_ref() else {
        return;
    };
    for (first, second) in import.joined {
        let Some(j) = leaves.iter().position(|l| l.path == *second) else {
            continue;
        };
        let Some(i) = leaves.iter().position(|l| l.path == *first) else {
            continue;
        };
        let tail = leaves[j].value.clone();
        if let (Some(v), Some(t)) = (leaves[i].value.as_mut(), tail) {
            v.push('/');
            v.push_str(&t);
            leaves.remove(j);
        }
    }
}
