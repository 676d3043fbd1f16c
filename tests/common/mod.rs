//! Shared test helpers: the one oracle fixture format and the one runner every framework's oracle
//! test uses (here), files of the repository (`files`), and links into reports and what the tests
//! read from a report (`report`).
//!
//! # The fixture format (`tests/fixtures/<framework>.txt`)
//!
//! Written by `scripts/fixtures_to_common.py` (which converted the older per-framework layouts
//! without changing a recorded value). `#` lines are comments; a `# command ID: ...` line names how
//! a set of records was produced. Every other non-empty line is one record, one run of the
//! framework's own code on one input:
//!
//! ```text
//! FRAMEWORK RELEASE COMMAND CASE | LINK | OUTPUTS | OUTCOME [| OUTCOME]...
//! axolotl 0.19.0 axolotl-1 A_ws4_tp2 | world_size=4&...&tensor_parallel_size=2&num_samples=1000 | global_batch_size=int:16 save_steps=none ... | unchecked
//! deepspeed 0.19.8 deepspeed-1 T_33_17_2 | framework=deepspeed&... | train_batch_size=none ... | error: AssertionError: Check batch ...
//! ```
//!
//! - `FRAMEWORK`: dpcalc's framework id; the link must decode to it, without notices.
//! - `RELEASE`: the release the link decodes to (`link.release().id`).
//! - `COMMAND`: the id of a `# command ID:` line of the same file.
//! - `CASE`: the oracle's case name, or `-`.
//! - `LINK`: the dpcalc link (query string) with the inputs.
//! - `OUTPUTS`: space-separated `NAME=int:REPR`, `NAME=float:REPR` or `NAME=none`, or `-` for none
//!   at all. `REPR` is the value as Python printed it. An `int` matches only when dpcalc's value
//!   prints as an integer ([`Num::raw`] all digits) equal to it; a `float` only when dpcalc's value
//!   prints as a float (with a `.`, or `inf`/`NaN`) equal to it as a double. `3.0` never matches
//!   `int:3` and `3` never matches `float:3.0`. A `NAME` starting with `~` is recorded but is not a
//!   dpcalc output, and is not compared.
//! - `OUTCOME`: `ok` (the framework ran; dpcalc shows no error), `error` (dpcalc shows an error),
//!   `error@FIELD` (an error at that input), `error: TEXT` (one of dpcalc's errors contains the
//!   text the framework raised), `hint: TEXT` (one of dpcalc's hints contains it), `unchecked`
//!   (that run did not compare dpcalc's errors, only its values).

pub mod files;
pub mod report;
pub mod roundtrip;

use dpcalc::calc::import::{self, Imported};
use dpcalc::calc::{Level, Num, Output};
use dpcalc::query;
use dpcalc::state::{Action, State};
use report::errors;

/// Every framework's fixture, as `(framework id, text)`.
pub const FIXTURES: &[(&str, &str)] = &[
    ("axolotl", include_str!("../fixtures/axolotl.txt")),
    ("hf", include_str!("../fixtures/hf.txt")),
    ("deepspeed", include_str!("../fixtures/deepspeed.txt")),
    ("megatron", include_str!("../fixtures/megatron.txt")),
    ("torchtitan", include_str!("../fixtures/torchtitan.txt")),
    ("nanotron", include_str!("../fixtures/nanotron.txt")),
];

/// A value as the framework's Python printed it.
#[derive(Clone, Debug, PartialEq)]
pub enum Want {
    None,
    Int(String),
    Float(String),
}

