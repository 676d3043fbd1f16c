//! dpcalc's Hugging Face Trainer module against the Trainer's own code: `tests/fixtures/hf.txt`
//! records what transformers 4.51.3, 4.52.4, 4.57.1 and 5.16.1 (for the 5.23 rules) with
//! accelerate 1.13.0 computed when run (accelerate's `BatchSamplerShard` length,
//! `Trainer.set_initial_training_values`, `get_total_train_batch_size`, `get_warmup_steps`,
//! `TrainerState.compute_steps`, `TrainingArguments` and `ParallelismConfig` validation), plus
//! the spec's §2.4 vectors.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use dpcalc::calc::{Framework, Level, Num, Output, Report};
use dpcalc::query;

fn run(release: &str, inputs: &str) -> Report {
    let q = format!(
        "framework=hf&version={release}&{}",
        inputs.split_whitespace().collect::<Vec<_>>().join("&")
    );
    let link = query::decode(&q);
    assert_eq!(link.framework, Framework::Hf, "{q}");
    assert!(link.notices.is_empty(), "{q}: {:?}", link.notices);
    assert_eq!(link.release().id, release, "{q}");
    link.report()
}

fn errors(r: &Report) -> Vec<String> {
    r.diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| d.message.clone())
        .collect()
}

/// Every oracle run of the Trainer (`tests/fixtures/hf.txt`): hf-1, the first run (values and
/// the errors the Trainer raised); hf-random, 62 seeded random cases through transformers 5.16.1's
/// `Trainer.set_initial_training_values`, `get_warmup_steps` and `TrainerState.compute_steps`
/// over accelerate 1.13.0's `BatchSamplerShard`; hf-third, the third, independent run, which
/// includes transformers 5.23.0 itself (sp 3 on 8 GPUs runs the Trainer's functions but is
/// refused by dpcalc: DeepSpeed cannot build those Ulysses groups; the values are still compared).
/// Every value is compared with its Python type (see `tests/common/mod.rs`).
#[test]
fn matches_the_trainer_when_run() {
    common::run(&common::Oracle {
        file: "hf.txt",
        text: include_str!("fixtures/hf.txt"),
        framework: "hf",
        minimums: &[
            ("", 425, 2706),
            ("hf-1", 130, 713),
            ("hf-1 5.23", 33, 187),
            ("hf-1 4.57", 33, 170),
            ("hf-1 4.52", 32, 178),
            ("hf-1 4.51", 32, 178),
            ("hf-random", 62, 362),
            ("hf-third", 233, 1631),
            ("hf-third 5.23", 64, 448),
            ("hf-third 4.57", 59, 413),
            ("hf-third 4.52", 55, 385),
            ("hf-third 4.51", 55, 385),
        ],
        stop_marks: &[],
        // dpcalc prints the interval the Trainer keeps as given (`eval_steps=1.0`, and
        // `save_steps=1` read as a float) as the int 1; Python printed 1.0. (hf-third wrote these
        // as 1 and said so in its header; the converter restores 1.0.)
        // The first run passed save_steps "1" as a float (1.0 stays a float: __post_init__ only
        // int()s values above 1); the third run passed logging_steps=1 as an int and got 1.
        // dpcalc follows the literal as written (the export writes `save_steps=1`, an int).
        known: &[
            "hf.txt:65 save_steps: int/float: Python float:1.0, dpcalc 1",
            "hf.txt:97 save_steps: int/float: Python float:1.0, dpcalc 1",
            "hf.txt:130 save_steps: int/float: Python float:1.0, dpcalc 1",
            "hf.txt:163 save_steps: int/float: Python float:1.0, dpcalc 1",
        ],
    });
}

fn val(r: &Report, o: Output) -> Option<i128> {
    r.value(o).map(|n| match n {
        Num::Int(i) => i,
        Num::Float(f) => panic!("{o:?} is a float {f}"),
    })
}

