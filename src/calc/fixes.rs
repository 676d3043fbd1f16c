//! One-click fixes: for each field where the framework refuses the inputs, the nearest changes
//! that make it accept them, each verified by the framework's own compute.
//!
//! A refusal already says what to change in words ([`super::Refusal::fix`]); this module turns
//! that into changes the page can apply ([`Fix::set`]). Candidates come from two places:
//! - the layout explorer ([`super::layout::explore`]), for an error in the parallel grid, at a
//!   parallel size or at the cluster: its valid rows, nearest to the current sizes first (the
//!   row that changes the size in error, then fewer sizes changed, then rows that keep the global
//!   batch, then the smallest change), each with what the row sets to keep the batch;
//! - the field's own nearby values: the values the messages at the field name (a refusal's
//!   "nearest valid: 16 or 32"), the neighbours, the current value rounded to multiples of powers
//!   of two, each value given when the field was given twice, the other state of a flag, and
//!   leaving the field unset; nearest first.
//!
//! No candidate is trusted: each is applied to the inputs and computed again
//! ([`Framework::compute`]); it is offered only when the framework then shows no error at the
//! field nor at a field it sets. Fixes that leave no error at all are listed first, then those
//! that leave only errors other fields already had; one that reveals an error at another field
//! (which the error at the field hid) only when there is no other. The work is bounded: at most [`MAX_FIELDS`] fields, [`MAX_TRIES`] computes per source
//! and field, and one explorer per call (the explorer's own work is bounded by its memo and
//! [`super::layout::MAX_WORLD`]). Nothing here runs without an error: a report without errors
//! gets no fixes and costs nothing.

use super::frameworks::Framework;
use super::layout::{self, BatchMatch, Explorer};
use super::spec::Concept;
use super::{parse, Field, Kind, Level, Param, RawInputs, Report, Stage};

/// A one-click change that makes the framework accept the inputs at a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the button says (`Use tensor_parallel_size = 4`).
    pub label: String,
    /// The fields it sets, in order (an empty value unsets the field).
    pub set: Vec<(Field, String)>,
}

/// The most fields with an error that get fixes (in the order of their first error).
pub const MAX_FIELDS: usize = 6;
/// The most fixes offered at one field.
pub const MAX_FIXES: usize = 3;
/// The most candidate computes per source (explorer rows, values) and field.
pub const MAX_TRIES: usize = 16;

/// The fields of the cluster: an error there is fixed by another world size or another layout.
const CLUSTER: [Field; 3] = [Field::WorldSize, Field::Nodes, Field::GpusPerNode];

/// The fixes for each field with an error in `report` (the report of `raw` at `release`), in the
/// order of the fields' first errors; a field without a verified fix is left out.
pub fn fixes(
    framework: Framework,
    release: &str,
    raw: &RawInputs,
    report: &Report,
) -> Vec<(Field, Vec<Fix>)> {
    let mut fields: Vec<Field> = Vec::new();
    for d in report.diags.iter().filter(|d| d.level == Level::Error) {
        if !fields.contains(&d.field) {
            fields.push(d.field);
        }
    }
    if fields.is_empty() {
        return Vec::new();
    }
    let check = Check {
        framework,
        release,
        raw,
        before: &fields,
    };
    let dims = layout::dims_at(framework, release);
    let mut explorer: Option<Explorer> = None;
    let mut out = Vec::new();
    for &field in fields.iter().take(MAX_FIELDS) {
        let cluster = CLUSTER.contains(&field);
        let grid = report
            .diags_for(field)
            .any(|d| d.level == Level::Error && d.stage == Stage::Grid);
        let is_dim = dims.iter().any(|&(_, f)| f == field);
        let mut found: Vec<(Tier, Fix)> = Vec::new();
        // a cluster error: another world size first (what nearest_valid's text names first)
        if cluster {
            for target in cluster_targets(field, raw) {
                found.extend(check.values(field, target, report, MAX_FIXES - 1));
            }
        }
        // another value of the field itself first, unless it is a size of the layout
        if !cluster && !is_dim {
            found.extend(check.values(field, field, report, MAX_FIXES));
        }
        if (cluster || grid || is_dim) && found.len() < MAX_FIXES + usize::from(cluster) {
            let ex = explorer.get_or_insert_with(|| layout::explore(framework, release, raw));
            let want = MAX_FIXES.saturating_sub(found.len()).max(1);
            found.extend(check.rows(field, ex, want));
        }
        if is_dim && found.len() < MAX_FIXES {
            let want = MAX_FIXES - found.len();
            found.extend(check.values(field, field, report, want));
        }
        // nothing at the field itself: a batch rule may want another batch key given (axolotl
        // 0.14.0–0.18.0's "at least two of micro_batch_size, gradient_accumulation_steps,
        // batch_size"), or that key instead of this one ("please set only one of
        // gradient_accumulation_steps or batch_size")
        if found.is_empty() {
            found.extend(sibling_fixes(&check, framework, raw, field));
        }
        let list = ranked(found, cluster);
        if !list.is_empty() {
            out.push((field, list));
        }
    }
    out
}