impl std::fmt::Display for Want {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Want::None => f.write_str("none"),
            Want::Int(s) => write!(f, "int:{s}"),
            Want::Float(s) => write!(f, "float:{s}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Ok,
    Unchecked,
    Error,
    ErrorAt(String),
    ErrorText(String),
    HintText(String),
}

/// One record of a fixture.
#[derive(Clone, Debug)]
pub struct Record {
    /// 1-based line in the fixture file.
    pub line: usize,
    pub framework: String,
    pub release: String,
    pub command: String,
    pub case: String,
    pub link: String,
    /// `(name, value, compared)`; `compared` is false for `~name`.
    pub outputs: Vec<(String, Want, bool)>,
    pub outcomes: Vec<Outcome>,
}

fn parse_want(text: &str) -> Want {
    if text == "none" {
        return Want::None;
    }
    match text.split_once(':') {
        Some(("int", v)) => {
            assert!(v.parse::<i128>().is_ok(), "not an int repr: {text}");
            Want::Int(v.to_string())
        }
        Some(("float", v)) => {
            assert!(parse_float(v).is_some(), "not a float repr: {text}");
            Want::Float(v.to_string())
        }
        _ => panic!("a value must be none, int:REPR or float:REPR, not {text}"),
    }
}

/// A float as Python (`1e-05`, `inf`, `nan`) or dpcalc (`0.00001`, `inf`, `NaN`) prints it.
fn parse_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok()
}

fn parse_outcome(text: &str) -> Outcome {
    match text {
        "ok" => Outcome::Ok,
        "unchecked" => Outcome::Unchecked,
        "error" => Outcome::Error,
        _ => {
            if let Some(t) = text.strip_prefix("error: ") {
                Outcome::ErrorText(t.to_string())
            } else if let Some(t) = text.strip_prefix("hint: ") {
                Outcome::HintText(t.to_string())
            } else if let Some(f) = text.strip_prefix("error@") {
                Outcome::ErrorAt(f.to_string())
            } else {
                panic!("unknown outcome {text:?}")
            }
        }
    }
}

/// The commands a fixture declares and its records.
pub fn parse(text: &str) -> (Vec<String>, Vec<Record>) {
    let mut commands = Vec::new();
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("# command ") {
            let (id, _) = rest.split_once(':').expect("# command ID: ...");
            commands.push(id.to_string());
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let at = i + 1;
        let cols: Vec<&str> = line.split(" | ").collect();
        assert!(
            cols.len() >= 4,
            "line {at}: needs at least 4 columns: {line}"
        );
        let head: Vec<&str> = cols[0].split(' ').collect();
        let [framework, release, command, case] = head[..] else {
            panic!("line {at}: FRAMEWORK RELEASE COMMAND CASE, not {}", cols[0]);
        };
        assert!(
            commands.iter().any(|c| c == command),
            "line {at}: command {command} is not declared above"
        );
        let outputs = if cols[2] == "-" {
            Vec::new()
        } else {
            cols[2]
                .split(' ')
                .map(|item| {
                    let (k, v) = item
                        .split_once('=')
                        .unwrap_or_else(|| panic!("line {at}: {item}"));
                    match k.strip_prefix('~') {
                        Some(k) => (k.to_string(), parse_want(v), false),
                        None => (k.to_string(), parse_want(v), true),
                    }
                })
                .collect()
        };
        records.push(Record {
            line: at,
            framework: framework.to_string(),
            release: release.to_string(),
            command: command.to_string(),
            case: case.to_string(),
            link: cols[1].to_string(),
            outputs,
            outcomes: cols[3..].iter().map(|t| parse_outcome(t)).collect(),
        });
    }
    (commands, records)
}

/// Whether dpcalc's value matches what Python printed, type included. Only [`Num::raw`] is
/// looked at: an int prints as digits, a float always with a `.` (or as `inf`/`NaN`).
pub fn matches(want: &Want, got: Option<Num>) -> bool {
    let got = got.map(Num::raw);
    match (want, got.as_deref()) {
        (Want::None, None) => true,
        (Want::Int(w), Some(g)) => is_int_repr(g) && g.parse::<i128>().ok() == w.parse().ok(),
        (Want::Float(w), Some(g)) => {
            !is_int_repr(g)
                && match (parse_float(g), parse_float(w)) {
                    (Some(g), Some(w)) => g == w || (g.is_nan() && w.is_nan()),
                    _ => false,
                }
        }
        _ => false,
    }
}

