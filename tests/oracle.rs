//! dpcalc against axolotl's own code: `tests/oracle.txt` records what axolotl 0.19.0 and 0.14.0
//! computed when run (see `scripts/oracle_to_fixture.py`); every value must match exactly.
#![cfg(not(target_arch = "wasm32"))]

use dpcalc::calc::{axolotl, Num, Output};
use dpcalc::query;

#[test]
fn matches_axolotl_when_run() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in include_str!("oracle.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (q, rest) = line.split_once(" => ").expect("=>");
        let (want, name) = rest.split_once("  # ").unwrap_or((rest, "?"));
        let report = axolotl::compute(&query::decode(q).inputs);
        for item in want.split_whitespace() {
            if item == "error" {
                if !report.has_errors() {
                    failures.push(format!("{name}: axolotl fails here, dpcalc shows no error"));
                }
                continue;
            }
            let (key, value) = item.split_once('=').expect("key=value");
            let output = Output::from_name(key).unwrap_or_else(|| panic!("unknown output {key}"));
            let got = report.value(output).map(Num::raw);
            let want = (value != "none").then(|| value.to_string());
            if got != want {
                failures.push(format!(
                    "{name}: {key} got {got:?}, axolotl {want:?}  ({q})"
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 500, "only {checked} values checked");
}
