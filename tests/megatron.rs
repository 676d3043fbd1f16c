//! dpcalc against Megatron's own code: `tests/fixtures/megatron.txt` records what megatron-core
//! 0.16.1 (and a transcription of Megatron-LM HEAD) computed when run (see
//! `scripts/megatron_oracle_to_fixture.py`), what 0.19.2 computed, and what each release's own
//! validate_args did with every mixture-of-experts preset (`scripts/oracles/megatron-moe/`);
//! every value and every refusal must match. Then
//! megatron-core's own test vectors (`tests/unit_tests/test_num_microbatches_calculator.py`) and
//! runs of its calculators, written out by hand.

use crate::common;
use crate::common::report::{errors, raw};

use dpcalc::calc::megatron::{self, Version};
use dpcalc::calc::model;
use dpcalc::calc::{Field, Framework, Level, Output, Report};
use dpcalc::query;

fn run(release: &str, q: &str) -> Report {
    megatron::compute(
        Version::from_id(release),
        &query::decode(&format!("framework=megatron&{q}")).inputs,
    )
}

const FIXTURE: &str = include_str!("fixtures/megatron.txt");

#[test]
fn matches_megatron_when_run() {
    let (_, records) = common::parse(FIXTURE);
    let known = without_the_expert_check(&records);
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    common::run(&common::Oracle {
        file: "megatron.txt",
        text: FIXTURE,
        framework: "megatron",
        minimums: &[
            ("", 605, 5434),
            ("0.16.1", 272, 2639),
            ("head", 174, 1625),
            ("0.19.2", 159, 1170),
            ("megatron19-1", 138, 1159),
            ("megatron-moe-0.19.2", 21, 11),
            ("megatron-moe-0.16.1", 21, 11),
            ("megatron-moe-head", 21, 11),
        ],
        stop_marks: &[],
        known: &known,
    });
}

/// What dpcalc no longer agrees with in the records of command `megatron-1`: that run transcribed
/// validate_args around megatron-core 0.16.1's calculators and parallel_state without its
/// expert-parallelism check (arguments.py, 0.16.1 line 1026, HEAD line 1656: `num_experts must be
/// non None to use expert model parallelism`), so at 0.16.1 and HEAD a layout with
/// `expert_model_parallel_size` > 1 and no `--num-experts` ran on to parallel_state's expert grid
/// there. Megatron's own validate_args of both releases, run, stops first (commands
/// `megatron-moe-0.16.1` and `megatron-moe-head`, case `Qwen3-30B-A3B_typed0_ep8_ws8`), and so
/// does dpcalc: these records' `ok`, their expert grid refusal and their expert data-parallel
/// size are the transcription's, and their other values still have to match. Exactly these
/// failures, worded as the runner words them.
fn without_the_expert_check(records: &[common::Record]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records {
        let inputs = query::decode(&r.link).inputs;
        let ep = inputs
            .get(Field::ExpertModelParallelSize)
            .parse::<u64>()
            .unwrap_or(1);
        if r.command != "megatron-1" || ep < 2 || !inputs.get(Field::NumExperts).is_empty() {
            continue;
        }
        let at = format!("megatron.txt:{}", r.line);
        for (name, want, _) in &r.outputs {
            if name == "expert_data_parallel_size" && *want != common::Want::None {
                out.push(format!("{at} {name}: value: Python {want}, dpcalc none"));
            }
        }
        for o in &r.outcomes {
            match o {
                common::Outcome::Ok => {
                    out.push(format!("{at}: the framework runs, dpcalc says it stops"));
                }
                common::Outcome::ErrorText(t) if t.contains("expert_tensor_model_pipeline") => {
                    out.push(format!("{at}: the framework raised \u{201c}{t}\u{201d}"));
                }
                _ => {}
            }
        }
    }
    out
}