fn is_int_repr(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `want` and `got` are the same number and differ only as int against float.
fn same_number(want: &Want, got: Option<Num>) -> bool {
    let (Some(g), Want::Int(w) | Want::Float(w)) = (got, want) else {
        return false;
    };
    parse_float(w) == Some(g.to_f64())
}

/// The runner tells Python's `3` from `3.0`, whatever the number.
#[test]
fn the_runner_compares_ints_as_ints_and_floats_as_floats() {
    let int = |s: &str| Want::Int(s.into());
    let float = |s: &str| Want::Float(s.into());
    assert!(matches(&int("3"), Some(Num::Int(3))));
    assert!(!matches(&int("3"), Some(Num::Float(3.0))));
    assert!(matches(&float("3.0"), Some(Num::Float(3.0))));
    assert!(!matches(&float("3.0"), Some(Num::Int(3))));
    assert!(matches(&float("1e-05"), Some(Num::Float(1e-5))));
    assert!(matches(&float("-2.0"), Some(Num::Float(-2.0))));
    assert!(matches(&float("inf"), Some(Num::Float(f64::INFINITY))));
    assert!(matches(&float("nan"), Some(Num::Float(f64::NAN))));
    assert!(matches(
        &float("466.79999999999995"),
        Some(Num::Float(466.79999999999995))
    ));
    assert!(!matches(
        &float("466.8"),
        Some(Num::Float(466.79999999999995))
    ));
    assert!(matches(&int("-1"), Some(Num::Int(-1))));
    assert!(!matches(&int("4"), Some(Num::Int(3))));
    assert!(!matches(&int("3"), None));
    assert!(matches(&Want::None, None));
    assert!(!matches(&Want::None, Some(Num::Int(0))));
}

/// What one framework's oracle test checks.
pub struct Oracle<'a> {
    /// The fixture's name, for messages (`hf.txt`).
    pub file: &'static str,
    /// Its text (`include_str!("fixtures/hf.txt")`).
    pub text: &'static str,
    /// dpcalc's framework id every record must have.
    pub framework: &'static str,
    /// `(selector, records, compared values)`: the fewest records and compared values among the
    /// records a selector picks, so that a truncated fixture fails. A selector is
    /// whitespace-separated words, each a command id or a release; empty picks every record.
    pub minimums: &'static [(&'static str, usize, usize)],
    /// When not empty, only dpcalc's messages containing one of these texts say that the
    /// framework stops where the oracle ran it (dpcalc also refuses inputs the oracle's code never
    /// reached, such as DeepSpeed's Ulysses groups or nanotron's dataloader). `ok` then means no
    /// error or hint with one of them, and `error: TEXT`/`hint: TEXT` must be one of them. When
    /// empty, every error counts.
    pub stop_marks: &'static [&'static str],
    /// Failures known today, exactly as the runner words them (`FILE:LINE NAME: ...`); they are
    /// printed, and the test fails unless the failures are exactly these.
    pub known: &'a [&'a str],
}

fn selected(selector: &str, r: &Record) -> bool {
    selector
        .split_whitespace()
        .all(|w| w == r.command || w == r.release)
}