/// Nothing at the field itself: another batch key given, or that key instead of this one.
fn sibling_fixes(
    check: &Check,
    framework: Framework,
    raw: &RawInputs,
    field: Field,
) -> Vec<(Tier, Fix)> {
    let siblings: Vec<Field> = [Concept::Accum, Concept::Micro]
        .into_iter()
        .filter_map(|c| framework.field_for(c))
        .filter(|&t| t != field && raw.get(t).trim() != "1")
        .collect();
    let both: Vec<(Field, String)> = siblings.iter().map(|&t| (t, "1".to_string())).collect();
    let sets = siblings
        .iter()
        .map(|&t| vec![(t, "1".to_string())])
        .chain(
            siblings
                .iter()
                .map(|&t| vec![(field, String::new()), (t, "1".to_string())]),
        )
        .chain((siblings.len() > 1).then_some(both));
    check.first(field, sets, 1)
}

/// The fixes found, each set once, the ones that leave no error at all first.
fn ranked(mut found: Vec<(Tier, Fix)>, cluster: bool) -> Vec<Fix> {
    let mut seen: Vec<Vec<(Field, String)>> = Vec::new();
    found.retain(|(_, f)| {
        let new = !seen.contains(&f.set);
        seen.push(f.set.clone());
        new
    });
    // the ones that leave no error at all first (stable: nearest first within each)
    [Tier::Clean, Tier::Others, Tier::Reveals]
        .iter()
        .flat_map(|t| found.iter().filter(move |(tier, _)| tier == t))
        .map(|(_, f)| f.clone())
        .take(MAX_FIXES + usize::from(cluster))
        .collect()
}

/// Whether a message names the key of its field as a word (`tp` in `tp × pp`, not in `tp_size`):
/// where it does not, the page shows the key in front of it.
pub fn names_key(field: Field, message: &str) -> bool {
    let key = field.key();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    message.match_indices(key).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let mut after = message[i + key.len()..].chars();
        // a dot or dash continues the name only when a letter or digit follows (`tp.x`, not
        // a sentence's full stop)
        let longer = match after.next() {
            Some(c) if word(c) => true,
            Some('.' | '-') => after.next().is_some_and(word),
            _ => false,
        };
        !before.is_some_and(word) && !longer
    })
}

/// Which cluster field a world-size fix sets: `world_size` when it is given, otherwise the side
/// of `nodes × gpus_per_node` that is not pinned (the GPUs per node on one node).
fn cluster_targets(field: Field, raw: &RawInputs) -> Vec<Field> {
    let given = |f: Field| raw.is_given(f) || raw.conflict(f).is_some();
    if field != Field::WorldSize {
        return vec![field];
    }
    if given(Field::WorldSize) {
        return vec![Field::WorldSize];
    }
    let one_node = matches!(raw.get(Field::Nodes).trim(), "" | "1");
    if one_node {
        vec![Field::GpusPerNode]
    } else {
        vec![Field::Nodes]
    }
}

