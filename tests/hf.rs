//! The Hugging Face Trainer: the spec's vectors (§2.4, the Trainer's own tests marked [T]), the
//! values recorded from running transformers 5.16.1 over accelerate 1.13.0 (`tests/hf_oracle.txt`),
//! and the boundaries of each rounding rule and refusal.
#![cfg(not(target_arch = "wasm32"))]

use dpcalc::calc::{Field, Level, Num, Output, Report};
use dpcalc::query;

fn run(q: &str) -> Report {
    query::decode(&format!("framework=hf&{q}")).report()
}

fn v(r: &Report, o: Output) -> Option<String> {
    r.value(o).map(Num::raw)
}

fn errors(r: &Report, f: Field) -> Vec<String> {
    r.diags_for(f)
        .filter(|d| d.level == Level::Error)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn oracle_fixture() {
    let text = include_str!("hf_oracle.txt");
    let mut n = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (q, want) = line.split_once(" | ").expect(line);
        let r = query::decode(q).report();
        for pair in want.split(' ') {
            let (k, val) = pair.split_once('=').expect(pair);
            if k == "error" {
                let f = Field::ALL.iter().copied().find(|f| f.key() == val).unwrap();
                assert!(!errors(&r, f).is_empty(), "{q}: no error at {val}");
                assert_eq!(v(&r, Output::MaxSteps), None, "{q}");
                continue;
            }
            let o = Output::from_name(k).expect(k);
            assert_eq!(v(&r, o).as_deref(), Some(val), "{q}: {k}");
        }
        n += 1;
    }
    assert!(n >= 60, "{n} cases");
}

#[test]
fn trainer_tests_number_of_steps() {
    // [T] test_number_of_steps_in_training: 64 samples, default batch 8, 3 epochs → 24
    let r = run("world_size=1&num_samples=64");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("24"));
    let r = run("world_size=1&num_samples=64&num_train_epochs=1.5");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("12"));
    let r = run("world_size=1&num_samples=64&max_steps=10");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("10"));
    // [T] test_num_train_epochs_in_training: 64 rows, per-device 16, GA 5 → 1 step per epoch
    for q in ["max_steps=3&", ""] {
        let r = run(&format!("{q}world_size=1&num_samples=64&per_device_train_batch_size=16&gradient_accumulation_steps=5"));
        assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("1"));
        assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("3"), "{q}");
    }
}

#[test]
fn spec_vectors() {
    let base = "per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&num_train_epochs=1";
    let r = run(&format!("world_size=4&{base}"));
    assert_eq!(v(&r, Output::TotalTrainBatchSize).as_deref(), Some("32"));
    assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("32"));
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("32"));
    let r = run(&format!("world_size=4&tp_size=2&{base}"));
    assert_eq!(v(&r, Output::DpWorldSize).as_deref(), Some("2"));
    assert_eq!(v(&r, Output::TotalTrainBatchSize).as_deref(), Some("16"));
    assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("63"));
    // N=1001, mbs 4, GA 3, world 8, E=2 → L = 32, nupe 11 (4.51: 10), max_steps 22 (4.51: 20)
    let q = "world_size=8&per_device_train_batch_size=4&gradient_accumulation_steps=3&num_samples=1001&num_train_epochs=2";
    let r = run(q);
    assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("11"));
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("22"));
    let r = run(&format!("version=4.51&{q}"));
    assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("10"));
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("20"));
    // tp 2, cp 2 on 8, E 1.5 → total 16, nupe 63, max_steps ceil(94.5) = 95
    let r = run("world_size=8&tp_size=2&cp_size=2&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&num_train_epochs=1.5");
    assert_eq!(v(&r, Output::TotalTrainBatchSize).as_deref(), Some("16"));
    assert_eq!(v(&r, Output::StepsPerEpoch).as_deref(), Some("63"));
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("95"));
    // warmup ratio 0.1 of 125 → 13 (v4 warmup_ratio, v5 warmup_steps below 1); eval 0.25 → 32
    let steps125 = "world_size=1&per_device_train_batch_size=8&num_samples=1000&num_train_epochs=1";
    let r = run(&format!("{steps125}&warmup_steps=0.1&eval_steps=0.25"));
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("125"));
    assert_eq!(v(&r, Output::WarmupSteps).as_deref(), Some("13"));
    assert_eq!(v(&r, Output::EvalSteps).as_deref(), Some("32"));
    let r = run(&format!("version=4.57&{steps125}&warmup_ratio=0.1"));
    assert_eq!(v(&r, Output::WarmupSteps).as_deref(), Some("13"));
}

