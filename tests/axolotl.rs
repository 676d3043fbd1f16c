//! dpcalc against axolotl's own code: `tests/fixtures/axolotl.txt` records what axolotl 0.14.0,
//! 0.18.0, 0.19.0, 0.20.0 and 0.21.0 computed when run (see its `# command` lines and
//! `scripts/oracle_to_fixture.py`); every value must match exactly, type included, for the link
//! without a release (0.19.0 main, 0.14.0 as `legacy_*`), for `version=0.14.0` (0.14.0 main, 0.19.0
//! as `legacy_*`), for `version=0.18.0` (0.18.0 main, 0.14.0 as `legacy_*`) and for
//! `version=0.20.0` and `version=0.21.0`. The format and the runner: `tests/common/mod.rs`.
//!
//! Then axolotl 0.19.0 and 0.14.0 against axolotl's own test vectors (PR #3462's
//! `tests/test_tensor_parallel_batch_size.py`, PR #3444's
//! `tests/test_context_parallel_batch_size.py`), against what its released code
//! (`normalize_config`, `calculate_total_num_steps`, the batch-field validators) computed when run
//! on the same inputs, and against boundaries of every rounding rule.

use crate::common;
use crate::common::report::{errors_at, messages_at, raw};
use dpcalc::calc::{axolotl, Field, Level, Output, RawInputs, Report};

fn run(pairs: &[(&str, &str)]) -> Report {
    let raw = RawInputs::from_pairs(
        pairs
            .iter()
            .map(|&(k, v)| (Field::from_key(k).expect(k), v)),
    );
    axolotl::compute(&raw)
}

fn v(r: &Report, o: Output) -> String {
    raw(r, o).unwrap_or_else(|| panic!("{} has no value; diags: {:#?}", o.name(), r.diags))
}

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

// ---- the seed tables: PR #3462 (tp) and PR #3444 (cp) -----------------------------------------

#[test]
fn seed_table_tensor_parallel() {
    for (ws, tp, batch, legacy) in [(4, 1, 32, 32), (4, 2, 16, 32), (4, 4, 8, 32), (2, 2, 8, 16)] {
        let r = run(&[
            ("world_size", &ws.to_string()),
            ("tensor_parallel_size", &tp.to_string()),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
            ("sequence_len", "2048"),
        ]);
        assert_eq!(
            v(&r, Output::GlobalBatchSize),
            batch.to_string(),
            "ws {ws} tp {tp}"
        );
        assert_eq!(
            v(&r, Output::LegacyGlobalBatchSize),
            legacy.to_string(),
            "ws {ws} tp {tp}"
        );
        assert_eq!(v(&r, Output::GradientAccumulationSteps), "4");
        assert_eq!(v(&r, Output::DpWorldSize), (ws / tp).to_string());
        assert!(!r.has_errors(), "{:#?}", r.diags);
    }
}

#[test]
fn seed_table_context_parallel() {
    for (ws, cp, batch, legacy) in [(4, 1, 32, 32), (4, 2, 16, 32), (4, 4, 8, 32), (2, 2, 8, 16)] {
        let r = run(&[
            ("world_size", &ws.to_string()),
            ("context_parallel_size", &cp.to_string()),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
        ]);
        assert_eq!(
            v(&r, Output::GlobalBatchSize),
            batch.to_string(),
            "ws {ws} cp {cp}"
        );
        assert_eq!(
            v(&r, Output::LegacyGlobalBatchSize),
            legacy.to_string(),
            "ws {ws} cp {cp}"
        );
        assert!(!r.has_errors(), "{:#?}", r.diags);
    }
}

// ---- non-packing: normalize_config and calculate_total_num_steps (run) -----------------------

#[test]
fn non_packing_table() {
    for (ws, tp, cp, batch, steps) in [
        (1, 1, 1, 8, 125),
        (4, 1, 1, 32, 32),
        (4, 2, 1, 16, 63),
        (8, 2, 2, 16, 63),
    ] {
        let r = run(&[
            ("world_size", &ws.to_string()),
            ("tensor_parallel_size", &tp.to_string()),
            ("context_parallel_size", &cp.to_string()),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
            ("num_samples", "1000"),
        ]);
        assert_eq!(v(&r, Output::GlobalBatchSize), batch.to_string());
        assert_eq!(v(&r, Output::TotalNumSteps), steps.to_string());
        assert_eq!(v(&r, Output::MaxSteps), steps.to_string());
        assert_eq!(v(&r, Output::StepsPerEpoch), steps.to_string());
        // Same step count before and after #3462 whenever ws is divisible by tp·cp.
        assert_eq!(v(&r, Output::LegacyTotalNumSteps), steps.to_string());
    }
}