/// What a verified fix leaves, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// No error at all.
    Clean,
    /// Errors only at fields that had one before.
    Others,
    /// An error at a field that had none (one the error at the field hid, such as a layout
    /// that no longer adds up once a key the release lacks is removed).
    Reveals,
}

/// Applies and recomputes candidates.
struct Check<'a> {
    framework: Framework,
    release: &'a str,
    raw: &'a RawInputs,
    /// The fields with an error before any change.
    before: &'a [Field],
}

impl Check<'_> {
    /// How well `set` fixes the error at `field`: `None` when the framework, given it, still
    /// shows an error at `field` or at a field it sets; else [`Tier`].
    fn verify(&self, field: Field, set: &[(Field, String)]) -> Option<Tier> {
        let mut raw = self.raw.clone();
        for (f, v) in set {
            raw.set(*f, v.clone());
        }
        let report = self.framework.compute(self.release, &raw);
        let mut tier = Tier::Clean;
        for d in report.diags.iter().filter(|d| d.level == Level::Error) {
            if d.field == field || set.iter().any(|(f, _)| *f == d.field) {
                return None;
            }
            tier = tier.max(if self.before.contains(&d.field) {
                Tier::Others
            } else {
                Tier::Reveals
            });
        }
        Some(tier)
    }

    /// Verifies `sets` in order (at most [`MAX_TRIES`]) until `want` fixes leave no new error;
    /// fixes that reveal an error elsewhere are offered only when there is no other.
    fn first(
        &self,
        field: Field,
        sets: impl Iterator<Item = Vec<(Field, String)>>,
        want: usize,
    ) -> Vec<(Tier, Fix)> {
        let (mut good, mut other) = (Vec::new(), Vec::new());
        for set in sets.take(MAX_TRIES) {
            if good.len() >= want {
                break;
            }
            if let Some(tier) = self.verify(field, &set) {
                let fix = Fix {
                    label: label(&set),
                    set,
                };
                if tier == Tier::Reveals {
                    other.push((tier, fix));
                } else {
                    good.push((tier, fix));
                }
            }
        }
        if good.is_empty() {
            other.truncate(want);
            return other;
        }
        good
    }

    /// The explorer's valid rows nearest to the current layout, verified, at most `want`.
    fn rows(&self, field: Field, ex: &Explorer, want: usize) -> Vec<(Tier, Fix)> {
        let current: Vec<u64> = ex
            .dims
            .iter()
            .map(|&(_, f)| parse::size_or_one(self.raw, f))
            .collect();
        let is_dim = ex.dims.iter().any(|&(_, f)| f == field);
        // how near each row is, nearest first: it changes the size in error, how many sizes it
        // changes, it keeps the global batch, the sum of the size changes (one number; an
        // invalid row is last)
        let keys: Vec<u128> = ex
            .rows
            .iter()
            .map(|row| {
                if !row.valid() {
                    return u128::MAX;
                }
                let (mut changed, mut distance, mut touches) = (0u128, 0u128, false);
                for ((&(_, f), &s), &c) in ex.dims.iter().zip(&row.sizes).zip(&current) {
                    if s != c {
                        changed += 1;
                        distance = distance.saturating_add(u128::from(s.abs_diff(c)));
                        touches |= f == field;
                    }
                }
                (u128::from(is_dim && !touches) << 120)
                    | (changed.min(0xff) << 100)
                    | (u128::from(row.batch_match != BatchMatch::Exact) << 99)
                    | distance.min((1 << 99) - 1)
            })
            .collect();
        let sets = smallest(&keys, 2 * MAX_TRIES)
            .into_iter()
            .filter(|&i| keys[i] != u128::MAX)
            .filter_map(|i| {
                let row = &ex.rows[i];
                let mut set = self.changed(ex, &current, ex.assignments(row));
                // the accumulation or global batch a row sets only matters when it keeps the
                // batch or replaces a value given; otherwise the framework's default is natural
                if row.batch_match != BatchMatch::Exact {
                    set.retain(|(f, _)| {
                        !(Some(*f) == ex.accum_field || Some(*f) == ex.global_field)
                            || self.raw.is_given(*f)
                    });
                }
                (!set.is_empty()).then_some(set)
            });
        self.first(field, sets, want)
    }

    /// A row's assignments without those that set what is already there.
    fn changed(
        &self,
        ex: &Explorer,
        current: &[u64],
        set: Vec<(Field, String)>,
    ) -> Vec<(Field, String)> {
        set.into_iter()
            .filter(|(f, v)| {
                if let Some(i) = ex.dims.iter().position(|&(_, d)| d == *f) {
                    return current.get(i).map(u64::to_string).as_deref() != Some(v.as_str());
                }
                self.raw.get(*f).trim() != v.as_str()
            })
            .collect()
    }

    /// Nearby values of `target` (for an error at `field`), verified, nearest first, at most `want`.
    fn values(
        &self,
        field: Field,
        target: Field,
        report: &Report,
        want: usize,
    ) -> Vec<(Tier, Fix)> {
        let messages: Vec<&str> = report
            .diags_for(field)
            .filter(|d| d.level == Level::Error)
            .map(|d| d.message.as_str())
            .collect();
        let values = candidates(self.framework.kind(target), target, self.raw, &messages);
        self.first(field, values.into_iter().map(|v| vec![(target, v)]), want)
    }
}