/// Every mixture-of-experts preset under expert parallelism, at every release dpcalc models,
/// against what that release's own validate_args did with the preset's arguments (commands
/// `megatron-moe-*` of the fixture): accepted where it accepted, refused with its assertion
/// where it refused, the expert count being the preset's unless one is typed.
#[test]
fn moe_presets_with_expert_parallelism_match_validate_args() {
    let (_, records) = common::parse(FIXTURE);
    let runs: Vec<&common::Record> = records
        .iter()
        .filter(|r| r.command.starts_with("megatron-moe-"))
        .collect();
    let moe: Vec<&str> = model::PRESETS
        .iter()
        .copied()
        .filter(|p| model::preset(p).is_some_and(|m| m.is_moe()))
        .collect();
    assert!(moe.len() >= 6, "{moe:?}");
    for release in megatron::RELEASES {
        for preset in &moe {
            let of = |r: &&&common::Record| {
                let inputs = query::decode(&r.link).inputs;
                r.release == release.id
                    && inputs.get(Field::ModelId) == *preset
                    && inputs.get(Field::NumExperts).is_empty()
                    && inputs
                        .get(Field::ExpertModelParallelSize)
                        .parse::<u64>()
                        .is_ok_and(|ep| ep > 1)
            };
            let accepted = runs
                .iter()
                .filter(of)
                .filter(|r| r.outcomes == [common::Outcome::Ok])
                .count();
            let refused = runs
                .iter()
                .filter(of)
                .filter(|r| matches!(r.outcomes[..], [common::Outcome::ErrorText(_)]))
                .count();
            assert!(
                accepted >= 1 && refused >= 1,
                "{} {preset}: {accepted} accepted and {refused} refused runs recorded",
                release.id
            );
        }
    }
    let mut fails = Vec::new();
    for r in &runs {
        fails.extend(common::check("megatron.txt", r, &[]));
        // a refusal is said where the user can act: at num_experts when typed, else at the
        // expert parallel size the preset's count does not divide
        if let [common::Outcome::ErrorText(t)] = &r.outcomes[..] {
            let inputs = query::decode(&r.link).inputs;
            let at = if inputs.get(Field::NumExperts).is_empty() {
                Field::ExpertModelParallelSize
            } else {
                Field::NumExperts
            };
            let report = query::decode(&r.link).report();
            if !report
                .diags_for(at)
                .any(|d| d.level == Level::Error && d.message.contains(t.as_str()))
            {
                fails.push((
                    format!("megatron.txt:{}: not at {}", r.line, at.key()),
                    t.clone(),
                ));
            }
        }
    }
    assert!(fails.is_empty(), "{fails:#?}");
    assert_eq!(runs.len(), 63);
}

/// megatron-core's `test_num_microbatches_calculator.py`, and the module run:
/// ConstantNumMicroBatchesCalculator (gbs, mbs, dp, decrease) → microbatches, running.
#[test]
fn spec_constant_vectors() {
    for (gbs, mbs, dp, dec, micro, running) in [
        (32, 8, 2, false, 2, 32),
        (32, 8, 3, true, 1, 24),
        (33, 8, 2, true, 2, 32),
        (16, 8, 2, false, 1, 16),
        (16, 4, 3, true, 1, 12),
        (1024, 1, 64, false, 16, 1024),
        (512, 4, 16, false, 8, 512),
    ] {
        let q = format!(
            "world_size={dp}&global_batch_size={gbs}&micro_batch_size={mbs}&decrease_batch_size_if_needed={dec}&train_iters=10"
        );
        for release in ["0.16.1", "head"] {
            let r = run(release, &q);
            assert_eq!(
                raw(&r, Output::NumMicrobatches),
                Some(micro.to_string()),
                "{release} {q}"
            );
            assert_eq!(
                raw(&r, Output::RunningGlobalBatchSize),
                Some(running.to_string()),
                "{release} {q}"
            );
            assert!(!r.has_errors(), "{release} {q}: {:?}", errors(&r));
        }
    }
    for (gbs, mbs, dp) in [(30, 8, 2), (8, 8, 2)] {
        let q = format!(
            "world_size={dp}&global_batch_size={gbs}&micro_batch_size={mbs}&train_iters=10"
        );
        let r = run("0.16.1", &q);
        let want = format!(
            "global batch size ({gbs}) is not divisible by micro batch size ({mbs}) times data parallel size ({dp})"
        );
        let at: Vec<_> = r.diags_for(Field::GlobalBatchSize).collect();
        assert!(
            at.iter()
                .any(|d| d.level == Level::Error && d.message.contains(&want)),
            "{q}: {at:?}"
        );
        assert_eq!(r.value(Output::NumMicrobatches), None);
    }
}

