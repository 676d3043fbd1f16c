//! dpcalc against axolotl's own code: `tests/oracle.txt` records what axolotl 0.19.0 and 0.14.0
//! computed when run (see `scripts/oracle_to_fixture.py`); every value must match exactly, for the
//! default link (0.19.0 main, 0.14.0 as `legacy_*`), for `version=0.14.0` (0.14.0 main, 0.19.0
//! as `legacy_*`) and for `version=0.18.0` (0.18.0 main, 0.14.0 as `legacy_*`).
#![cfg(not(target_arch = "wasm32"))]

use dpcalc::calc::{Framework, Num, Output};
use dpcalc::query;

#[test]
fn matches_axolotl_when_run() {
    let mut checked = 0;
    let mut per_release = [0; 2];
    let mut failures = Vec::new();
    // oracle.txt: the first oracle run; axolotl_oracle_boundaries.txt: cases added near the
    // boundaries between the releases (world_size 1 with tp/cp, non-divisible world sizes,
    // packed × cp × tp, max_steps caps, warmup and save/eval from 0.14.0's step counts).
    for line in include_str!("oracle.txt")
        .lines()
        .chain(include_str!("axolotl_oracle_boundaries.txt").lines())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (q, rest) = line.split_once(" => ").expect("=>");
        let (want, name) = rest.split_once("  # ").unwrap_or((rest, "?"));
        let link = query::decode(q);
        assert_eq!(link.framework, Framework::Axolotl, "{q}");
        assert!(link.notices.is_empty(), "{q}: {:?}", link.notices);
        for (i, id) in ["0.14.0", "0.18.0"].iter().enumerate() {
            if q.starts_with(&format!("version={id}&")) {
                assert_eq!(link.release().id, *id, "{q}");
                per_release[i] += 1;
            }
        }
        let report = link.report();
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
    assert!(checked > 2000, "only {checked} values checked");
    assert!(
        per_release.iter().all(|&n| n > 120),
        "version=0.14.0 / 0.18.0 lines: {per_release:?}"
    );
}
