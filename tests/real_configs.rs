//! Real configs, pasted as they are: each file of `tests/fixtures/configs/real/` (copied from
//! the frameworks' own repositories, see its README) goes through the page's Import on a fresh
//! page, and what the page then shows is checked against the hand-checked `NAME.expect` beside
//! it.

use crate::common;

use std::path::{Path, PathBuf};

use dpcalc::calc::import;
use dpcalc::calc::{Field, Level, Output};
use dpcalc::state::{Action, State};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/configs/real");

/// Every config file under `real/`, with its `.expect`.
fn files() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(REAL).expect("the real configs") {
        let dir = dir.expect("an entry").path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).expect("a framework's folder") {
            let f = f.expect("an entry").path();
            if f.extension().is_some_and(|e| e == "expect") {
                continue;
            }
            let mut expect = f.clone().into_os_string();
            expect.push(".expect");
            out.push((f, PathBuf::from(expect)));
        }
    }
    out.sort();
    out
}

fn field(state: &State, key: &str) -> Field {
    state
        .link
        .framework
        .field(key)
        .unwrap_or_else(|| panic!("{key} is not a field of {}", state.link.framework.id()))
}

fn check(file: &Path, expect: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("the config");
    let (mut state, mut got) = common::paste(State::from_query(""), &text);
    let mut fails = Vec::new();
    let mut fail = |line: &str, why: String| fails.push(format!("`{line}`: {why}"));
    let mut lines = 0;
    for line in expect.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        lines += 1;
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let report = &state.report;
        match word {
            "framework" => {
                if state.link.framework.id() != rest {
                    fail(
                        line,
                        format!("the page shows {}", state.link.framework.id()),
                    );
                }
            }
            "version" => {
                if state.link.release().id != rest {
                    fail(line, format!("the page shows {}", state.link.release().id));
                }
            }
            "input" => {
                let (k, v) = rest.split_once('=').expect("input KEY=VALUE");
                let have = state.link.inputs.get(field(&state, k));
                if have != v {
                    fail(line, format!("the field holds {have:?}"));
                }
            }
            "warning" => {
                if !got.warnings.iter().any(|w| w.contains(rest)) {
                    fail(line, format!("the warnings are {:?}", got.warnings));
                }
            }
            "import-error" => {
                if !got.errors.iter().any(|e| e.contains(rest)) {
                    fail(line, format!("the import's errors are {:?}", got.errors));
                }
            }
            "applied" => {
                if got.applicable().to_string() != rest {
                    fail(line, format!("applied: {}", got.applicable()));
                }
            }
            "paste" => {
                let text = std::fs::read_to_string(Path::new(REAL).join(rest))
                    .unwrap_or_else(|_| panic!("{}: no {rest}", file.display()));
                (state, got) = common::paste(state, &text);
            }
            "then" => {
                let (k, v) = rest.split_once('=').expect("then KEY=VALUE");
                let f = field(&state, k);
                state = state.reduce(Action::Set(f, v.to_string())).unwrap_or(state);
            }
            "no-errors" => {
                let errors: Vec<&str> = report
                    .diags
                    .iter()
                    .filter(|d| d.level == Level::Error)
                    .map(|d| d.message.as_str())
                    .collect();
                if !errors.is_empty() {
                    fail(line, format!("errors: {errors:?}"));
                }
            }
            "error" => {
                let (key, text) = rest.split_once(' ').unwrap_or((rest, ""));
                let found = report.diags.iter().any(|d| {
                    d.level == Level::Error
                        && (key.is_empty() || d.field.key() == key)
                        && d.message.contains(text)
                });
                if !found {
                    fail(line, format!("the errors are {:?}", report.diags));
                }
            }
            name => {
                let output = Output::from_name(name)
                    .unwrap_or_else(|| panic!("{}: {name} is no output", file.display()));
                let have = report.value(output).map(|v| v.raw());
                if have.as_deref() != Some(rest) {
                    fail(line, format!("the page shows {have:?}"));
                }
            }
        }
    }
    assert!(lines >= 3, "{}: too few checks", file.display());
    fails
}

#[test]
fn every_real_config_computes_what_its_framework_would() {
    let files = files();
    assert!(files.len() >= 11, "{files:?}");
    let mut fails = Vec::new();
    let mut formats = std::collections::BTreeSet::new();
    for (file, expect) in &files {
        let expect = std::fs::read_to_string(expect)
            .unwrap_or_else(|_| panic!("{} has no .expect beside it", file.display()));
        let text = std::fs::read_to_string(file).expect("the config");
        formats.insert(format!("{:?}", import::detect_format(&text)));
        for f in check(file, &expect) {
            fails.push(format!("{}: {f}", file.display()));
        }
    }
    // every kind of text Import reads is among them
    for kind in [
        "Config(Axolotl)",
        "Config(Hf)",
        "Config(DeepSpeed)",
        "Config(Torchtitan)",
        "Config(Nanotron)",
        "Config(Megatron)",
        "Cluster",
    ] {
        assert!(formats.contains(kind), "no real {kind}: {formats:?}");
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
