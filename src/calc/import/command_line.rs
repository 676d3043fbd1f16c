//! A launch command's `--flags` (`Reads::CommandLine`: Megatron-LM's `--dash-style` flags, with
//! `store_true` flags and argparse's `nargs`; `Reads::TrainingArguments`: HfArgumentParser's
//! `--under_score` flags, `--flag true`, `--no_flag`), after a launcher and a script or alone,
//! also as a bash script read by `shell` for the command it runs. A value the text cannot know
//! (`$1`, `$(…)`) is never taken: it is named once, with every flag it leaves empty.

use super::launcher::{launcher_flags, split_command};
use super::shell;
use super::words::{flags, Unknowns};
use super::{config_field, Imported, Scope};
use crate::calc::spec::{self, Reads};
use crate::calc::{parse, Field, Kind};

/// HfArgumentParser's booleans (`transformers/hf_argparser.py`, `string_to_bool`).
fn hf_bool(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "true" | "t" | "y" | "1" => Some("true"),
        "no" | "false" | "f" | "n" | "0" => Some("false"),
        _ => None,
    }
}

pub(super) fn read(text: &str, out: &mut Imported) {
    let mut unknowns = Unknowns::new(shell::is_script(text));
    let Some(words) = command_words(text, &mut unknowns, out) else {
        return;
    };
    let command = split_command(&words);
    let mut seen = Vec::new();
    launcher_flags(command.launcher, out, &mut seen, &mut unknowns);
    // HfArgumentParser's flags, or Megatron-LM's (`megatron/training/arguments.py`)
    let import = out.framework.spec().import.as_ref();
    let reads = import.map(|i| i.reads);
    let words = import.map_or(spec::all_words as fn(Field) -> Option<usize>, |i| i.words);
    let hf = reads == Some(Reads::TrainingArguments);
    let mut leading = true;
    for (flag, values) in flags(command.program) {
        if flag.is_empty() {
            // words before the first flag: positional arguments the script does not take
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
        if out.scope == Scope::Cluster {
            out.unknown(shown);
            continue;
        }
        // HfArgumentParser's `--no_<flag>` for a boolean that defaults to True
        let negated = key
            .strip_prefix("no_")
            .filter(|_| hf && inline.is_none())
            .and_then(|k| config_field(out.framework, k))
            .filter(|f| f.kind() == Kind::Flag);
        if let Some(field) = negated {
            for v in values {
                out.unknown(v.to_string());
            }
            unknowns.taken(out, field, &shown, &[flag]);
            out.input(field, "false".into(), &mut seen, &shown);
            continue;
        }
        let Some(field) = config_field(out.framework, &key) else {
            out.unknown(shown);
            continue;
        };
        let Some(value) = flag_value(out, field, (&shown, inline, &values), hf, words) else {
            continue;
        };
        if unknowns.unknown(out, &shown, &value) {
            continue;
        }
        let parts: Vec<&str> = inline.into_iter().chain(values.iter().copied()).collect();
        unknowns.taken(out, field, &shown, &parts);
        out.input(field, value, &mut seen, &shown);
    }
    unknowns.report(out);
}

/// The words of the command: a script's training command as bash expands it, or the command
/// line split as a shell splits it; `None` (with the error) when there is none to read.
fn command_words(text: &str, unknowns: &mut Unknowns, out: &mut Imported) -> Option<Vec<String>> {
    Some(if unknowns.script {
        // a script: the command it runs, expanded as bash would
        let script = shell::read(text);
        if script.too_large {
            out.error(
                "the script's variables grow past what dpcalc reads (an array or a value too large); \
                 what did not fit is left out",
            );
        }
        if script.command.is_empty() {
            out.error(
                "this script runs no training command (torchrun, python … .py, deepspeed, accelerate) \
                 that dpcalc can follow; nothing is read",
            );
            return None;
        }
        let kept: Vec<bool> = script.command.iter().map(|w| !w.is_empty()).collect();
        let words: Vec<String> = script
            .command
            .iter()
            .filter(|w| !w.is_empty())
            .cloned()
            .collect();
        unknowns.follow(&words, &script, &kept);
        words
    } else {
        let mut lexer = shlex::Shlex::new(text);
        // shlex yields an empty word for a `\` line continuation after a space; an empty word
        // is never a value dpcalc could use, so empty words are dropped
        let words: Vec<String> = lexer.by_ref().filter(|w| !w.is_empty()).collect();
        if lexer.had_error {
            out.error(format!(
                "the command line has an unclosed quote or a trailing backslash (line {})",
                lexer.line_no
            ));
            return None;
        }
        words
    })
}

/// The value of `--flag` (`shown`) for `field`: inline after `=`, or the words after it, as
/// HfArgumentParser or argparse takes them; `None` (with the error) when it takes none.
fn flag_value(
    out: &mut Imported,
    field: Field,
    (shown, inline, values): (&str, Option<&str>, &[&str]),
    hf: bool,
    words: fn(Field) -> Option<usize>,
) -> Option<String> {
    Some(match (inline, field.kind()) {
        (Some(v), Kind::Flag) if hf && values.is_empty() => {
            hf_bool(v).map_or_else(|| v.to_string(), str::to_string)
        }
        (Some(v), _) if values.is_empty() => v.to_string(),
        (Some(_), _) => {
            out.error(format!(
                "{shown}= is followed by more words ({}); the field is left empty",
                values.join(" ")
            ));
            return None;
        }
        // HfArgumentParser: `--flag` alone is True, `--flag false` says it
        (None, Kind::Flag) if hf && values.len() == 1 && hf_bool(values[0]).is_some() => {
            hf_bool(values[0]).unwrap_or("true").to_string()
        }
        // a store_true flag takes no value; words after it are positional
        (None, Kind::Flag) => {
            for v in values {
                out.unknown(v.to_string());
            }
            "true".to_string()
        }
        (None, _) if values.is_empty() => {
            out.error(format!("{shown} needs a value"));
            return None;
        }
        (None, _) => match words(field) {
            // argparse takes its words, does not know the rest and stops: the run never
            // starts, so nothing is taken (a value split by an unquoted `${ARGS[@]}`)
            Some(n) if values.len() > n => {
                out.error(format!(
                    "{shown} takes {n} word(s) but is followed by {} ({}); argparse stops: \
                     \u{201c}unrecognized arguments: {}\u{201d}. The field is left empty; \
                     quote the value where it is expanded",
                    values.len(),
                    parse::shorten(&values.join(" ")),
                    parse::shorten(&values[n..].join(" "))
                ));
                return None;
            }
            _ => values.join(" "),
        },
    })
}
