//! Any bytes as a query string: decoding, computing every output, re-encoding and the snippets
//! must never panic, and the canonical link must mean the same thing.
#![no_main]

use dpcalc::{calc::axolotl, embed, query};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let link = query::decode(&text);
    let report = axolotl::compute(&link.inputs);
    let again = query::decode(&query::encode(&link));
    assert_eq!(axolotl::compute(&again.inputs), report);
    let _ = embed::snippets("u", "v", &link.inputs, &report);
});