/// `Use tensor_parallel_size = 2, gradient_accumulation_steps = 8`; an empty value reads
/// `leave KEY unset`.
fn label(set: &[(Field, String)]) -> String {
    let parts: Vec<String> = set
        .iter()
        .map(|(f, v)| {
            if v.is_empty() {
                format!("leave {} unset", f.key())
            } else {
                format!("{} = {v}", f.key())
            }
        })
        .collect();
    let text = parts.join(", ");
    match text.strip_prefix("leave ") {
        Some(rest) => format!("Leave {rest}"),
        None => format!("Use {text}"),
    }
}

/// The most numbers read from the messages.
const MAX_NUMBERS: usize = 24;

/// The values to try for `field`, nearest to the current one first; leaving the field unset
/// comes last.
fn candidates(kind: Kind, field: Field, raw: &RawInputs, messages: &[&str]) -> Vec<String> {
    let text = raw.get(field).trim().to_string();
    let mut first: Vec<String> = raw
        .conflict(field)
        .map(<[String]>::to_vec)
        .unwrap_or_default();
    let mut values: Vec<(f64, String)> = Vec::new();
    match kind {
        Kind::Flag => {
            let on = matches!(
                parse::flag(field, &text, &mut Vec::new()),
                Param::Given(true)
            );
            values.push((0.0, if on { "false" } else { "true" }.to_string()));
        }
        Kind::Text => {}
        Kind::Count | Kind::Int | Kind::Real => {
            numeric_candidates(kind, &text, messages, &mut values)
        }
    }
    // nearest first (distances below 1e19, kept to a thousandth)
    let keys: Vec<u128> = values.iter().map(|(d, _)| (d * 1000.0) as u128).collect();
    let mut values: Vec<(f64, String)> = smallest(&keys, keys.len())
        .into_iter()
        .map(|i| values[i].clone())
        .collect();
    // one text per number (`2.0` from a message before `2`)
    let mut numbers: Vec<f64> = Vec::new();
    values.retain(|(_, s)| match parse::number(s) {
        Some(v) if numbers.contains(&v) => false,
        Some(v) => {
            numbers.push(v);
            true
        }
        None => true,
    });
    first.extend(values.into_iter().map(|(_, s)| s));
    let mut seen: Vec<String> = Vec::new();
    first.retain(|v| {
        let keep = !v.is_empty() && *v != text && !seen.contains(v);
        seen.push(v.clone());
        keep
    });
    // leaving the field unset is always tried, within the budget
    first.truncate(MAX_TRIES - 1);
    if !text.is_empty() || raw.conflict(field).is_some() {
        first.push(String::new());
    }
    first
}

