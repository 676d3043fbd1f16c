//! dpcalc against axolotl's own code: `tests/fixtures/axolotl.txt` records what axolotl 0.19.0,
//! 0.18.0 and 0.14.0 computed when run (see its `# command` lines and `scripts/oracle_to_fixture.py`);
//! every value must match exactly, type included, for the default link (0.19.0 main, 0.14.0 as
//! `legacy_*`), for `version=0.14.0` (0.14.0 main, 0.19.0 as `legacy_*`) and for `version=0.18.0`
//! (0.18.0 main, 0.14.0 as `legacy_*`). The format and the runner: `tests/common/mod.rs`.

use crate::common;

#[test]
fn matches_axolotl_when_run() {
    // axolotl-1: the first oracle run; axolotl-boundaries: cases added near the boundaries
    // between the releases (world_size 1 with tp/cp, non-divisible world sizes, packed × cp × tp,
    // max_steps caps, warmup and save/eval from 0.14.0's step counts); axolotl-0.21 / axolotl-0.20 /
    // axolotl-0.14: the runs of 0.21.0, 0.20.0 and 0.14.0 for the new releases (context
    // parallelism's attention rule, expert parallelism, the dp axes, DeepSpeed with CP, and
    // 0.14.0's max_steps cap).
    common::run(&common::Oracle {
        file: "axolotl.txt",
        text: include_str!("fixtures/axolotl.txt"),
        framework: "axolotl",
        minimums: &[
            ("", 554, 4233),
            ("axolotl-1", 345, 2832),
            ("axolotl-boundaries", 60, 481),
            ("axolotl-0.21", 99, 610),
            ("axolotl-0.20", 45, 275),
            ("axolotl-0.14", 5, 35),
            ("0.21.0", 99, 610),
            ("0.20.0", 45, 275),
            ("0.19.0", 135, 1120),
            ("0.18.0", 135, 1086),
            ("0.14.0", 140, 1142),
        ],
        stop_marks: &[],
        known: &[],
    });
}

/// The runner tells Python's `3` from `3.0`, whatever the number.
#[test]
fn the_runner_compares_ints_as_ints_and_floats_as_floats() {
    use common::{matches, Want};
    use dpcalc::calc::Num;
    let int = |s: &str| Want::Int(s.into());
    let float = |s: &str| Want::Float(s.into());
    assert!(matches(&int("3"), Some(Num::Int(3))));
    assert!(!matches(&int("3"), Some(Num::Float(3.0))));
    assert!(matches(&float("3.0"), Some(Num::Float(3.0))));
    assert!(!matches(&float("3.0"), Some(Num::Int(3))));
    assert!(matches(&float("1e-05"), Some(Num::Float(1e-5))));
    assert!(matches(&float("-2.0"), Some(Num::Float(-2.0))));
    assert!(matches(&float("inf"), Some(Num::Float(f64::INFINITY))));
    assert!(matches(&float("nan"), Some(Num::Float(f64::NAN))));
    assert!(matches(
        &float("466.79999999999995"),
        Some(Num::Float(466.79999999999995))
    ));
    assert!(!matches(
        &float("466.8"),
        Some(Num::Float(466.79999999999995))
    ));
    assert!(matches(&int("-1"), Some(Num::Int(-1))));
    assert!(!matches(&int("4"), Some(Num::Int(3))));
    assert!(!matches(&int("3"), None));
    assert!(matches(&Want::None, None));
    assert!(!matches(&Want::None, Some(Num::Int(0))));
}
