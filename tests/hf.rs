//! dpcalc's Hugging Face Trainer module against the Trainer's own code: `tests/fixtures/hf.txt`
//! records what transformers 4.51.3, 4.52.4, 4.57.1 and 5.16.1 (for the 5.23 rules) with
//! accelerate 1.13.0 computed when run, and what 5.25.0 and 5.23.0 with accelerate 1.16.0
//! computed for the 5.25 rules and `train_sampling_strategy` (hf525-*: `BatchRebalanceSampler`
//! and the command line's `choices`) (accelerate's `BatchSamplerShard` length,
//! `Trainer.set_initial_training_values`, `get_total_train_batch_size`, `get_warmup_steps`,
//! `TrainerState.compute_steps`, `TrainingArguments` and `ParallelismConfig` validation), plus
//! the Trainer's own test vectors.

use crate::common;
use crate::common::report::{errors, messages};

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

/// Every oracle run of the Trainer (`tests/fixtures/hf.txt`): hf-1, the first run (values and
/// the errors the Trainer raised); hf-random, 62 seeded random cases through transformers 5.16.1's
/// `Trainer.set_initial_training_values`, `get_warmup_steps` and `TrainerState.compute_steps`
/// over accelerate 1.13.0's `BatchSamplerShard`; hf-third, the third, independent run, which
/// includes transformers 5.23.0 itself (sp 3 on 8 GPUs runs the Trainer's functions but is
/// refused by dpcalc: DeepSpeed cannot build those Ulysses groups; the values are still compared).
/// hf525-1: transformers 5.25.0 (accelerate 1.16.0) on the 33 hf-1 inputs and 70 sampling cases
/// (random, sequential, group_by_length, batch_rebalance); hf525-523: the batch_rebalance cases
/// under 5.23.0 (it has batch_rebalance since 5.17); hf525-cli: HfArgumentParser's `choices`.
/// Every value is compared with its Python type (see `tests/common/mod.rs`).
#[test]
fn matches_the_trainer_when_run() {
    common::run(&common::Oracle {
        file: "hf.txt",
        text: include_str!("fixtures/hf.txt"),
        framework: "hf",
        minimums: &[
            ("", 565, 3564),
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
            ("hf525-1", 103, 650),
            ("hf525-1 5.25", 103, 650),
            ("hf525-523 5.23", 33, 208),
            ("hf525-cli", 4, 0),
            ("hf525-cli 5.25", 2, 0),
            ("hf525-cli 5.23", 2, 0),
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

/// transformers' `tests/trainer/test_trainer.py` (`test_number_of_steps_in_training`,
/// `test_num_train_epochs_in_training`) and what `Trainer.set_initial_training_values` and
/// `get_warmup_steps` computed when run on these inputs.
#[test]
fn spec_vectors() {
    // test_number_of_steps_in_training: 64 samples, bs 8, 3 epochs → 24 steps on one GPU
    for rel in ["5.25", "5.23", "4.57", "4.52", "4.51"] {
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
    // Trainer.set_initial_training_values, run: drop_last with fewer rows than the batch
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

/// `train_sampling_strategy="batch_rebalance"` (5.17+, so both 5.25 and 5.23): one global batch
/// of per-device × GA × world_size rows per step, whatever tp/cp/sp are
/// (`BatchRebalanceSampler.effective_batch_size`, run: `tests/fixtures/hf.txt`, command hf525-1).
#[test]
fn batch_rebalance() {
    for rel in ["5.25", "5.23"] {
        let q = "world_size=4 num_samples=1000 per_device_train_batch_size=2 gradient_accumulation_steps=4 num_train_epochs=1 train_sampling_strategy=batch_rebalance";
        let r = run(rel, q);
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(32), "{rel}");
        assert_eq!(val(&r, Output::GlobalBatchSize), Some(32));
        // drop_last drops the tail global batch: 31 (random: 32)
        let r = run(rel, &format!("{q} dataloader_drop_last=true"));
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(31));
        // TP ranks get their own rows: E = 2 × 4 × 4 = 32, the Trainer logs 16
        let r = run(rel, &format!("{q} tp_size=2"));
        assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(16));
        assert_eq!(val(&r, Output::GlobalBatchSize), Some(32));
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(32));
        let warnings = messages(&r, Level::Warning);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("= 16") && w.contains("32 samples")),
            "{warnings:?}"
        );
        // accelerate 1.13 refuses it on more than one data process: a note with its words
        let notes = messages(&r, Level::Note);
        assert!(
            notes.iter().any(|n| n.contains("accelerate ≥ 1.14")
                && n.contains("You need to use `even_batches=False` when the batch sampler has no batch size.")),
            "{notes:?}"
        );
        // one process: no note
        let r = run(
            rel,
            "world_size=1 num_samples=999 per_device_train_batch_size=1 gradient_accumulation_steps=10 train_sampling_strategy=batch_rebalance",
        );
        assert!(!messages(&r, Level::Note)
            .iter()
            .any(|n| n.contains("even_batches")));
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(100));
        // SP: the adapter multiplies by sp_size
        let r = run(
            rel,
            &format!("{} sp_size=2", q.replace("world_size=4", "world_size=8")),
        );
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(32));
        assert_eq!(val(&r, Output::TotalTrainBatchSize), Some(32));
        // fewer rows than one global batch with drop_last: the Trainer's error
        let r = run(
            rel,
            "world_size=4 num_samples=20 per_device_train_batch_size=2 gradient_accumulation_steps=4 dataloader_drop_last=true train_sampling_strategy=batch_rebalance",
        );
        assert!(errors(&r).iter().any(|e| e.contains(
            "args.max_steps must be set to a positive value if dataloader does not have a length, was -1"
        ) && e.contains("global batch of 2 × 4 × world_size 4 = 32")));
        // the bare asserts: per-device 0, GA 0
        let r = run(
            rel,
            "world_size=4 num_samples=100 per_device_train_batch_size=0 train_sampling_strategy=batch_rebalance",
        );
        let d = r
            .diags_for(dpcalc::calc::Field::PerDeviceTrainBatchSize)
            .find(|d| d.level == Level::Error)
            .expect("the assert");
        let refusal = d.refusal.as_ref().unwrap();
        assert_eq!(refusal.says, "AssertionError");
        assert!(refusal
            .by
            .contains("assert effective_batch_size >= dp_size * grad_accum"));
        let r = run(
            rel,
            "world_size=4 num_samples=100 gradient_accumulation_steps=0 train_sampling_strategy=batch_rebalance",
        );
        let d = r
            .diags_for(dpcalc::calc::Field::GradientAccumulationSteps)
            .find(|d| d.level == Level::Error)
            .expect("the assert");
        assert!(d.message.contains("assert grad_accum >= 1"));
    }
    // only 5.23 (which stands for 5.14–5.16 too) says that 5.14–5.16 lack it
    let q = "world_size=1 num_samples=100 train_sampling_strategy=batch_rebalance";
    assert!(messages(&run("5.23", q), Level::Note)
        .iter()
        .any(|n| n.contains("5.14–5.16")));
    assert!(!messages(&run("5.25", q), Level::Note)
        .iter()
        .any(|n| n.contains("5.14–5.16")));
}