/// megatron-core's old ramp-up test (`test_ramp_up`, commit 0b9bc20): rampup [16,16,96], gbs 32,
/// mbs 8, dp 2: consumed 0,16,32,48,64,80,96 at batch 16, then 128,… at 32; and
/// (32,8,2,False,0,16,16,48) starts at 16, 1 microbatch.
#[test]
fn spec_ramp_vectors() {
    let r = run(
        "0.16.1",
        "world_size=2&global_batch_size=32&micro_batch_size=8&rampup_batch_size=16%2016%2096&train_samples=256",
    );
    assert_eq!(
        raw(&r, Output::InitialGlobalBatchSize).as_deref(),
        Some("16")
    );
    assert_eq!(
        raw(&r, Output::InitialNumMicrobatches).as_deref(),
        Some("1")
    );
    assert_eq!(raw(&r, Output::NumMicrobatches).as_deref(), Some("2"));
    // seven iterations at 16 consume 0..96; from the 7th start (consumed 96) the batch is 32
    assert_eq!(raw(&r, Output::FullBatchIteration).as_deref(), Some("7"));
    assert_eq!(
        raw(&r, Output::RampupSamplesPerIncrement).as_deref(),
        Some("96.0")
    );
    // 256 samples: 6 × 16 + 32 (consumed 96 → 128: the loop's 7th pass) then (256 − 128) // 32 = 4
    assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("11"));
    let r = run(
        "0.16.1",
        "world_size=2&global_batch_size=32&micro_batch_size=8&rampup_batch_size=16%2016%2048&train_samples=1000",
    );
    assert_eq!(
        raw(&r, Output::InitialGlobalBatchSize).as_deref(),
        Some("16")
    );
    assert_eq!(
        raw(&r, Output::InitialNumMicrobatches).as_deref(),
        Some("1")
    );
    // megatron-core 0.16.1, run: the message without a space, and [8,8,0] → float division by zero
    let r = run(
        "0.16.1",
        "world_size=3&global_batch_size=33&micro_batch_size=1&rampup_batch_size=9%204%201000&train_samples=100000",
    );
    assert!(errors(&r).iter().any(|m| m.contains(
        "current global batch size (13) is not divisible by micro-batch-size (1) timesdata parallel size (3)"
    )));
    let r = run(
        "0.16.1",
        "world_size=2&global_batch_size=16&micro_batch_size=1&rampup_batch_size=8%208%200&train_samples=1000",
    );
    assert!(errors(&r)
        .iter()
        .any(|m| m.contains("float division by zero")));
    // megatron-core 0.16.1, run: decrease with a start below mbs·dp → 0 microbatches, no error
    let r = run(
        "0.16.1",
        "world_size=8&micro_batch_size=2&global_batch_size=64&rampup_batch_size=8%208%201000&decrease_batch_size_if_needed=true&train_samples=100000",
    );
    assert_eq!(
        raw(&r, Output::InitialNumMicrobatches).as_deref(),
        Some("0")
    );
    assert!(!r.has_errors(), "{:?}", errors(&r));
    // HEAD ignores the ramp with a warning
    let r = run(
        "head",
        "world_size=2&global_batch_size=32&micro_batch_size=8&rampup_batch_size=16%2016%2096&train_samples=1000",
    );
    assert_eq!(raw(&r, Output::InitialGlobalBatchSize), None);
    assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("31"));
    assert!(r.diags_for(Field::RampupBatchSize).any(
        |d| d.level == Level::Warning && d.message.contains("rampup_batch_size is deprecated")
    ));
}

