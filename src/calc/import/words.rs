//! A command line's words as both of its readers take them: grouped by `--flag`
//! ([`flags`]), and the values a command line cannot know ([`Unknowns`]). `command_line.rs`
//! reads a framework's flags and `launcher.rs` a launcher's, each through these.

use super::shell::{Defaulted, Script};
use super::Imported;
use crate::calc::field::CLUSTER;
use crate::calc::{parse, Field};

/// Values a command line cannot know (`$VAR`, `$(…)`, a backquote): never a field's value. In
/// a script each unknown is named once, with every flag it leaves empty; in a bare command
/// line each flag says so.
#[derive(Default)]
pub(super) struct Unknowns {
    /// In a script (each unknown named once) or a bare command line (each flag says so).
    pub(super) script: bool,
    /// Each unknown as written (`$1`, `${PWD}`), with the flags it leaves empty.
    seen: Vec<(String, Vec<String>)>,
    /// Where each word of a script's command is (its address and length, to find the word a
    /// flag's value is part of) and the defaults it came from ([`Script::origins`]).
    origins: Vec<(usize, usize, u64)>,
    /// The script's defaults of unset variables ([`Script::defaults`]).
    defaults: Vec<Defaulted>,
    /// The flags each default gave a value to, by its index in `defaults`.
    gave: Vec<(usize, Vec<String>)>,
}

impl Unknowns {
    /// For a script (`true`) or a bare command line.
    pub(super) fn new(script: bool) -> Unknowns {
        Unknowns {
            script,
            ..Unknowns::default()
        }
    }

    /// Whether `value` holds something unknown (then it is recorded, or said at once).
    pub(super) fn unknown(&mut self, out: &mut Imported, shown: &str, value: &str) -> bool {
        if !value.contains(['$', '`']) {
            return false;
        }
        if !self.script {
            out.error(format!(
                "{shown} {value}: a shell variable or substitution; dpcalc cannot know its value, so the field is left empty"
            ));
            return true;
        }
        for name in unknown_parts(value) {
            match self.seen.iter_mut().find(|(n, _)| *n == name) {
                Some((_, flags)) if !flags.iter().any(|f| f == shown) => {
                    flags.push(shown.to_string())
                }
                Some(_) => {}
                None => self.seen.push((name, vec![shown.to_string()])),
            }
        }
        true
    }

    /// Remembers which defaults each of `words` (a script's command, as `script` ran it, without
    /// its empty words: `kept` says which were kept) came from.
    pub(super) fn follow(&mut self, words: &[String], script: &Script, kept: &[bool]) {
        let masks = script
            .origins
            .iter()
            .zip(kept)
            .filter(|(_, k)| **k)
            .map(|(m, _)| *m);
        self.origins = words
            .iter()
            .zip(masks)
            .map(|(w, m)| (w.as_ptr() as usize, w.len(), m))
            .collect();
        self.defaults = script.defaults.clone();
    }

    /// A value taken for `field` at `shown` from `parts` (slices of the command's words): the
    /// defaults it came from are named once ([`Unknowns::report`]); a cluster value's is kept
    /// in [`Imported::defaulted`], for the page's own cluster to win ([`Imported::settle`]).
    pub(super) fn taken(&mut self, out: &mut Imported, field: Field, shown: &str, parts: &[&str]) {
        let mut mask = 0;
        for p in parts {
            let at = p.as_ptr() as usize;
            if let Some((_, _, m)) = self
                .origins
                .iter()
                .find(|(start, len, _)| *start <= at && at < start + (*len).max(1))
            {
                mask |= m;
            }
        }
        if mask == 0 {
            return;
        }
        let mut names = Vec::new();
        for (k, d) in self.defaults.iter().enumerate() {
            if mask & (1u64 << k) == 0 {
                continue;
            }
            names.push(d.name.clone());
            match self.gave.iter_mut().find(|(i, _)| *i == k) {
                Some((_, flags)) if !flags.iter().any(|f| f == shown) => {
                    flags.push(shown.to_string())
                }
                Some(_) => {}
                None => self.gave.push((k, vec![shown.to_string()])),
            }
        }
        if CLUSTER.contains(&field) {
            out.defaulted.push((field, names.join(", ")));
        }
    }

    pub(super) fn report(self, out: &mut Imported) {
        for (k, flags) in &self.gave {
            let Some(d) = self.defaults.get(*k) else {
                continue;
            };
            let what = if d.name.starts_with(|c: char| c.is_ascii_digit()) {
                "a script argument not given"
            } else {
                "an environment variable not set"
            };
            let through = match &d.into {
                Some(v) if *v != d.name => format!(" (through {v})"),
                _ => String::new(),
            };
            out.notes.push(format!(
                "{} is {what} where dpcalc reads the script: its default {}{through} gives {}.",
                parse::shorten(&format!("${}", d.name)),
                parse::shorten(&d.value),
                and_list(flags)
            ));
        }
        for (name, flags) in self.seen {
            let verb = match flags.len() {
                0 => continue,
                1 => "is",
                _ => "are",
            };
            let list = and_list(&flags);
            out.error(format!(
                "{} is not set in the script (a script argument or an environment variable); dpcalc cannot \
                 know its value, so {list} {verb} left empty",
                parse::shorten(&name)
            ));
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => items.join(""),
    }
}

/// The unknown parts of an expanded word, as written: `$1`, `${PWD}`, `$(date)`, `` `cmd` ``.
fn unknown_parts(value: &str) -> Vec<String> {
    let c: Vec<char> = value.chars().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let end = match (c[i], c.get(i + 1)) {
            ('`', _) => c[i + 1..]
                .iter()
                .position(|&x| x == '`')
                .map_or(c.len(), |p| i + p + 2),
            ('$', Some(&open @ ('{' | '('))) => {
                let close = if open == '{' { '}' } else { ')' };
                let mut level = 0usize;
                let mut j = i + 1;
                let mut end = c.len();
                while j < c.len() {
                    if c[j] == open {
                        level += 1;
                    } else if c[j] == close {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            end = j + 1;
                            break;
                        }
                    }
                    j += 1;
                }
                end
            }
            ('$', Some(x)) if x.is_ascii_digit() || "@*#?$!-".contains(*x) => i + 2,
            ('$', _) => {
                let mut j = i + 1;
                while c
                    .get(j)
                    .is_some_and(|x| x.is_ascii_alphanumeric() || *x == '_')
                {
                    j += 1;
                }
                j
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let part: String = c[i..end.min(c.len())].iter().collect();
        // `$((2*$3))`: the unknown inside
        let inner = part
            .strip_prefix("$((")
            .filter(|p| p.contains('$'))
            .map(unknown_parts);
        for part in inner.unwrap_or_else(|| vec![part]) {
            if part.len() > 1 && !parts.contains(&part) {
                parts.push(part);
            }
        }
        i = end.max(i + 1);
    }
    if parts.is_empty() {
        parts.push(value.to_string());
    }
    parts
}

/// Groups words into `(flag without "--", following words)`; words before the first flag come
/// with an empty flag. A word is a flag when it starts with `--` and is longer than that, so
/// negative numbers (`-1`) are values.
pub(super) fn flags(words: &[String]) -> Vec<(&str, Vec<&str>)> {
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