/// A number's candidates, each with its distance from the current value: the numbers the
/// messages name, the neighbours of the current value and its multiples of powers of two (or
/// powers of two when there is none), 1.
fn numeric_candidates(kind: Kind, text: &str, messages: &[&str], values: &mut Vec<(f64, String)>) {
    let whole = kind != Kind::Real;
    let current = parse::number(text).filter(|v| v.is_finite());
    let mut add = |v: f64, shown: Option<&str>| {
        if !v.is_finite() || v.abs() > 1e18 {
            return;
        }
        let ok = match kind {
            Kind::Count => v >= 0.0 && v.fract() == 0.0,
            Kind::Int => (v >= 0.0 || v == -1.0) && v.fract() == 0.0,
            _ => v >= 0.0,
        };
        if !ok {
            return;
        }
        let s = match shown {
            Some(s) if !whole => s.to_string(),
            // at most 1e18: exact as an integer
            _ if v.fract() == 0.0 => format!("{}", v as i64),
            _ => format!("{v}"),
        };
        let distance = current.map_or(v.abs(), |c| (v - c).abs());
        values.push((distance, s));
    };
    for m in messages {
        for n in numbers(m).into_iter().take(MAX_NUMBERS) {
            if let Some(v) = parse::number(&n) {
                add(v, Some(&n));
            }
        }
    }
    match current {
        Some(c) => {
            for d in [1.0, 2.0] {
                add(
                    c.floor() - d + if c.fract() == 0.0 { 0.0 } else { 1.0 },
                    None,
                );
                add(
                    c.ceil() + d - if c.fract() == 0.0 { 0.0 } else { 1.0 },
                    None,
                );
            }
            let mut m = 2.0f64;
            while m <= 4096.0 {
                add((c / m).floor() * m, None);
                add((c / m).ceil() * m, None);
                m *= 2.0;
            }
            add(1.0, None);
        }
        None => {
            let mut v = 1.0;
            while v <= 1024.0 {
                add(v, None);
                v *= 2.0;
            }
        }
    }
}

/// The indices of the `n` smallest keys, smallest first (ties: the earlier first); a selection,
/// not a sort (one small loop in the bundle instead of a sort per key type).
fn smallest(keys: &[u128], n: usize) -> Vec<usize> {
    let mut taken = vec![false; keys.len()];
    let mut out = Vec::new();
    while out.len() < n {
        let mut best: Option<usize> = None;
        for (i, k) in keys.iter().enumerate() {
            if !taken[i] && best.is_none_or(|b| *k < keys[b]) {
                best = Some(i);
            }
        }
        let Some(b) = best else { break };
        taken[b] = true;
        out.push(b);
    }
    out
}

/// The numbers in a text (`16`, `2.0`, not a version like `0.14.0`), as written.
fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|t| t.trim_end_matches('.'))
        .filter(|t| !t.is_empty() && t.len() <= 20 && t.matches('.').count() <= 1)
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_keys() {
        assert_eq!(
            numbers("Nearest valid: 16 or 32 (1.5, 0.14.0, 2.0)."),
            vec!["16", "32", "1.5", "2.0"]
        );
        assert!(names_key(Field::Tp, "tp × pp = 3 does not divide 8"));
        assert!(!names_key(Field::Tp, "tp_size = 3"));
        assert!(names_key(Field::WorldSize, "must divide world_size."));
        assert!(names_key(Field::WorldSize, "see world_size 6"));
        assert!(!names_key(Field::WorldSize, "see WORLD_SIZE"));
        assert!(names_key(Field::LoggingSteps, "--logging_steps must be"));
        assert!(!names_key(Field::Tp, "pp.tp-x"));
    }

    #[test]
    fn labels() {
        assert_eq!(
            label(&[(Field::TensorParallelSize, "4".into())]),
            "Use tensor_parallel_size = 4"
        );
        assert_eq!(
            label(&[(Field::WarmupRatio, String::new())]),
            "Leave warmup_ratio unset"
        );
    }
}
