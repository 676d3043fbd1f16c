//! The native tests, as one test binary: each file of `tests/` is a module of it (`tests/card.rs`
//! is `card`, its tests `card::...`), compiled and linked once, its tests run in parallel with all
//! the others. Run one file's tests with `cargo test --test suite card::`. The helpers they share
//! are in `tests/common/`. The browser tests (`tests/web.rs`, `tests/web_layout.rs`) are test
//! binaries of their own, for wasm32 (`Cargo.toml`).
#![cfg(not(target_arch = "wasm32"))]

mod common;

mod architecture;
mod axolotl;
mod calibration;
mod card;
mod cli;
mod compare;
mod deepspeed;
mod edges;
mod edges_every_framework;
mod estimate;
mod explorer_memory;
mod export;
mod first;
mod fit;
mod fits_measured;
mod fixes;
mod fuzz;
mod guide;
mod hf;
mod hostile_sizes;
mod import;
mod layout;
mod links;
mod lora;
mod markup;
mod measured_memory;
mod measured_memory_sources;
mod measured_throughput;
mod megatron;
mod megatron_memory_keys;
mod megatron_mla;
mod mesh;
mod model;
mod nanotron;
mod node_shape;
mod pipeline_split;
mod planner;
mod profiler_trace;
mod properties;
mod readme;
mod real_configs;
mod real_configs_megatron;
mod registry;
mod reserved_memory;
mod roundtrip;
mod scaling;
mod schedule;
mod stages;
mod step_time;
mod torchtitan;
mod training_log;
mod usable_memory;

/// Every file of `tests/` runs: it is a module of this suite, or a test target of its own in
/// `Cargo.toml` (the browser tests). With `autotests = false` Cargo no longer finds test files by
/// itself, so a file added to `tests/` and named nowhere would never be compiled.
#[test]
fn every_test_file_is_a_module_of_the_suite_or_a_test_target() {
    let suite = common::files::read("tests/suite.rs");
    let modules: Vec<&str> = suite
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let cargo = common::files::read("Cargo.toml");
    let mut files: Vec<String> = std::fs::read_dir(common::files::path("tests"))
        .expect("tests/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".rs"))
        .collect();
    files.sort();
    let orphans: Vec<&String> = files
        .iter()
        .filter(|name| {
            let module = name.trim_end_matches(".rs");
            let target = format!("path = \"tests/{name}\"");
            !modules.contains(&module) && !cargo.contains(&target)
        })
        .collect();
    assert!(
        orphans.is_empty(),
        "not a module of tests/suite.rs (add `mod NAME;` there) nor a [[test]] of Cargo.toml: \
         {orphans:?}"
    );
    assert!(modules.len() >= 30, "{modules:?}");
}
