//! Any text as a bash launch script (Megatron-LM's examples: variables, arrays, `${1:-d}`,
//! `$((…))`, `if`), read by the bash reader (`calc::import::shell`) and then by the import of the
//! framework the first byte picks, as the page's Import reads a pasted script. Checked on every
//! input:
//! - reading it and computing the page it leads to take under 100 ms (`checks::in_time`);
//! - the reader stays within its bounds: at most `MAX_WORDS` words, each at most `MAX_LEN`
//!   bytes, or it says the script grew too large;
//! - the import is settled against the page's cluster first (`Imported::settle`, as the page
//!   does; the first byte's last bit starts from a page with a cluster): a script's default of an
//!   unset variable gives way, with a note;
//! - no import message or note holds a control character, the page holds no markup from the text;
//! - the round trip of what was applied (`tests/common/roundtrip.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod checks;

// what the checks learn once (the pages' vocabulary, the fresh pages) is learned before the
// first input, so libFuzzer's `-timeout` never counts it
fuzz_target!(init: checks::warm(), |data: &[u8]| checks::shell(data));