/// `update_train_iters` (megatron/training/training.py), run: the step schedule and train_samples →
/// train_iters (floor vs loop).
#[test]
fn spec_schedule_and_iteration_vectors() {
    let r = run(
        "head",
        "world_size=512&micro_batch_size=1&step_batch_size_schedule=0%3A256%20200000%3A512&train_samples=1000000",
    );
    assert_eq!(
        raw(&r, Output::InitialGlobalBatchSize).as_deref(),
        Some("256")
    );
    assert_eq!(
        raw(&r, Output::InitialNumMicrobatches).as_deref(),
        Some("0")
    );
    assert_eq!(raw(&r, Output::GlobalBatchSize).as_deref(), Some("512"));
    assert_eq!(raw(&r, Output::NumMicrobatches).as_deref(), Some("1"));
    let r = run(
        "0.16.1",
        "world_size=1&micro_batch_size=16&global_batch_size=16&train_samples=1000",
    );
    assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("62"));
    let r = run(
        "head",
        "world_size=1&micro_batch_size=16&step_batch_size_schedule=0%3A16&train_samples=1000",
    );
    assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("63"));
    // 0.16.1 has no schedule at all
    let r = run(
        "0.16.1",
        "world_size=1&micro_batch_size=16&step_batch_size_schedule=0%3A16&train_samples=1000",
    );
    assert!(r
        .diags_for(Field::StepBatchSizeSchedule)
        .any(|d| d.level == Level::Error));
}

/// The refusals give the fix: nearest valid global batches and world sizes.
#[test]
fn refusals_give_the_fix() {
    let r = run("0.16.1", "world_size=16&tensor_model_parallel_size=2&micro_batch_size=4&global_batch_size=100&train_iters=10");
    let m = r
        .diags_for(Field::GlobalBatchSize)
        .next()
        .expect("error")
        .message
        .clone();
    assert!(
        m.contains("Nearest valid global_batch_size: 96 or 128"),
        "{m}"
    );
    let r = run(
        "0.16.1",
        "world_size=6&tensor_model_parallel_size=4&micro_batch_size=1&train_iters=10",
    );
    let m = r
        .diags_for(Field::WorldSize)
        .next()
        .expect("error")
        .message
        .clone();
    assert!(
        m.contains("world size (6) is not divisible by total_model_size (total_model_size=4)"),
        "{m}"
    );
    assert!(
        m.contains("RuntimeError: world_size (6) is not divisible by 4"),
        "{m}"
    );
    assert!(m.contains("world_size 4 or 8"), "{m}");
    assert_eq!(r.value(Output::DpWorldSize), None);
    assert_eq!(raw(&r, Output::WorldSize).as_deref(), Some("6"));
}

/// Extremes never panic and never wrap.
#[test]
fn extremes() {
    let max = u64::MAX;
    for release in ["0.19.2", "0.16.1", "head"] {
        for q in [
            format!("world_size={max}&micro_batch_size={max}&train_samples={max}"),
            format!("world_size={max}&micro_batch_size={max}&eval_micro_batch_size=-{max}&eval_global_batch_size=-9223372036854775808&tensor_parallel_num_weight_shards={max}&expert_tensor_parallel_size={max}&expert_model_parallel_size={max}&num_experts={max}&context_parallel_size={max}&seq_length={max}&train_samples={max}"),
            "world_size=1&micro_batch_size=1&step_batch_size_schedule=0%3A1%201T%3A2&seq_length=1&train_samples=18446744073709551615".to_string(),
            format!("world_size=1&micro_batch_size=1&global_batch_size=9223372036854775807&train_samples={max}&seq_length={max}"),
            format!("world_size=1&micro_batch_size=1&global_batch_size=1000001&rampup_batch_size=1%201%201000000&train_samples={max}"),
            "world_size=1&micro_batch_size=1&step_batch_size_schedule=0%3A1%201T%3A2&train_samples=18446744073709551615".to_string(),
            "world_size=1&micro_batch_size=1&step_batch_size_schedule=0%3A1e40&train_iters=5".to_string(),
            "world_size=1&micro_batch_size=1&step_batch_size_schedule=%2C%2C&train_iters=5".to_string(),
            format!("world_size=8&micro_batch_size=1&train_iters={max}&lr_warmup_iters={max}"),
            format!("world_size=8&micro_batch_size=1&train_samples={max}&lr_warmup_fraction=0.999999"),
        ] {
            let _ = run(release, &q);
        }
    }
}

