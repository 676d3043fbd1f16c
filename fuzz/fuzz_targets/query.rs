//! Any bytes as a query string: decoding, computing every output, re-encoding and the snippets
//! must never panic, take under 100 ms, and the canonical link must mean the same thing
//! (`checks::query`).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod checks;

fuzz_target!(|data: &[u8]| checks::query(data));
