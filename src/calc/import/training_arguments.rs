//! The Hugging Face Trainer's `TrainingArguments` (`Reads::TrainingArguments`): its JSON dict
//! (`TrainingArguments.to_json_string()`), a `TrainingArguments(...)` call as dpcalc exports it
//! (accelerate's `ParallelismConfig` inside it, TRL's commented `max_length`), or
//! HfArgumentParser's flags (`command_line.rs`).

use super::json::{json_duplicates, json_reason};
use super::{command_line, config_field, Imported, NOT_A_CONFIG};
use crate::calc::parse;

/// TrainingArguments as a JSON dict, HfArgumentParser's flags (after a launcher and the
/// script, or alone), or a `TrainingArguments(...)` call (as dpcalc exports it).
pub(super) fn read(text: &str, out: &mut Imported) {
    let t = text.trim_start();
    if t.starts_with('{') {
        training_arguments_json(text, out);
    } else if text.contains("TrainingArguments(")
        || !text
            .split_whitespace()
            .any(|w| w.starts_with("--") && w.len() > 2)
    {
        python_call(text, out);
    } else {
        command_line::read(text, out);
    }
}

fn training_arguments_json(text: &str, out: &mut Imported) {
    let map = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            out.malformed("the JSON is not an object; TrainingArguments is { \"key\": value, … }");
            return;
        }
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
    json_duplicates(text, out, "the Trainer");
    let mut seen = Vec::new();
    for (key, value) in &map {
        use serde_json::Value;
        let text = match value {
            Value::Null => continue,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::String(s) => s.clone(),
            Value::Array(_) | Value::Object(_) => {
                out.unknown(key.clone());
                continue;
            }
        };
        match config_field(out.framework, key) {
            Some(f) => out.input(f, text, &mut seen, key),
            None => out.unknown(key.clone()),
        }
    }
}

/// Splits Python arguments at the commas outside quotes and parentheses; a `#` outside quotes
/// ends the text.
fn python_args(text: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut quote, mut escaped, mut start) = (0usize, None::<char>, false, 0usize);
    for (i, c) in text.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    args.push(text[start..i].trim());
                    start = i + 1;
                }
                '#' => {
                    args.push(text[start..i].trim());
                    start = text.len();
                    break;
                }
                _ => {}
            },
        }
    }
    if start < text.len() {
        args.push(text[start..].trim());
    }
    args.retain(|a| !a.is_empty());
    args
}

/// A Python literal as form text (`True` → `true`, a quoted string unquoted); `Err` for an
/// expression; `Ok(None)` for `None`.
fn python_literal(v: &str) -> Result<Option<String>, ()> {
    match v {
        "True" => return Ok(Some("true".into())),
        "False" => return Ok(Some("false".into())),
        "None" => return Ok(None),
        _ => {}
    }
    if v.starts_with('"') {
        return serde_json::from_str::<String>(v).map(Some).map_err(|_| ());
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        if !inner.contains(['\'', '\\']) {
            return Ok(Some(inner.to_string()));
        }
        return Err(());
    }
    let number = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'));
    if number {
        Ok(Some(v.replace('_', "")))
    } else {
        Err(())
    }
}

/// `TrainingArguments(key=value, …)` in Python, one argument a line or several; accelerate's
/// `ParallelismConfig(tp_size=…)` inside it; dpcalc's commented `# max_length=…` (TRL's) and
/// `# parallelism_config=…` lines.
fn python_call(text: &str, out: &mut Imported) {
    let mut seen = Vec::new();
    let mut read_any = false;
    for (n, line) in text.lines().enumerate() {
        let mut l = line.trim();
        if let Some(c) = l.strip_prefix('#') {
            let c = c.trim();
            if c.starts_with("max_length=") || c.starts_with("parallelism_config=") {
                l = c;
            } else {
                continue;
            }
        }
        if l.starts_with("from ") || l.starts_with("import ") {
            continue;
        }
        if let Some(i) = l.find("TrainingArguments(") {
            l = &l[i + "TrainingArguments(".len()..];
        }
        let at = format!("line {}", n + 1);
        let mut args = python_args(l);
        // the call's closing parenthesis
        if let Some(last) = args.last_mut() {
            if last.matches(')').count() > last.matches('(').count() {
                *last = last.strip_suffix(')').unwrap_or(last).trim_end();
            }
        }
        let mut queue: Vec<&str> = args.into_iter().rev().collect();
        while let Some(arg) = queue.pop() {
            if arg.is_empty() {
                continue;
            }
            let Some((key, value)) = arg.split_once('=') else {
                out.unknown(arg.to_string());
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            if key.is_empty()
                || !key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
            {
                out.unknown(arg.to_string());
                continue;
            }
            read_any = true;
            if let Some(inner) = value
                .strip_prefix("ParallelismConfig(")
                .and_then(|v| v.strip_suffix(')'))
            {
                queue.extend(python_args(inner).into_iter().rev());
                continue;
            }
            let Some(field) = config_field(out.framework, key) else {
                out.unknown(key.to_string());
                continue;
            };
            match python_literal(value) {
                Ok(Some(v)) => out.input(field, v, &mut seen, &at),
                Ok(None) => {}
                Err(()) => out.error(format!(
                    "{at}: {key}={} is not a literal; the field is left empty",
                    parse::shorten(value)
                )),
            }
        }
    }
    if !read_any && out.errors.is_empty() && !text.contains("TrainingArguments(") {
        out.error(NOT_A_CONFIG);
    }
}