/// Checks one record against dpcalc; returns the failures as `(key, detail)`.
pub fn check(file: &str, r: &Record, stop_marks: &[&str]) -> Vec<(String, String)> {
    let mut fails = Vec::new();
    let at = format!("{file}:{}", r.line);
    let link = query::decode(&r.link);
    assert_eq!(link.framework.id(), r.framework, "{at}: framework");
    assert!(link.notices.is_empty(), "{at}: {:?}", link.notices);
    assert_eq!(link.release().id, r.release, "{at}: release");
    let report = link.report();
    for (name, want, compared) in &r.outputs {
        if !compared {
            continue;
        }
        let output =
            Output::from_name(name).unwrap_or_else(|| panic!("{at}: unknown output {name}"));
        let got = report.value(output);
        if !matches(want, got) {
            let got = got.map_or("none".to_string(), Num::raw);
            let kind = if same_number(want, report.value(output)) {
                "int/float"
            } else {
                "value"
            };
            fails.push((
                format!("{at} {name}: {kind}: Python {want}, dpcalc {got}"),
                format!("case {}  {}", r.case, r.link),
            ));
        }
    }
    let errs = errors(&report);
    // dpcalc's errors and hints, only those with a stop mark when there are marks (see
    // `Oracle::stop_marks`)
    let quoting: Vec<(Level, &str)> = report
        .diags
        .iter()
        .filter(|d| matches!(d.level, Level::Error | Level::Hint))
        .filter(|d| stop_marks.is_empty() || stop_marks.iter().any(|m| d.message.contains(m)))
        .map(|d| (d.level, d.message.as_str()))
        .collect();
    // the messages that say the framework stops: every error, or with marks also a marked hint
    let stops = quoting
        .iter()
        .filter(|(l, _)| *l == Level::Error || !stop_marks.is_empty())
        .count();
    let has =
        |level: Level, text: &str| quoting.iter().any(|(l, m)| *l == level && m.contains(text));
    for outcome in &r.outcomes {
        let failed = match outcome {
            Outcome::Unchecked => None,
            Outcome::Ok => {
                (stops > 0).then(|| "the framework runs, dpcalc says it stops".to_string())
            }
            Outcome::Error => (!report.has_errors())
                .then(|| "the framework refuses, dpcalc shows no error".to_string()),
            Outcome::ErrorAt(field) => (!report
                .diags
                .iter()
                .any(|d| d.level == Level::Error && d.field.key() == field))
            .then(|| format!("no error at {field}")),
            Outcome::ErrorText(text) => (!has(Level::Error, text))
                .then(|| format!("the framework raised \u{201c}{text}\u{201d}")),
            Outcome::HintText(text) => {
                (!has(Level::Hint, text)).then(|| format!("no hint with \u{201c}{text}\u{201d}"))
            }
        };
        if let Some(what) = failed {
            fails.push((
                format!("{at}: {what}"),
                format!("case {}; dpcalc errors {errs:?}  {}", r.case, r.link),
            ));
        }
    }
    fails
}

/// Runs every record of a fixture; panics on any failure not in `known`, on a known failure that
/// no longer happens, and when a minimum is not met.
pub fn run(oracle: &Oracle) {
    let (commands, records) = parse(oracle.text);
    assert!(!commands.is_empty(), "{}: no # command line", oracle.file);
    let mut fails = Vec::new();
    for r in &records {
        assert_eq!(r.framework, oracle.framework, "{}:{}", oracle.file, r.line);
        fails.extend(check(oracle.file, r, oracle.stop_marks));
    }
    for (selector, min_records, min_values) in oracle.minimums {
        let picked: Vec<&Record> = records.iter().filter(|r| selected(selector, r)).collect();
        let values: usize = picked
            .iter()
            .map(|r| r.outputs.iter().filter(|o| o.2).count())
            .sum();
        assert!(
            picked.len() >= *min_records && values >= *min_values,
            "{} [{selector}]: {} records, {values} values; at least {min_records} and {min_values} expected",
            oracle.file,
            picked.len()
        );
    }
    let known: Vec<&str> = oracle.known.to_vec();
    if !known.is_empty() {
        eprintln!("{}: {} known failures:", oracle.file, known.len());
        for k in &known {
            eprintln!("  {k}");
        }
    }
    let new: Vec<String> = fails
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, d)| format!("{k}\n    {d}"))
        .collect();
    let gone: Vec<&&str> = known
        .iter()
        .filter(|k| !fails.iter().any(|(f, _)| f == *k))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "{}: {} new failures:\n{}\nknown failures that no longer happen (remove them): {gone:#?}",
        oracle.file,
        new.len(),
        new.join("\n")
    );
}

/// What the page's Import button does with a pasted `text` on `state` (components/config.rs):
/// the import, and the page after it (unchanged when nothing is applicable).
pub fn paste(state: State, text: &str) -> (State, Imported) {
    let mut got = import::read(state.link.framework, None, text);
    got.settle(&state.link.inputs);
    if !got.applicable() {
        return (state, got);
    }
    let inputs = got.merged_into(&state.link.inputs);
    let next = state
        .reduce(Action::Import(got.framework, got.release, inputs))
        .unwrap_or(state);
    (next, got)
}