/// A very long schedule (a hand-made link) stays cheap: bisection, not a scan per iteration.
#[test]
fn long_schedule_is_cheap() {
    let entries: Vec<String> = (0..20_000)
        .map(|k| format!("{}:{}", k * 10, 8 + 8 * (k % 3)))
        .collect();
    let q = format!(
        "world_size=8&micro_batch_size=1&step_batch_size_schedule={}&train_samples=10000000",
        entries.join("%20")
    );
    let t = std::time::Instant::now();
    let r = run("head", &q);
    assert!(t.elapsed().as_secs() < 5);
    assert!(r.value(Output::TrainIters).is_some());
}

/// 0.19.2: the ramp-up is read and ignored (a warning saying what happens instead), the batch
/// is constant from sample 0 (measured: command megatron19-27, case rampup_samples).
#[test]
fn v0192_ignores_the_ramp_up() {
    let r = run(
        "0.19.2",
        "world_size=2&global_batch_size=32&micro_batch_size=8&rampup_batch_size=16%2016%2096&train_samples=1000&seq_length=128",
    );
    assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("31"));
    assert_eq!(raw(&r, Output::InitialGlobalBatchSize), None);
    assert!(r
        .diags_for(Field::RampupBatchSize)
        .any(|d| d.level == Level::Warning
            && d.message
                .contains("parses --rampup-batch-size and ignores it")
            && d.message.contains(
                "Instead, there is no ramp-up: every step trains the full global_batch_size from the first sample"
            )));
    assert!(!r.has_errors(), "{:?}", errors(&r));
    // the ramp-up values are none, explained by that warning, and need nothing
    let link = dpcalc::query::decode(
        "framework=megatron&version=0.19.2&world_size=2&global_batch_size=32&micro_batch_size=8&rampup_batch_size=16%2016%2096&train_samples=1000&seq_length=128",
    );
    let report = link.report();
    for o in [
        Output::InitialGlobalBatchSize,
        Output::InitialNumMicrobatches,
    ] {
        let missing = dpcalc::calc::guide::needs(Framework::Megatron, &link.inputs, &report, o);
        let missing = missing.expect("no value");
        assert_eq!(missing.keys(), "", "{}", o.name());
        assert_eq!(
            missing.text(Framework::Megatron),
            "none: see Batch-size ramp-up"
        );
    }
}

/// decrease_batch_size_if_needed: train_iters counts the configured batch, so the run trains
/// fewer samples than train_samples; the warning says how many (0.19.2 and 0.16.1 alike).
#[test]
fn decrease_warns_of_the_samples_not_trained() {
    for (release, q) in [
        ("0.19.2", "world_size=3&micro_batch_size=1&global_batch_size=32&decrease_batch_size_if_needed=true&eval_global_batch_size=30&train_samples=1000&seq_length=128"),
        ("0.16.1", "world_size=3&micro_batch_size=1&global_batch_size=32&decrease_batch_size_if_needed=true&train_samples=1000"),
    ] {
        let r = run(release, q);
        assert_eq!(raw(&r, Output::TrainIters).as_deref(), Some("31"), "{release}");
        assert_eq!(raw(&r, Output::GlobalBatchSize).as_deref(), Some("32"), "{release}");
        assert_eq!(
            raw(&r, Output::RunningGlobalBatchSize).as_deref(),
            Some("30"),
            "{release}"
        );
        assert!(
            r.diags_for(Field::DecreaseBatchSizeIfNeeded).any(|d| d.level == Level::Warning
                && d.message.contains("31 × 30 = 930 samples, 70 fewer than train_samples 1000")),
            "{release}: {:?}",
            r.diags
        );
    }
    // 0.19.2 without eval_global_batch_size: the eval check stops it first, and says what to give
    let r = run(
        "0.19.2",
        "world_size=3&micro_batch_size=1&global_batch_size=32&decrease_batch_size_if_needed=true&train_samples=1000&seq_length=128",
    );
    let m = errors(&r).join(" ");
    assert!(m.contains("eval_global_batch_size (32) must be divisible by eval_micro_batch_size (1) * data_parallel_size (3)"), "{m}");
    assert!(m.contains("give eval_global_batch_size"), "{m}");
}