#[test]
fn not_divisible_floors_and_is_an_error_with_accelerates_text() {
    let r = run(&[
        ("world_size", "6"),
        ("tensor_parallel_size", "4"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::DpWorldSize), "1");
    assert_eq!(v(&r, Output::GlobalBatchSize), "8");
    assert_eq!(v(&r, Output::TotalNumSteps), "125");
    let e = errors_at(&r, Field::WorldSize).join(" ");
    assert!(
        e.contains("ParallelismConfig total_size (4) does not match num_processes (6)"),
        "{e}"
    );
    assert!(e.contains("world_size 4 or 8"), "{e}");
    assert!(!errors_at(&r, Field::TensorParallelSize).is_empty());
}

#[test]
fn world_smaller_than_model_parallel_is_a_division_by_zero() {
    // run on 0.19.0: 1 < ws < tp·cp gives dp 0, batch 0, then calculate_total_num_steps' float
    // division by zero.
    let r = run(&[
        ("world_size", "2"),
        ("context_parallel_size", "4"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::DpWorldSize), "0");
    assert_eq!(v(&r, Output::GlobalBatchSize), "0");
    assert_eq!(raw(&r, Output::TotalNumSteps), None);
    assert!(errors_at(&r, Field::WorldSize)
        .join(" ")
        .contains("float division by zero"));
    // 0.14.0 computed it silently: batch 16, 250 steps.
    assert_eq!(v(&r, Output::LegacyGlobalBatchSize), "16");
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "250");
}

#[test]
fn world_size_one_ignores_tp_but_the_launch_fails() {
    let r = run(&[
        ("world_size", "1"),
        ("tensor_parallel_size", "2"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GlobalBatchSize), "8");
    assert_eq!(v(&r, Output::TotalNumSteps), "125");
    assert!(errors_at(&r, Field::WorldSize)
        .join(" ")
        .contains("total_size (2) does not match num_processes (1)"));
}

// ---- batch fields, 0.19.0 vs 0.14.0 (the validators and normalize_config, run) ----------------

#[test]
fn three_thousand_rows_batch_two() {
    // tests/test_calculate_total_num_steps.py: batch_size 2 (global) on one GPU → 1500.
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("gradient_accumulation_steps", "2"),
        ("num_samples", "3000"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "1500");
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("gradient_accumulation_steps", "2"),
        ("num_samples", "0"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "0");
    assert_eq!(v(&r, Output::MaxSteps), "-1");
}

#[test]
fn only_ga_is_accepted_by_019_refused_by_014() {
    let r = run(&[
        ("world_size", "4"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GlobalBatchSize), "16");
    assert_eq!(v(&r, Output::TotalNumSteps), "63");
    assert_eq!(raw(&r, Output::LegacyGlobalBatchSize), None);
    assert!(r
        .legacy_notes
        .iter()
        .any(|n| n.contains("At least two of micro_batch_size")));
    // neither: defaults 1 and 1
    let r = run(&[("world_size", "4"), ("num_samples", "1000")]);
    assert_eq!(v(&r, Output::GlobalBatchSize), "4");
    assert_eq!(v(&r, Output::TotalNumSteps), "250");
}

#[test]
fn refusals_quote_axolotl() {
    let r = run(&[("batch_size", "32")]);
    assert!(errors_at(&r, Field::BatchSize)[0].contains(
        "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set"
    ));
    assert_eq!(raw(&r, Output::GlobalBatchSize), None);
    assert_eq!(v(&r, Output::WorldSize), "8"); // the rest still computes
    let r = run(&[("gradient_accumulation_steps", "4"), ("batch_size", "32")]);
    assert!(errors_at(&r, Field::BatchSize)[0]
        .contains("please set only one of gradient_accumulation_steps or batch_size"));
}

#[test]
fn batch_size_with_micro_batch_size_keeps_ga_one() {
    // normalize_config, run on 0.19.0: world 4, mbs 2, batch_size 16 → GA 1, batch_size 64, 16
    // steps for 1000 rows.
    let r = run(&[
        ("world_size", "4"),
        ("micro_batch_size", "2"),
        ("batch_size", "16"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GradientAccumulationSteps), "1");
    assert_eq!(v(&r, Output::GlobalBatchSize), "64");
    assert_eq!(v(&r, Output::TotalNumSteps), "16");
    let w = messages_at(&r, Field::BatchSize, Level::Warning).join(" ");
    assert!(w.contains("gradient_accumulation_steps: 8"), "{w}");
    assert_eq!(v(&r, Output::LegacyGlobalBatchSize), "64");
}

#[test]
fn zero_batch_fields() {
    let r = run(&[
        ("micro_batch_size", "0"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert!(errors_at(&r, Field::MicroBatchSize)
        .join(" ")
        .contains("float division by zero"));
    assert_eq!(raw(&r, Output::TotalNumSteps), None);
    let r = run(&[
        ("gradient_accumulation_steps", "0"),
        ("num_samples", "1000"),
    ]);
    assert!(errors_at(&r, Field::GradientAccumulationSteps)[0].contains("'NoneType' and 'int'"));
    assert_eq!(raw(&r, Output::GlobalBatchSize), None);
    // GA 0 with batch_size: `0 or batch_size // mbs` derives it.
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "0"),
        ("batch_size", "16"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GradientAccumulationSteps), "8");
    assert_eq!(v(&r, Output::GlobalBatchSize), "16");
    for key in ["nodes", "gpus_per_node", "world_size"] {
        let r = run(&[(key, "0")]);
        assert!(
            !errors_at(&r, Field::from_key(key).unwrap()).is_empty(),
            "{key}"
        );
    }
    // tp 0 is 1 to axolotl's validators
    let r = run(&[("world_size", "4"), ("tensor_parallel_size", "0")]);
    assert_eq!(v(&r, Output::DpWorldSize), "4");
    assert!(!messages_at(&r, Field::TensorParallelSize, Level::Warning).is_empty());
}

// ---- epochs, fractional epochs, max_steps -----------------------------------------------------

#[test]
fn fractional_epochs_ceil() {
    // N 1000, E 1.5, batch 16 → ceil(1500/16) = 94.
    let r = run(&[
        ("world_size", "4"),
        ("tensor_parallel_size", "2"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
        ("num_epochs", "1.5"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "94");
    assert_eq!(v(&r, Output::StepsPerEpoch), "63");
    // boundary: exactly divisible stays, one more row adds a step
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "16"),
        ("num_samples", "1600"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "100");
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "16"),
        ("num_samples", "1601"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "101");
    // order of operations: (N*E)/B in floats. Python: 50 * 1.1 = 55.00000000000001 → ceil 56.
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("num_samples", "50"),
        ("num_epochs", "1.1"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "56");
    // (N*E)/B, not N*(E/B): Python gives ceil(70 * 1.1 / 7) = 11 but ceil(70 * (1.1 / 7)) = 12.
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "7"),
        ("num_samples", "70"),
        ("num_epochs", "1.1"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "11");
}

#[test]
fn max_steps_min_and_trainer() {
    let base = [
        ("world_size", "4"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ];
    let mut p = base.to_vec();
    p.push(("max_steps", "10"));
    let r = run(&p);
    assert_eq!(v(&r, Output::TotalNumSteps), "10");
    assert_eq!(v(&r, Output::MaxSteps), "10");
    let mut p = base.to_vec();
    p.push(("max_steps", "100"));
    let r = run(&p);
    assert_eq!(v(&r, Output::TotalNumSteps), "32");
    assert_eq!(v(&r, Output::MaxSteps), "100");
    let w = messages_at(&r, Field::MaxSteps, Level::Warning).join(" ");
    assert!(w.contains("3.20 epochs"), "{w}");
}

// ---- the sample_packing_eff_est path ----------------------------------------------------------

fn packed(ws: &str, tp: &str, mbs: &str, ga: &str, epochs: &str) -> Report {
    run(&[
        ("world_size", ws),
        ("tensor_parallel_size", tp),
        ("micro_batch_size", mbs),
        ("gradient_accumulation_steps", ga),
        ("num_epochs", epochs),
        ("sequence_len", "2048"),
        ("sample_packing", "true"),
        ("sample_packing_eff_est", "0.95"),
        ("total_num_tokens", "10000000"),
    ])
}

#[test]
fn eff_est_vectors() {
    assert_eq!(
        v(&packed("4", "1", "2", "4", "1"), Output::TotalNumSteps),
        "158.0"
    );
    assert_eq!(
        v(&packed("4", "1", "2", "4", "3"), Output::TotalNumSteps),
        "474.0"
    );
    assert_eq!(
        v(&packed("4", "1", "2", "4", "1.5"), Output::TotalNumSteps),
        "237.0"
    );
    let r = packed("4", "2", "2", "4", "1");
    assert_eq!(v(&r, Output::TotalNumSteps), "317.0");
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "316.0");
    assert_eq!(v(&r, Output::StepsPerEpoch), "317");
    assert_eq!(v(&r, Output::MaxSteps), "317.0");
}

#[test]
fn eff_est_float_results_reach_the_trainer() {
    // calculate_total_num_steps, run: a fractional epoch gives a float step count such as
    // 466.79999999999995. 389 × 1.2: x // batch = 390 for this token count.
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("num_epochs", "1.2"),
        ("sequence_len", "1000"),
        ("sample_packing", "true"),
        ("sample_packing_eff_est", "0.99"),
        ("total_num_tokens", "390000"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "466.79999999999995");
    assert_eq!(v(&r, Output::MaxSteps), "466.79999999999995");
    // tiny data: floor(...) − 1 = −1 → −1.0
    let r = run(&[
        ("world_size", "1"),
        ("sample_packing", "true"),
        ("sample_packing_eff_est", "0.95"),
        ("total_num_tokens", "10"),
    ]);
    assert_eq!(v(&r, Output::TotalNumSteps), "-1.0");
    assert_eq!(v(&r, Output::MaxSteps), "-1.0");
}

#[test]
fn min_with_max_steps_keeps_type() {
    let mut p = vec![
        ("world_size", "4"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("sequence_len", "2048"),
        ("sample_packing", "true"),
        ("sample_packing_eff_est", "0.95"),
        ("total_num_tokens", "10000000"),
        ("max_steps", "100"),
    ];
    let r = run(&p);
    assert_eq!(v(&r, Output::TotalNumSteps), "100");
    assert_eq!(v(&r, Output::MaxSteps), "100");
    p.pop();
    p.push(("max_steps", "158"));
    // min(158.0, 158) returns the first: the float
    assert_eq!(v(&run(&p), Output::TotalNumSteps), "158.0");
    assert_eq!(v(&run(&p), Output::MaxSteps), "158");
}

#[test]
fn packing_without_estimate_asks_for_it() {
    let r = run(&[("sample_packing", "true"), ("num_samples", "1000")]);
    assert_eq!(raw(&r, Output::TotalNumSteps), None);
    assert!(!messages_at(&r, Field::SamplePackingEffEst, Level::Warning).is_empty());
    assert!(raw(&r, Output::GlobalBatchSize).is_some());
}

#[test]
fn cp_with_packing_requires_micro_batch_one() {
    let r = run(&[
        ("context_parallel_size", "2"),
        ("sample_packing", "true"),
        ("micro_batch_size", "2"),
    ]);
    assert!(errors_at(&r, Field::MicroBatchSize)
        .join(" ")
        .contains("ring-flash-attn"));
    let r = run(&[("context_parallel_size", "2")]);
    assert!(r
        .diags_for(Field::ContextParallelSize)
        .any(|d| d.message.contains("flash_attention_2")));
}

// ---- warmup, eval, save -----------------------------------------------------------------------

fn one_gpu_steps(total: u64, extra: &[(&str, &str)]) -> Report {
    let n = total.to_string();
    let mut p = vec![
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("num_samples", n.as_str()),
    ];
    p.extend_from_slice(extra);
    run(&p)
}

#[test]
fn warmup_defaults() {
    for (total, warmup) in [
        (1000, 30),
        (5000, 100),
        (40, 2),
        (50, 2),
        (33, 0),
        (34, 2),
        (3333, 99),
        (3334, 100),
    ] {
        let r = one_gpu_steps(total, &[]);
        assert_eq!(
            v(&r, Output::WarmupSteps),
            warmup.to_string(),
            "total {total}"
        );
    }
    let r = one_gpu_steps(125, &[("warmup_ratio", "0.1")]);
    assert_eq!(v(&r, Output::WarmupSteps), "12");
    let r = one_gpu_steps(125, &[("warmup_steps", "1")]);
    assert_eq!(v(&r, Output::WarmupSteps), "2");
    let r = one_gpu_steps(125, &[("warmup_steps", "5"), ("warmup_ratio", "0.1")]);
    assert!(errors_at(&r, Field::WarmupRatio)[0].contains("mutually exclusive"));
}

#[test]
fn save_and_eval_steps() {
    let r = one_gpu_steps(
        1000,
        &[
            ("saves_per_epoch", "4"),
            ("evals_per_epoch", "4"),
            ("val_set_size", "0.05"),
        ],
    );
    assert_eq!(v(&r, Output::SaveSteps), "250");
    assert_eq!(v(&r, Output::EvalSteps), "250");
    // fraction from 1/(n·E) with E 2: 1/8 of 2000 steps
    let r = one_gpu_steps(1000, &[("saves_per_epoch", "4"), ("num_epochs", "2")]);
    assert_eq!(v(&r, Output::SaveSteps), "250");
    // ceil: 1/3 of 1000 = 333.33… → 334
    let r = one_gpu_steps(1000, &[("saves_per_epoch", "3")]);
    assert_eq!(v(&r, Output::SaveSteps), "334");
    // evals without an eval split are ignored
    let r = one_gpu_steps(1000, &[("evals_per_epoch", "4")]);
    assert_eq!(raw(&r, Output::EvalSteps), None);
    assert!(!messages_at(&r, Field::EvalsPerEpoch, Level::Warning).is_empty());
    // exactly 1: left unset
    let r = one_gpu_steps(1000, &[("saves_per_epoch", "1")]);
    assert_eq!(raw(&r, Output::SaveSteps), None);
    // above 1: axolotl's warning
    let r = one_gpu_steps(1000, &[("saves_per_epoch", "1"), ("num_epochs", "0.25")]);
    assert!(messages_at(&r, Field::SavesPerEpoch, Level::Warning)[0]
        .contains("Invalid value for save_steps (4.0)"));
}

// ---- cluster shape and hostile values ---------------------------------------------------------

#[test]
fn cluster_shape() {
    let r = run(&[]);
    assert_eq!(v(&r, Output::WorldSize), "8");
    let r = run(&[("nodes", "2"), ("gpus_per_node", "8")]);
    assert_eq!(v(&r, Output::WorldSize), "16");
    // one side of the shape given: the other is what makes world_size
    let r = run(&[("nodes", "2"), ("world_size", "12")]);
    assert_eq!(v(&r, Output::WorldSize), "12");
    assert!(errors_at(&r, Field::WorldSize).is_empty());
    let r = run(&[("nodes", "5"), ("world_size", "12")]);
    assert!(errors_at(&r, Field::WorldSize)[0].contains("cannot be split evenly over nodes 5"));
    let r = run(&[("gpus_per_node", "5"), ("world_size", "12")]);
    assert!(errors_at(&r, Field::WorldSize)[0].contains("nodes of gpus_per_node 5"));
    // both given: they must multiply to it
    let r = run(&[("nodes", "2"), ("gpus_per_node", "8"), ("world_size", "12")]);
    assert_eq!(v(&r, Output::WorldSize), "12");
    assert!(errors_at(&r, Field::WorldSize)[0].contains("2 × 8 = 16"));
    let r = run(&[("nodes", "18446744073709551615"), ("gpus_per_node", "2")]);
    assert!(!errors_at(&r, Field::GpusPerNode).is_empty());
}

#[test]
fn huge_values_never_wrap() {
    let max = u64::MAX.to_string();
    let r = run(&[
        ("world_size", &max),
        ("micro_batch_size", &max),
        ("gradient_accumulation_steps", &max),
        ("num_samples", &max),
        ("num_epochs", "1e300"),
    ]);
    assert_eq!(raw(&r, Output::GlobalBatchSize), None);
    assert!(r.has_errors());
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", "1"),
        ("num_samples", &max),
        ("num_epochs", "1e300"),
    ]);
    assert_eq!(raw(&r, Output::TotalNumSteps), None);
    assert!(
        !errors_at(&r, Field::NumSamples).is_empty(),
        "{:#?}",
        r.diags
    );
    // tokens_per_step widens beyond u64, and refuses beyond i128
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", &max),
        ("sequence_len", "4"),
    ]);
    assert_eq!(
        v(&r, Output::TokensPerStep),
        (u64::MAX as u128 * 4).to_string()
    );
    let r = run(&[
        ("world_size", "1"),
        ("micro_batch_size", &max),
        ("sequence_len", &max),
    ]);
    assert_eq!(raw(&r, Output::TokensPerStep), None);
    assert!(!errors_at(&r, Field::SequenceLen).is_empty());
}

// ---- version=0.14.0: 0.14.0's rules as the main outputs, 0.19.0 as the comparison ----------

fn run_release(release: &str, pairs: &[(&str, &str)]) -> Report {
    let raw = RawInputs::from_pairs(
        pairs
            .iter()
            .map(|&(k, v)| (Field::from_key(k).expect(k), v)),
    );
    axolotl::compute_release(release, &raw)
}

fn run14(pairs: &[(&str, &str)]) -> Report {
    run_release("0.14.0", pairs)
}

#[test]
fn releases_are_real_choices() {
    let ids: Vec<&str> = axolotl::RELEASES.iter().map(|r| r.id).collect();
    assert_eq!(ids, ["0.21.0", "0.20.0", "0.19.0", "0.18.0", "0.14.0"]);
    let pairs = [
        ("world_size", "4"),
        ("tensor_parallel_size", "2"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
    ];
    let raw = RawInputs::from_pairs(pairs.iter().map(|&(k, v)| (Field::from_key(k).unwrap(), v)));
    let r19 = axolotl::compute_release("0.19.0", &raw);
    let r14 = axolotl::compute_release("0.14.0", &raw);
    assert_eq!(v(&r19, Output::GlobalBatchSize), "16");
    assert_eq!(v(&r14, Output::GlobalBatchSize), "32");
    // an unknown id gets the default release
    let other = axolotl::compute_release("0.99.0", &raw);
    assert_eq!(v(&other, Output::GlobalBatchSize), "16");
    assert_eq!(axolotl::compute(&raw), r19);
}

#[test]
fn seed_tables_under_014() {
    // PRs #3462's and #3444's tables, run on 0.14.0: before the PRs both give 32, 32, 32, 16; the
    // comparison (legacy_*) is then 0.19.0's 32, 16, 8, 8.
    for key in ["tensor_parallel_size", "context_parallel_size"] {
        for (ws, size, batch, other) in
            [(4, 1, 32, 32), (4, 2, 32, 16), (4, 4, 32, 8), (2, 2, 16, 8)]
        {
            let (ws, size) = (ws.to_string(), size.to_string());
            let r = run14(&[
                ("world_size", &ws),
                (key, &size),
                ("micro_batch_size", "2"),
                ("gradient_accumulation_steps", "4"),
                ("sequence_len", "2048"),
            ]);
            assert_eq!(
                v(&r, Output::GlobalBatchSize),
                batch.to_string(),
                "{key} {ws} {size}"
            );
            assert_eq!(
                v(&r, Output::LegacyGlobalBatchSize),
                other.to_string(),
                "{key} {ws} {size}"
            );
            assert_eq!(v(&r, Output::GradientAccumulationSteps), "4");
            // tokens are what a step really trains, the same run in both releases
            assert_eq!(
                v(&r, Output::TokensPerStep),
                (other * 2048).to_string(),
                "{key} {ws} {size}"
            );
        }
    }
}

#[test]
fn steps_times_cp_tp_under_014() {
    // calculate_total_num_steps' × cp·tp, run on 0.14.0: same steps when world_size is divisible by
    // tp·cp (0.14.0 batch 32/64).
    for (ws, tp, cp, batch, steps) in [(4, 2, 1, 32, 63), (8, 2, 2, 64, 63), (4, 1, 1, 32, 32)] {
        let r = run14(&[
            ("world_size", &ws.to_string()),
            ("tensor_parallel_size", &tp.to_string()),
            ("context_parallel_size", &cp.to_string()),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
            ("num_samples", "1000"),
        ]);
        assert_eq!(v(&r, Output::GlobalBatchSize), batch.to_string());
        assert_eq!(v(&r, Output::TotalNumSteps), steps.to_string());
        assert_eq!(v(&r, Output::MaxSteps), steps.to_string());
        assert_eq!(v(&r, Output::StepsPerEpoch), steps.to_string());
        assert_eq!(v(&r, Output::LegacyTotalNumSteps), steps.to_string());
        if tp * cp > 1 {
            let at = if tp > 1 {
                Field::TensorParallelSize
            } else {
                Field::ContextParallelSize
            };
            let n = messages_at(&r, at, Level::Note).join(" ");
            assert!(n.contains("counts each sample"), "{n}");
        }
    }
    // run: ws 2, cp 4 → 0.14.0 silently gives batch 16, 250 steps; the launch still fails.
    let r = run14(&[
        ("world_size", "2"),
        ("context_parallel_size", "4"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GlobalBatchSize), "16");
    assert_eq!(v(&r, Output::TotalNumSteps), "250");
    assert_eq!(v(&r, Output::LegacyGlobalBatchSize), "0");
    assert_eq!(raw(&r, Output::LegacyTotalNumSteps), None);
    let e = errors_at(&r, Field::WorldSize).join(" ");
    assert!(!e.contains("division by zero"), "{e}");
    assert!(
        e.contains("ParallelismConfig total_size (4) does not match num_processes (2)"),
        "{e}"
    );
    assert!(r
        .legacy_notes
        .iter()
        .any(|n| n.contains("axolotl 0.19.0") && n.contains("float division by zero")));
}

#[test]
fn eff_est_under_014() {
    // the eff_est path, run on 0.14.0: before #3462, ws 4 tp 2 mbs 2 GA 4: batch 32, (159 − 1) ×
    // 1.0 × 1 × 2 = 316.0.
    let raw = RawInputs::from_pairs(
        [
            ("world_size", "4"),
            ("tensor_parallel_size", "2"),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
            ("num_epochs", "1"),
            ("sample_packing", "true"),
            ("sample_packing_eff_est", "0.95"),
            ("total_num_tokens", "10000000"),
            ("sequence_len", "2048"),
        ]
        .iter()
        .map(|&(k, v)| (Field::from_key(k).unwrap(), v)),
    );
    let r = axolotl::compute_release("0.14.0", &raw);
    assert_eq!(v(&r, Output::GlobalBatchSize), "32");
    assert_eq!(v(&r, Output::TotalNumSteps), "316.0");
    assert_eq!(v(&r, Output::StepsPerEpoch), "316");
    assert_eq!(v(&r, Output::MaxSteps), "316.0");
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "317.0");
    assert!(r.legacy_notes.iter().any(|n| n
        == "axolotl 0.19.0 computes 317.0 steps where 0.14.0 computed 316.0 (difference 1.0)."));
    assert!(r
        .legacy_notes
        .iter()
        .any(|n| n == "axolotl 0.19.0 logs batch_size 16 where 0.14.0 logged 32 (16 fewer)."));
}

#[test]
fn count_rule_under_014() {
    // check_batch_size_fields, run: 0.14.0 refuses any input with fewer than two truthy batch
    // fields.
    for pairs in [
        vec![("world_size", "4"), ("gradient_accumulation_steps", "4")],
        vec![("world_size", "4"), ("micro_batch_size", "2")],
        vec![("world_size", "4")],
        vec![
            ("micro_batch_size", "0"),
            ("gradient_accumulation_steps", "4"),
        ],
        vec![
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "0"),
        ],
    ] {
        let mut p = pairs.clone();
        p.push(("num_samples", "1000"));
        let r = run14(&p);
        let e = errors_at(&r, Field::BatchSize).join(" ");
        assert!(
            e.contains("At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set"),
            "{pairs:?}: {e}"
        );
        assert_eq!(raw(&r, Output::GlobalBatchSize), None);
        assert_eq!(raw(&r, Output::TotalNumSteps), None);
        // 0.19.0 is the comparison and accepts only-GA / only-mbs / neither
        if !pairs.iter().any(|&(_, v)| v == "0") {
            assert!(
                raw(&r, Output::LegacyGlobalBatchSize).is_some(),
                "{pairs:?}"
            );
        }
    }
    // 0.19.0's refusals are 0.14.0's too.
    let r = run14(&[("batch_size", "16"), ("gradient_accumulation_steps", "4")]);
    assert!(errors_at(&r, Field::BatchSize)
        .join(" ")
        .contains("please set only one of gradient_accumulation_steps or batch_size"));
}

#[test]
fn cp_message_is_the_releases_own() {
    let pairs = [
        ("world_size", "4"),
        ("context_parallel_size", "2"),
        ("micro_batch_size", "1"),
        ("gradient_accumulation_steps", "4"),
    ];
    let n14 = messages_at(&run14(&pairs), Field::ContextParallelSize, Level::Note).join(" ");
    assert!(
        n14.contains(
            "\u{201c}flash_attention: true must be set with context_parallel_size > 1\u{201d}"
        ),
        "{n14}"
    );
    let n19 = messages_at(&run(&pairs), Field::ContextParallelSize, Level::Note).join(" ");
    assert!(
        n19.contains("context_parallel_size > 1 requires attn_implementation: flash_attention_2."),
        "{n19}"
    );
}

#[test]
fn world_size_one_with_tp_under_014() {
    // Run: ws 1, tp 2 → 0.14.0 batch 8 (no scaling), steps ceil(1000 × 1 × 1 × 2 / 8) = 250.
    let r = run14(&[
        ("world_size", "1"),
        ("tensor_parallel_size", "2"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ]);
    assert_eq!(v(&r, Output::GlobalBatchSize), "8");
    assert_eq!(v(&r, Output::TotalNumSteps), "250");
    assert_eq!(v(&r, Output::StepsPerEpoch), "250");
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "125");
    assert!(!errors_at(&r, Field::WorldSize).is_empty());
}

/// Whatever the inputs, the main outputs of one release are the comparison of the other.
#[test]
fn each_release_is_the_others_comparison() {
    let mut compared = 0;
    for ws in ["1", "2", "3", "4", "6", "8"] {
        for tp in ["", "1", "2", "4"] {
            for cp in ["", "2"] {
                for (mbs, ga, bs) in [
                    ("2", "4", ""),
                    ("", "4", ""),
                    ("2", "", "16"),
                    ("0", "4", ""),
                    ("", "", ""),
                ] {
                    for packing in ["", "true"] {
                        let pairs: Vec<(&str, &str)> = [
                            ("world_size", ws),
                            ("tensor_parallel_size", tp),
                            ("context_parallel_size", cp),
                            ("micro_batch_size", mbs),
                            ("gradient_accumulation_steps", ga),
                            ("batch_size", bs),
                            ("sample_packing", packing),
                            ("sample_packing_eff_est", "0.95"),
                            ("total_num_tokens", "3000000"),
                            ("num_samples", "999"),
                            ("num_epochs", "1.5"),
                        ]
                        .into_iter()
                        .filter(|&(_, v)| !v.is_empty())
                        .collect();
                        let r19 = run(&pairs);
                        let r14 = run14(&pairs);
                        let r18 = run_release("0.18.0", &pairs);
                        for (a, b) in [(&r19, &r14), (&r14, &r19), (&r14, &r18)] {
                            assert_eq!(
                                raw(a, Output::GlobalBatchSize),
                                raw(b, Output::LegacyGlobalBatchSize),
                                "{pairs:?}"
                            );
                            assert_eq!(
                                raw(a, Output::TotalNumSteps),
                                raw(b, Output::LegacyTotalNumSteps),
                                "{pairs:?}"
                            );
                        }
                        // 0.18.0 computes 0.19.0's numbers whenever it accepts the config.
                        if raw(&r18, Output::GlobalBatchSize).is_some() {
                            for o in [
                                Output::GlobalBatchSize,
                                Output::TotalNumSteps,
                                Output::MaxSteps,
                                Output::WarmupSteps,
                            ] {
                                assert_eq!(raw(&r18, o), raw(&r19, o), "{pairs:?}");
                            }
                        }
                        compared += 1;
                    }
                }
            }
        }
    }
    assert_eq!(compared, 6 * 4 * 2 * 5 * 2);
}

#[test]
fn edges_under_014_and_018() {
    edges_for("0.14.0");
    edges_for("0.18.0");
}

/// tests/edges.rs runs the default release; the same for the others.
fn edges_for(rel: &str) {
    use dpcalc::calc::{Framework, Kind};
    use dpcalc::query;
    let max = u64::MAX.to_string();
    for f in Framework::Axolotl.fields() {
        let k = f.key();
        let bad: &[&str] = match f.kind() {
            Kind::Count => &["-1", "1.5", "NaN", "18446744073709551616", "%ff"],
            Kind::Real => &["-1", "NaN", "inf", "1e309", "1,5"],
            Kind::Flag => &["maybe", "%ff"],
            Kind::Int => &["1.5", "NaN", "9223372036854775808"],
            Kind::Text => &[],
        };
        for b in bad {
            let q = format!("version={rel}&{k}={b}");
            let r = query::decode(&q).report();
            assert_eq!(
                r.diags_for(f).filter(|d| d.level == Level::Error).count(),
                1,
                "{q}"
            );
        }
        let q = format!("version={rel}&{k}=1&{k}=2");
        let r = query::decode(&q).report();
        assert_eq!(
            r.diags_for(f).filter(|d| d.level == Level::Error).count(),
            1,
            "{q}"
        );
        // Empty is absent, not an error; with no batch field given, the release's own count rule
        // ("At least two of ...") is the one error at batch_size.
        let q = format!("version={rel}&{k}=");
        let r = query::decode(&q).report();
        let errors: Vec<_> = r
            .diags_for(f)
            .filter(|d| d.level == Level::Error && !d.message.contains("At least two of"))
            .collect();
        assert!(errors.is_empty(), "{q}: {errors:?}");
        if matches!(f.kind(), Kind::Count | Kind::Int) {
            for x in ["0", "1", max.as_str(), "9223372036854775807"] {
                let _ = query::decode(&format!("version={rel}&{k}={x}")).report();
            }
        }
    }
    let all: Vec<String> = Framework::Axolotl
        .fields()
        .filter(|f| f.kind() == Kind::Count)
        .map(|f| format!("{}={max}", f.key()))
        .collect();
    let r = query::decode(&format!("version={rel}&{}", all.join("&"))).report();
    assert!(r.has_errors());
}

#[test]
fn release_018_has_019s_math_and_014s_count_rule() {
    // Run (0.18.0, oracle E_only_GA4_ws4 / T_all_absent): only GA, or nothing, is refused.
    for pairs in [
        vec![("world_size", "4"), ("gradient_accumulation_steps", "4")],
        vec![("world_size", "4")],
    ] {
        let r = run_release("0.18.0", &pairs);
        assert!(errors_at(&r, Field::BatchSize).join(" ").contains(
            "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set"
        ));
        assert_eq!(raw(&r, Output::GlobalBatchSize), None);
        assert!(raw(&run(&pairs), Output::GlobalBatchSize).is_some());
    }
    // 0.19.0's batch: ws 4, tp 2, mbs 2, GA 4 → 16 (0.14.0, the comparison, 32).
    let pairs = [
        ("world_size", "4"),
        ("tensor_parallel_size", "2"),
        ("micro_batch_size", "2"),
        ("gradient_accumulation_steps", "4"),
        ("num_samples", "1000"),
    ];
    let r = run_release("0.18.0", &pairs);
    assert_eq!(v(&r, Output::GlobalBatchSize), "16");
    assert_eq!(v(&r, Output::TotalNumSteps), "63");
    assert_eq!(v(&r, Output::LegacyGlobalBatchSize), "32");
    assert!(r
        .legacy_notes
        .iter()
        .any(|n| n == "axolotl 0.14.0 logged batch_size 32 where 0.18.0 logs 16 (16 more)."));
    // its CP message (run: V_cp2_no_flash_ws4)
    let r = run_release(
        "0.18.0",
        &[
            ("world_size", "4"),
            ("context_parallel_size", "2"),
            ("micro_batch_size", "1"),
        ],
    );
    let n = messages_at(&r, Field::ContextParallelSize, Level::Note).join(" ");
    assert!(
        n.contains("\u{201c}context_parallel_size > 1 requires flash attention (attn_implementation: flash_attention_2 or flash_attention_3).\u{201d}"),
        "{n}"
    );
}

/// axolotl21: `_prepare_standard_dataset` caps the comparison's step count too, and 0.21.0's
/// expert parallelism does not divide the batch.
#[test]
fn axolotl21_max_steps_cap_and_expert_parallelism() {
    let case = [
        ("micro_batch_size", "3"),
        ("gradient_accumulation_steps", "8"),
        ("num_epochs", "2.5"),
        ("max_steps", "50"),
        ("world_size", "3"),
        ("num_samples", "123457"),
    ];
    let r = run_release("0.19.0", &case);
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "50");
    let r = run14(&case);
    assert_eq!(v(&r, Output::TotalNumSteps), "50");
    assert_eq!(v(&r, Output::LegacyTotalNumSteps), "50");
    let r = run_release(
        "0.21.0",
        &[
            ("world_size", "8"),
            ("micro_batch_size", "2"),
            ("gradient_accumulation_steps", "4"),
            ("expert_parallel_size", "2"),
            ("dp_shard_size", "4"),
            ("fsdp_version", "2"),
            ("fsdp_config.state_dict_type", "FULL_STATE_DICT"),
        ],
    );
    assert!(!r.has_errors());
    assert_eq!(v(&r, Output::GlobalBatchSize), "64");
    assert_eq!(r.grid.map(|g| g.ep), Some(2));
}

/// axolotl's own HSDP + TP example (`real/axolotl/llama-3_1-8b-hsdp-tp.yaml`: dp_shard_size 4 ×
/// dp_replicate_size 2 × tensor_parallel_size 2 = 16) on 8 GPUs: every release dpcalc models
/// builds the same ParallelismConfig (utils/distributed.py::_get_parallel_config_kwargs, the
/// same code at v0.14.0, v0.18.0 and 0.21.0) and its patched `_validate_accelerator` refuses
/// total_size 16 on 8 processes, each release in its own words; on 16 GPUs none refuses.
#[test]
fn every_release_refuses_parallel_sizes_larger_than_the_world() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/configs/real/axolotl/llama-3_1-8b-hsdp-tp.yaml"
    ))
    .expect("the example");
    let (state, got) = crate::common::paste(dpcalc::state::State::from_query(""), &text);
    assert!(got.applicable(), "{:?}", got.errors);
    for (release, tail) in [
        ("0.21.0", "dp_shard_size/tp_size/cp_size/sp_size/ep_size."),
        ("0.20.0", "dp_shard_size/tp_size/cp_size/sp_size/ep_size."),
        ("0.19.0", "dp_shard_size/tp_size/cp_size/sp_size/ep_size."),
        ("0.18.0", "dp_shard_size/tp_size/cp_size/sp_size/ep_size."),
        ("0.14.0", "dp_shard_size/tp_size/cp_size."),
    ] {
        let mut raw = state.link.inputs.clone();
        raw.set(Field::WorldSize, "8");
        let r = axolotl::compute_release(release, &raw);
        let refusal = r
            .diags
            .iter()
            .find(|d| d.field == Field::WorldSize && d.level == dpcalc::calc::Level::Error)
            .map(|d| d.message.clone())
            .unwrap_or_default();
        assert!(
            refusal.contains("ParallelismConfig total_size (16) does not match num_processes (8)")
                && refusal.contains(&format!("dp_replicate_size/ {tail}")),
            "{release}: {:?}",
            r.diags
        );
        raw.set(Field::WorldSize, "16");
        let r = axolotl::compute_release(release, &raw);
        assert!(!r.has_errors(), "{release}: {:?}", r.diags);
        assert_eq!(v(&r, Output::DpWorldSize), "8", "{release}");
    }
    // a dp_shard_size alone larger than the world (FSDP2 on 4 GPUs, dp_shard_size 8): refused
    // by 0.18.0 as by 0.21.0
    for release in ["0.21.0", "0.18.0", "0.14.0"] {
        let r = run_release(
            release,
            &[
                ("world_size", "4"),
                ("micro_batch_size", "1"),
                ("gradient_accumulation_steps", "1"),
                ("dp_shard_size", "8"),
                ("fsdp_config.fsdp_version", "2"),
            ],
        );
        assert!(
            r.diags.iter().any(|d| d.field == Field::WorldSize
                && d.message
                    .contains("total_size (8) does not match num_processes (4)")),
            "{release}: {:?}",
            r.diags
        );
    }
}
