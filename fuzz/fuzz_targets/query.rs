//! Any bytes as a query string: decoding, computing every output, re-encoding and the snippets
//! must never panic, take under 100 ms (`checks::in_time`), and the canonical link must mean the
//! same thing.
#![no_main]

use dpcalc::{embed, query};
use libfuzzer_sys::fuzz_target;

mod checks;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (link, report) = checks::in_time("the link", || {
        let link = query::decode(&text);
        let report = link.report();
        (link, report)
    });
    let again = query::decode(&query::encode(&link));
    assert_eq!(again.framework, link.framework);
    assert_eq!(again.report(), report);
    let _ = embed::snippets(link.framework, "u", "v", &link.inputs, &report);
});