/// 0.19.2 with a schedule: args.global_batch_size is mbs × dp, warmup steps follow the schedule;
/// a blank schedule is a schedule with no entry; no seq_length is refused.
#[test]
fn v0192_schedule() {
    let r = run(
        "0.19.2",
        "world_size=4&micro_batch_size=2&seq_length=1&step_batch_size_schedule=0%3A8%201k%3A16&train_iters=500&lr_warmup_iters=10",
    );
    assert_eq!(raw(&r, Output::GlobalBatchSize).as_deref(), Some("8"));
    assert_eq!(raw(&r, Output::LrWarmupSteps).as_deref(), Some("80"));
    assert_eq!(raw(&r, Output::WarmupSteps).as_deref(), Some("10"));
    let r = run(
        "0.19.2",
        "world_size=8&micro_batch_size=1&step_batch_size_schedule=%20&train_samples=1000&seq_length=128",
    );
    assert!(errors(&r)
        .iter()
        .any(|m| m.contains("schedule must have at least one entry")));
    let r = run(
        "0.19.2",
        "world_size=8&micro_batch_size=1&step_batch_size_schedule=0%3A8&train_samples=1000",
    );
    assert!(r.error_at(Field::SeqLength).is_some(), "{:?}", r.diags);
}

/// The 0.19.2 keys are noted, not used, under the other releases; `num_experts` is read by every
/// release (validate_args checks it against expert parallelism at each).
#[test]
fn new_keys_under_old_releases_are_noted() {
    for release in ["0.16.1", "head"] {
        let r = run(
            release,
            "world_size=8&micro_batch_size=1&eval_global_batch_size=12&num_experts=4&expert_model_parallel_size=2&train_iters=10",
        );
        assert!(!r.has_errors(), "{release}: {:?}", errors(&r));
        assert!(r
            .diags_for(Field::EvalGlobalBatchSize)
            .any(|d| d.level == Level::Note));
        assert!(r.diags_for(Field::NumExperts).next().is_none(), "{release}");
        let r = run(
            release,
            "world_size=8&micro_batch_size=1&num_experts=3&expert_model_parallel_size=2&train_iters=10",
        );
        assert!(
            errors(&r)
                .iter()
                .any(|e| e.contains("Number of experts should be a multiple")),
            "{release}: {:?}",
            errors(&r)
        );
    }
}

