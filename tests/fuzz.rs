//! Every input a fuzzer found that crashed, took over 100 ms or broke a property, kept in
//! `tests/fixtures/fuzz/<target>/` and run through the same checks the fuzz target runs
//! (`fuzz/fuzz_targets/checks.rs`: the time limit, messages without control characters, no
//! markup from the input, every key of a JSON, YAML or TOML config applied or named, the round
//! trip). The dictionaries
//! the fuzzers splice in (`fuzz/dict/`) hold every config key.

#[path = "../fuzz/fuzz_targets/checks.rs"]
mod checks;

use crate::common::files;
use dpcalc::calc::Field;

/// The inputs kept for `target`, by file name.
fn found(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = files::path(&format!("tests/fixtures/fuzz/{target}"));
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|d| {
            d.map(|e| {
                let e = e.expect("an entry");
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).expect("a kept input"))
            })
            .filter(|(name, _)| name != "README.md")
            .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn every_input_the_import_fuzzer_found_passes_its_checks() {
    let inputs = found("import");
    assert!(!inputs.is_empty());
    for (name, data) in inputs {
        eprintln!("import: {name}");
        checks::import(&data);
    }
}

#[test]
fn every_input_the_shell_fuzzer_found_passes_its_checks() {
    for (name, data) in found("shell") {
        eprintln!("shell: {name}");
        checks::shell(&data);
    }
}

#[test]
fn every_input_the_query_fuzzer_found_passes_its_checks() {
    // `framework=deepspeed&gpus_per_node=8`: the canonical link leaves the default cluster out,
    // and DeepSpeed's first-visit hint became a refusal when it was given
    checks::query(b"framework=deepspeed&gpus_per_node=8");
    checks::query(b"framework=deepspeed&nodes=1");
    for (name, data) in found("query") {
        eprintln!("query: {name}");
        checks::query(&data);
    }
}

#[test]
fn every_input_the_cli_fuzzer_found_passes_its_checks() {
    for (name, data) in found("cli") {
        eprintln!("cli: {name}");
        checks::cli(&data);
    }
}

/// The configs of `tests/fixtures/configs/` (the import fuzzer's seeds) pass the import's checks,
/// the round trip among them, read as the page detects them and forced as each framework; and
/// each is read by the command line.
#[test]
fn every_config_fixture_passes_the_import_checks_and_round_trips() {
    let mut files = Vec::new();
    let mut dirs = vec![files::path("tests/fixtures/configs")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(dir).expect("the configs") {
            let p = e.expect("an entry").path();
            let name = p.to_string_lossy().into_owned();
            if p.is_dir() {
                dirs.push(p);
            } else if !name.ends_with(".md") && !name.ends_with(".expect") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 20, "{files:?}");
    for p in files {
        let text = std::fs::read(&p).expect("a config");
        // detected (the page's current framework: each), then forced as each framework
        for pick in (0u8..6).chain((0u8..6).map(|i| 8 | i << 4)) {
            let mut data = vec![pick];
            data.extend(&text);
            checks::import(&data);
        }
        let mut data = vec![0x08];
        data.extend(&text);
        checks::cli(&data);
    }
}

#[test]
fn the_fuzz_dictionaries_hold_every_config_key() {
    let dict = files::read("fuzz/dict/import.dict");
    for f in Field::ALL {
        assert!(
            dict.contains(&format!("\"{}\"", f.key())),
            "{} is not in fuzz/dict/import.dict (regenerate it as its header says)",
            f.key()
        );
    }
}
