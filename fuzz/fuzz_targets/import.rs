//! Any text pasted into the page's Import box, as the page reads it: `calc::import::read` with
//! the current framework and "Read as" picked by the first byte (every format: YAML, JSON, TOML,
//! command lines and bash scripts, TrainingArguments, launcher lines, accelerate configs, a
//! model's config.json, training logs, a profiler trace's Chrome-trace JSON). Checked on every input:
//! - the import and the page it leads to compute within 100 ms (`checks::in_time`);
//! - no message, listed key or note holds a control character (`checks::one_line`);
//! - the page after the import holds no markup from the text (`checks::no_markup`);
//! - a config's every key (JSON, YAML, TOML, accelerate's YAML) is applied, listed as not read,
//!   or named in an error or warning (never dropped silently), after the import is settled
//!   against the page's cluster (`Imported::settle`, as the page does);
//! - what the import applied, exported in the framework's format and imported again, gives the
//!   same values (`tests/common/roundtrip.rs`, the check the test suite runs on its fixtures).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod checks;

// what the checks learn once (the pages' vocabulary, the fresh pages) is learned before the
// first input, so libFuzzer's `-timeout` never counts it
fuzz_target!(init: checks::warm(), |data: &[u8]| checks::import(data));