/// A typed `num_experts` wins over the preset's, also when it is unreadable: the error stays at
/// the field and no preset count replaces it. A preset's count that EP does not divide is refused
/// at the expert parallel size, naming the preset and the sizes that divide it.
#[test]
fn the_presets_experts_unless_typed() {
    let q = "model=Qwen%2FQwen3-30B-A3B&world_size=8&micro_batch_size=1&global_batch_size=32&train_iters=10&expert_model_parallel_size=8";
    for release in ["0.19.2", "0.16.1", "head"] {
        let r = run(release, q);
        assert!(!r.has_errors(), "{release}: {:?}", errors(&r));
        assert_eq!(
            raw(&r, Output::ExpertDataParallelSize).as_deref(),
            Some("1")
        );
        let r = run(release, &format!("{q}&num_experts=eight"));
        let at: Vec<&str> = r
            .diags_for(Field::NumExperts)
            .filter(|d| d.level == Level::Error)
            .map(|d| d.message.as_str())
            .collect();
        assert!(
            at.len() == 1 && at[0].contains("is not a number"),
            "{release}: {at:?}"
        );
        assert!(
            !errors(&r).iter().any(|e| e.contains("AssertionError")),
            "{release}: {:?}",
            errors(&r)
        );
        assert_eq!(raw(&r, Output::ExpertDataParallelSize), None, "{release}");
        let r = run(
            release,
            "model=Qwen%2FQwen3-30B-A3B&world_size=6&micro_batch_size=1&global_batch_size=24&train_iters=10&expert_model_parallel_size=3",
        );
        let at: Vec<&str> = r
            .diags_for(Field::ExpertModelParallelSize)
            .filter(|d| d.level == Level::Error)
            .map(|d| d.message.as_str())
            .collect();
        assert!(
            at.len() == 1
                && at[0].contains("Number of experts should be a multiple")
                && at[0].contains("Qwen/Qwen3-30B-A3B has 128 experts")
                && at[0].contains("nearest: 2 or 4"),
            "{release}: {at:?}"
        );
        assert!(r.diags_for(Field::NumExperts).next().is_none(), "{release}");
    }
}

/// A mixture-of-experts preset with expert parallelism, as a new user's link names it: no
/// refusal at any release, and Megatron's theoretical memory the same at 0.19.2 and 0.16.1, that
/// of megatron-core 0.19.2's report_theoretical_memory for it (command `megatron19-memory-moe`).
#[test]
fn a_moe_preset_with_expert_parallelism_computes_its_memory() {
    let q = "model=Qwen%2FQwen3-30B-A3B&world_size=8&seq_length=4096&global_batch_size=32&expert_model_parallel_size=8&use_distributed_optimizer=true&micro_batch_size=1&train_iters=10";
    let mut totals = Vec::new();
    for release in ["0.19.2", "0.16.1", "head"] {
        let r = query::decode(&format!("?framework=megatron&version={release}&{q}")).report();
        assert!(!r.has_errors(), "{release}: {:?}", errors(&r));
        assert_eq!(
            raw(&r, Output::ExpertDataParallelSize).as_deref(),
            Some("1")
        );
        totals.push((release, r.value(Output::TotalMemoryMb)));
    }
    assert_eq!(
        totals[0].1,
        Some(dpcalc::calc::Num::Float(88211.0537109375))
    );
    assert_eq!(totals[0].1, totals[1].1, "{totals:?}");
}

/// The expert grid sees the preset's experts too: with them, 0.19.2 reaches parallel_state, whose
/// `expert_tensor × expert_model × pipeline` must divide the world (megatron-core 0.19.2
/// `parallel_state.initialize_model_parallel`: `world_size (8) is not divisible by
/// expert_tensor_model_pipeline_parallel size (16)`); validate_args accepts both layouts.
#[test]
fn the_expert_grid_reads_the_presets_experts() {
    let q = "model=Qwen%2FQwen3-30B-A3B&world_size=8&micro_batch_size=1&global_batch_size=32&train_iters=10&expert_tensor_parallel_size=2";
    let r = run("0.19.2", &format!("{q}&expert_model_parallel_size=4"));
    assert!(!r.has_errors(), "{:?}", errors(&r));
    assert_eq!(
        raw(&r, Output::ExpertDataParallelSize).as_deref(),
        Some("1")
    );
    let r = run("0.19.2", &format!("{q}&expert_model_parallel_size=8"));
    assert_eq!(errors(&r).len(), 1, "{:?}", errors(&r));
    assert!(r.diags_for(Field::ExpertModelParallelSize).any(|d| {
        d.level == Level::Error
        && d.message.contains(
            "world_size (8) is not divisible by expert_tensor_model_pipeline_parallel size (16)"
        )
    }));
}