/// The other values, and releases without the key.
#[test]
fn train_sampling_strategy_values() {
    let q = "world_size=4 num_samples=1000 per_device_train_batch_size=2 gradient_accumulation_steps=4 num_train_epochs=1";
    for s in ["random", "sequential", "group_by_length"] {
        let r = run("5.25", &format!("{q} train_sampling_strategy={s}"));
        assert!(errors(&r).is_empty(), "{s}: {:?}", errors(&r));
        assert_eq!(val(&r, Output::StepsPerEpoch), Some(32), "{s}");
    }
    // the command line's choices (case-sensitive); the values shown are random's
    let r = run("5.25", &format!("{q} train_sampling_strategy=Random"));
    assert!(errors(&r).iter().any(|e| e.contains(
        "invalid choice: 'Random' (choose from 'random', 'sequential', 'group_by_length', 'batch_rebalance')"
    )));
    assert_eq!(val(&r, Output::StepsPerEpoch), Some(32));
    // transformers 4 has no such keyword
    for rel in ["4.57", "4.52", "4.51"] {
        let r = run(rel, &format!("{q} train_sampling_strategy=random"));
        assert!(errors(&r).iter().any(|e| e.contains(
            "TrainingArguments.__init__() got an unexpected keyword argument 'train_sampling_strategy'"
        )), "{rel}");
    }
    // an empty dataset: RandomSampler refuses it even with max_steps; sequential runs max_steps
    let r = run("5.25", "num_samples=0 max_steps=5");
    assert!(errors(&r).iter().any(
        |e| e.contains("num_samples should be a positive integer value, but got num_samples=0")
    ));
    let r = run(
        "5.25",
        "num_samples=0 max_steps=5 train_sampling_strategy=sequential",
    );
    assert!(errors(&r).is_empty(), "{:?}", errors(&r));
    assert_eq!(val(&r, Output::MaxSteps), Some(5));
}