#[test]
fn the_logged_total_by_release() {
    // 16 GPUs, TP 2, per-device 4, GA 1 (DeepSpeed issue #7298): logged 64 up to 4.52, 32 after
    let q = "world_size=16&tp_size=2&per_device_train_batch_size=4&num_samples=1000";
    for (rel, total) in [
        ("4.51", "64"),
        ("4.52", "64"),
        ("4.57", "32"),
        ("5.23", "32"),
    ] {
        let r = run(&format!("version={rel}&{q}"));
        assert_eq!(
            v(&r, Output::TotalTrainBatchSize).as_deref(),
            Some(total),
            "{rel}"
        );
        assert_eq!(
            v(&r, Output::GlobalBatchSize).as_deref(),
            Some("32"),
            "{rel}"
        );
        let warned = r
            .diags
            .iter()
            .any(|d| d.level == Level::Warning && d.message.contains("logs"));
        assert_eq!(warned, total != "32", "{rel}");
    }
    // CP counts from 5.14 only
    let q = "world_size=8&cp_size=2&per_device_train_batch_size=1&num_samples=100";
    assert_eq!(
        v(
            &run(&format!("version=4.57&{q}")),
            Output::TotalTrainBatchSize
        )
        .as_deref(),
        Some("8")
    );
    assert_eq!(
        v(&run(q), Output::TotalTrainBatchSize).as_deref(),
        Some("4")
    );
}

#[test]
fn sharding_boundaries() {
    // 64 batches over 8 ranks divide; 65 pad to 9 each (even_batches); with drop_last 8
    let at =
        |n: u64, drop: bool| {
            let q =
                format!(
            "world_size=8&per_device_train_batch_size=1&num_samples={n}&num_train_epochs=1{}",
            if drop { "&dataloader_drop_last=true" } else { "" }
        );
            v(&run(&q), Output::StepsPerEpoch)
        };
    assert_eq!(at(64, false).as_deref(), Some("8"));
    assert_eq!(at(65, false).as_deref(), Some("9"));
    assert_eq!(at(65, true).as_deref(), Some("8"));
    // steps per epoch: GA 4 over 9 batches is 3 (ceil) from 4.52, 2 (floor) in 4.51
    let q = "world_size=1&per_device_train_batch_size=1&gradient_accumulation_steps=4&num_samples=9&num_train_epochs=1";
    assert_eq!(v(&run(q), Output::StepsPerEpoch).as_deref(), Some("3"));
    assert_eq!(
        v(&run(&format!("version=4.52&{q}")), Output::StepsPerEpoch).as_deref(),
        Some("3")
    );
    assert_eq!(
        v(&run(&format!("version=4.51&{q}")), Output::StepsPerEpoch).as_deref(),
        Some("2")
    );
    // fewer batches than GA: still one step per epoch
    let q = "world_size=1&per_device_train_batch_size=1&gradient_accumulation_steps=8&num_samples=3&num_train_epochs=2";
    assert_eq!(
        v(&run(&format!("version=4.51&{q}")), Output::MaxSteps).as_deref(),
        Some("2")
    );
}

#[test]
fn refusals_quote_the_framework() {
    // the empty dataloader (spec §0.1 item 12)
    let r =
        run("world_size=1&per_device_train_batch_size=8&num_samples=5&dataloader_drop_last=true");
    assert!(errors(&r, Field::NumSamples)[0].contains("args.max_steps must be set to a positive value if dataloader does not have a length, was -1"));
    let r = run("world_size=1&per_device_train_batch_size=8&num_samples=5&dataloader_drop_last=true&max_steps=7");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("7"));
    // accelerate's size check, with the nearest valid sizes
    let r = run("world_size=6&tp_size=4&num_samples=100");
    let e = &errors(&r, Field::WorldSize)[0];
    assert!(
        e.contains("ParallelismConfig total_size (4) does not match num_processes (6)"),
        "{e}"
    );
    assert!(e.contains("Nearest valid: world_size 4 or 8"), "{e}");
    let r = run("world_size=8&cp_size=2&sp_size=2");
    assert!(errors(&r, Field::SpSize)[0].contains("are mutually exclusive"));
    let r = run("tp_size=0");
    assert!(errors(&r, Field::TpSize)[0].contains("tp_size must be at least 1, but got 0"));
    let r = run("num_samples=100&eval_steps=2.5");
    assert!(errors(&r, Field::EvalSteps)[0]
        .contains("--eval_steps must be an integer if bigger than 1: 2.5"));
    let r = run("num_samples=100&warmup_ratio=0.1");
    assert!(
        errors(&r, Field::WarmupRatio)[0].contains("unexpected keyword argument 'warmup_ratio'")
    );
    let r = run("version=4.57&num_samples=100&warmup_steps=0.5");
    assert!(!errors(&r, Field::WarmupSteps).is_empty());
    // -1 is the Trainer's "unset"; 0 is not
    let r = run("world_size=1&num_samples=64&max_steps=-1");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("24"));
    let r = run("world_size=1&num_samples=64&max_steps=0");
    assert_eq!(v(&r, Output::MaxSteps).as_deref(), Some("0"));
    assert!(r
        .diags_for(Field::MaxSteps)
        .any(|d| d.level == Level::Warning));
}

#[test]
fn huge_values_never_wrap() {
    let max = u64::MAX;
    let r = run(&format!("world_size={max}&per_device_train_batch_size={max}&gradient_accumulation_steps={max}&num_samples={max}"));
    assert_eq!(v(&r, Output::GlobalBatchSize), None);
    assert!(r.has_errors());
    let r = run("world_size=1&num_samples=100&save_steps=1e300&warmup_steps=1e300");
    assert_eq!(v(&r, Output::SaveSteps), None);
    assert_eq!(v(&r, Output::WarmupSteps), None);
    assert!(!errors(&r, Field::SaveSteps).is_empty() && !errors(&r, Field::WarmupSteps).is_empty());
}