/// batch_math.md §2.4.
#[test]
fn spec_vectors() {
    // test_number_of_steps_in_training: 64 samples, bs 8, 3 epochs → 24 steps on one GPU
    for rel in ["5.23", "4.57", "4.52", "4.51"] {
        let r = run(rel, "world_size=1 num_samples=64");
        assert_eq!(val(&r, Output::MaxSteps), Some(24), "{rel}");
        let r = run(rel, "world_size=1 num_samples=64 num_train_epochs=1.5");
        assert_eq!(val(&r, Output::MaxSteps), Some(12), "{rel}");
        let r = run(rel, "world_size=1 num_samples=64 max_steps=10");
        assert_eq!(val(&r, Output::MaxSteps), Some(10), "{rel}");
        // test_num_train_epochs_in_training: L = 4, GA 5 → nupe 1 → 3 steps
        let q = "world_size=1 num_samples=64 per_device_train_batch_size=16 gradient_accumulation_steps=5";
        assert_eq!(val(&run(rel, q), Output::MaxSteps), Some(3), "{rel}");
        assert_eq!(
            val(&run(rel, &format!("{q} max_steps=3")), Output::MaxSteps),
            Some(3)
        );
    }
    let q = "num_samples=1000 per_device_train_batch_size=2 gradient_accumulation_steps=4 world_size=4 num_train_epochs=1";
    let r = run("5.23", q);
    assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(32));
    assert_eq!(val(&r, Output::StepsPerEpoch), Some(32));
    assert_eq!(val(&r, Output::MaxSteps), Some(32));
    let r = run("5.23", &format!("{q} tp_size=2"));
    assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(16));
    assert_eq!(val(&r, Output::StepsPerEpoch), Some(63));
    // N=1001, mbs 4, GA 3, world 8, E=2 → nupe 11 (4.51: 10), max_steps 22
    let q = "num_samples=1001 per_device_train_batch_size=4 gradient_accumulation_steps=3 world_size=8 num_train_epochs=2";
    assert_eq!(val(&run("5.23", q), Output::StepsPerEpoch), Some(11));
    assert_eq!(val(&run("5.23", q), Output::MaxSteps), Some(22));
    assert_eq!(val(&run("4.51", q), Output::StepsPerEpoch), Some(10));
    // world 8, tp 2, cp 2, E=1.5 → total 16, nupe 63, max_steps 95
    let q = "num_samples=1000 per_device_train_batch_size=2 gradient_accumulation_steps=4 world_size=8 tp_size=2 cp_size=2 num_train_epochs=1.5";
    let r = run("5.23", q);
    assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(16));
    assert_eq!(val(&r, Output::StepsPerEpoch), Some(63));
    assert_eq!(val(&r, Output::MaxSteps), Some(95));
    // warmup ratio 0.1 of 125 steps → 13 (v4 and v5); eval ratio 0.25 → 32
    let q = "num_samples=1000 per_device_train_batch_size=2 gradient_accumulation_steps=4 world_size=4 max_steps=125";
    let r = run("5.23", &format!("{q} warmup_steps=0.1 eval_steps=0.25"));
    assert_eq!(val(&r, Output::WarmupSteps), Some(13));
    assert_eq!(val(&r, Output::EvalSteps), Some(32));
    let r = run("4.57", &format!("{q} warmup_ratio=0.1"));
    assert_eq!(val(&r, Output::WarmupSteps), Some(13));
    // §0.1 item 12: drop_last with fewer rows than the batch
    let r = run("5.23", "num_samples=5 dataloader_drop_last=true");
    assert!(errors(&r).iter().any(|e| e.contains(
        "args.max_steps must be set to a positive value if dataloader does not have a length, was -1"
    )));
}

#[test]
fn refusals_name_the_field_and_the_fix() {
    let r = run("5.23", "world_size=6 tp_size=4 num_samples=100");
    let at: Vec<_> = r
        .diags_for(dpcalc::calc::Field::WorldSize)
        .filter(|d| d.level == Level::Error)
        .collect();
    assert_eq!(at.len(), 1);
    assert!(at[0]
        .message
        .contains("ParallelismConfig total_size (4) does not match num_processes (6)"));
    assert!(
        at[0].message.contains("Nearest valid: world_size 4 or 8"),
        "{}",
        at[0].message
    );
    // other values still compute
    assert_eq!(val(&r, Output::WorldSize), Some(6));
    let r = run("5.23", "cp_size=2 sp_size=2");
    assert!(r
        .diags_for(dpcalc::calc::Field::CpSize)
        .any(|d| d.level == Level::Error
            && d.message.contains(
                "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive"
            )));
    // the logged total differs from the real batch in 4.52 with TP: a warning
    let r = run("4.52", "tp_size=2 num_samples=100");
    assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(64));
    assert_eq!(val(&r, Output::GlobalBatchSize), Some(32));
    assert!(r
        .diags
        .iter()
        .any(|d| d.level == Level::Warning && d.message.contains("= 64")));
    // negative warmup quotes the Trainer
    let r = run("5.23", "warmup_steps=-1");
    assert!(errors(&r)
        .iter()
        .any(|e| e.contains("Got warmup_steps = -1.0, Expected value warmup_steps >= 0")));
    // tokens per step
    let r = run("5.23", "max_length=2048");
    assert_eq!(val(&r, Output::TokensPerStep), Some(64 * 2048));
}

/// A refusal is data: the Trainer's words verbatim, the field, and dpcalc's fix.
#[test]
fn a_refusal_is_data() {
    let r = run("5.23", "logging_steps=0");
    let d = r
        .diags_for(dpcalc::calc::Field::LoggingSteps)
        .find(|d| d.level == Level::Error)
        .expect("an error at logging_steps");
    let refusal = d.refusal.as_ref().expect("the error is a refusal");
    assert_eq!(
        refusal.says,
        "logging strategy IntervalStrategy.STEPS requires non-zero --logging_steps"
    );
    assert_eq!(refusal.by, "TrainingArguments refuses");
    assert_eq!(refusal.fix, "Use a positive interval (default 500).");
    assert_eq!(
        d.message,
        "TrainingArguments refuses: \u{201c}logging strategy IntervalStrategy.STEPS requires \
         non-zero --logging_steps\u{201d}. Use a positive interval (default 500)."
    );
    // the negative warmup the parser reports becomes the Trainer's refusal too
    let r = run("5.23", "warmup_steps=-1");
    let d = r
        .diags_for(dpcalc::calc::Field::WarmupSteps)
        .find(|d| d.level == Level::Error)
        .unwrap();
    let refusal = d.refusal.as_ref().unwrap();
    assert_eq!(
        refusal.says,
        "Got warmup_steps = -1.0, Expected value warmup_steps >= 0"
    );
    assert!(
        refusal.fix.contains("cannot be negative"),
        "{}",
        refusal.fix
    );
}
