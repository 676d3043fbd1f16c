//! Links into reports, and what the tests read from a report: a value as the framework's Python
//! printed it, the messages of a level, at a field or in all.

use dpcalc::calc::{Field, Level, Num, Output, RawInputs, Report};
use dpcalc::query;

/// The report the page shows for the link `q` (a query string).
pub fn report_of(q: &str) -> Report {
    query::decode(q).report()
}

/// The report of the link `q`, which the framework must accept: the test fails on any error.
pub fn accepted(q: &str) -> Report {
    let r = report_of(q);
    let errors: Vec<_> = r.diags.iter().filter(|d| d.level == Level::Error).collect();
    assert!(errors.is_empty(), "{q}: {errors:?}");
    r
}

/// The value of `o` as a count of bytes (an integer), or the test fails.
pub fn bytes(r: &Report, o: Output) -> u128 {
    match r.value(o) {
        Some(Num::Int(v)) => u128::try_from(v).unwrap(),
        other => panic!("{}: {other:?}", o.name()),
    }
}

/// Inputs of the given fields and values.
pub fn inputs(pairs: &[(Field, &str)]) -> RawInputs {
    RawInputs::from_pairs(pairs.iter().copied())
}

/// `s` percent-encoded for a link's value: every byte but ASCII letters and digits.
pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The value of `o` as [`Num::raw`] prints it (an int as digits, a float with a `.`), if any.
pub fn raw(r: &Report, o: Output) -> Option<String> {
    r.value(o).map(Num::raw)
}

/// The value of `o` when it is an integer.
pub fn int(r: &Report, o: Output) -> Option<i128> {
    match r.value(o)? {
        Num::Int(v) => Some(v),
        Num::Float(_) => None,
    }
}

/// The texts of every message of `level`, in order.
pub fn messages(r: &Report, level: Level) -> Vec<String> {
    r.diags
        .iter()
        .filter(|d| d.level == level)
        .map(|d| d.message.clone())
        .collect()
}

/// The texts of every error, in order.
pub fn errors(r: &Report) -> Vec<String> {
    messages(r, Level::Error)
}

/// The texts of the messages of `level` at the field `f`.
pub fn messages_at(r: &Report, f: Field, level: Level) -> Vec<String> {
    r.diags_for(f)
        .filter(|d| d.level == level)
        .map(|d| d.message.clone())
        .collect()
}

/// The texts of the errors at the field `f`.
/// The first error and its field (a refusal or an unreadable value), if any.
pub fn first_error(r: &Report) -> Option<(Field, String)> {
    r.diags
        .iter()
        .find(|d| d.level == Level::Error)
        .map(|d| (d.field, d.message.clone()))
}

pub fn errors_at(r: &Report, f: Field) -> Vec<String> {
    messages_at(r, f, Level::Error)
}

/// The records a published-measurement test leaves out, one line per reason in the order the
/// reasons first come: `- not estimated, {why}: `a`, `b``.
pub fn left_out<'a>(items: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for (id, why) in items {
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, ids)) => ids.push(id),
            None => reasons.push((why, vec![id])),
        }
    }
    let mut t = String::new();
    for (why, ids) in reasons {
        let ids: Vec<String> = ids.iter().map(|i| format!("`{i}`")).collect();
        t.push_str(&format!("- not estimated, {why}: {}\n", ids.join(", ")));
    }
    t
}

/// The worked step of what FSDP2 keeps under pipeline parallelism, "stage k: G B gathered
/// parameters + F B unsharded fp32 gradients", as `(k, G, F)`; `None` when the report has none.
pub fn fsdp_pipeline_kept(r: &Report) -> Option<(u128, u128, u128)> {
    let worked = &r
        .steps
        .iter()
        .find(|s| {
            s.output == Output::MemoryPerGpuBytes
                && s.rule.starts_with("under pipeline parallelism FSDP2 keeps")
        })?
        .worked;
    assert!(worked.ends_with("unsharded fp32 gradients"), "{worked}");
    let words: Vec<&str> = worked.split([' ', ':']).collect();
    let n = |i: usize| -> u128 { words[i].parse().unwrap_or_else(|_| panic!("{worked}")) };
    Some((n(1), n(3), n(8)))
}

/// The worked step of what FSDP2 keeps gathered without pipeline parallelism, "N B final norm +
/// O B output layer gathered", as `(N, O)`; `None` when the report has none.
pub fn fsdp_output_kept(r: &Report) -> Option<(u128, u128)> {
    let worked = &r
        .steps
        .iter()
        .find(|s| {
            s.output == Output::MemoryPerGpuBytes
                && s.rule
                    .starts_with("without pipeline parallelism FSDP2 keeps")
        })?
        .worked;
    assert!(worked.ends_with("B output layer gathered"), "{worked}");
    let words: Vec<&str> = worked.split(' ').collect();
    let n = |i: usize| -> u128 { words[i].parse().unwrap_or_else(|_| panic!("{worked}")) };
    Some((n(0), n(5)))
}
