//! dpcalc against DeepSpeed 0.19.8's own code: `tests/fixtures/deepspeed.txt` records what
//! `DeepSpeedConfig` (world size, `_set_batch_related_parameters`, `_batch_assertion`),
//! `DeepSpeedDataLoader.__len__` and `is_gradient_accumulation_boundary` gave when run
//! (the fixture's `deepspeed-1` command); every value and every refusal must match exactly. Also
//! `_set_batch_related_parameters`' table run on its own and DeepSpeed's own unit-test tuples
//! (`tests/unit/runtime/test_ds_config_dict.py::TestBatchConfig`).

use crate::common;
use crate::common::report::{errors, raw, report_of};

use dpcalc::calc::{Field, Level, Output};

#[test]
fn matches_deepspeed_when_run() {
    // On a refusal the record lists train_batch_size, train_micro_batch_size_per_gpu,
    // gradient_accumulation_steps and max_steps as none: DeepSpeed stops, dpcalc shows none.
    common::run(&common::Oracle {
        file: "deepspeed.txt",
        text: include_str!("fixtures/deepspeed.txt"),
        framework: "deepspeed",
        minimums: &[("", 98, 424)],
        stop_marks: &["AssertionError", "ZeroDivisionError"],
        known: &[],
    });
}

/// `(train, micro, ga)` as dpcalc derives them.
fn triple(q: &str) -> (Option<String>, Option<String>, Option<String>) {
    let r = report_of(&format!("framework=deepspeed&{q}"));
    (
        raw(&r, Output::TrainBatchSize),
        raw(&r, Output::TrainMicroBatchSizePerGpu),
        raw(&r, Output::GradientAccumulationSteps),
    )
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn error_text(q: &str) -> Vec<String> {
    let r = report_of(&format!("framework=deepspeed&{q}"));
    errors(&r)
}

#[test]
fn spec_section_3_vectors() {
    // DeepSpeed's tests/unit/runtime/test_ds_config_dict.py::TestBatchConfig, W = 2
    assert_eq!(
        triple("world_size=2&train_batch_size=32&train_micro_batch_size_per_gpu=16&gradient_accumulation_steps=1"),
        (s("32"), s("16"), s("1"))
    );
    assert_eq!(
        triple("world_size=2&train_batch_size=32&train_micro_batch_size_per_gpu=8&gradient_accumulation_steps=2"),
        (s("32"), s("8"), s("2"))
    );
    let e = error_text("world_size=2&train_batch_size=33&train_micro_batch_size_per_gpu=17&gradient_accumulation_steps=2");
    assert!(e.iter().any(|m| m.contains("Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 33 != 17 * 2 * 2")), "{e:?}");
    let e = error_text("world_size=2&train_batch_size=32&train_micro_batch_size_per_gpu=18&gradient_accumulation_steps=1");
    assert!(e.iter().any(|m| m.contains("32 != 18 * 1 * 2")), "{e:?}");
    // run: the other rows
    assert_eq!(
        triple("world_size=2&train_batch_size=32&train_micro_batch_size_per_gpu=8"),
        (s("32"), s("8"), s("2"))
    );
    assert_eq!(
        triple("world_size=2&train_batch_size=32&gradient_accumulation_steps=2"),
        (s("32"), s("8"), s("2"))
    );
    assert_eq!(
        triple("world_size=2&train_micro_batch_size_per_gpu=8&gradient_accumulation_steps=2"),
        (s("32"), s("8"), s("2"))
    );
    assert_eq!(
        triple("world_size=2&train_batch_size=32"),
        (s("32"), s("16"), s("1"))
    );
    assert_eq!(
        triple("world_size=2&train_micro_batch_size_per_gpu=16"),
        (s("32"), s("16"), s("1"))
    );
    let e = error_text("world_size=2&gradient_accumulation_steps=2");
    assert!(
        e.iter().any(|m| m.contains(
            "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
        )),
        "{e:?}"
    );
    assert_eq!(
        triple("world_size=8&train_batch_size=64&train_micro_batch_size_per_gpu=2"),
        (s("64"), s("2"), s("4"))
    );
    let e = error_text("world_size=8&train_batch_size=60&train_micro_batch_size_per_gpu=2");
    let m = e
        .iter()
        .find(|m| m.contains("world_size 60 != 2 * 3 * 8"))
        .unwrap_or_else(|| panic!("{e:?}"));
    // the fix: the nearest multiples of micro × world_size
    assert!(
        m.contains("Nearest valid: train_batch_size 48 or 64"),
        "{m}"
    );
}

#[test]
fn fractional_world_size_under_ulysses() {
    let r = report_of("framework=deepspeed&world_size=8&sequence_parallel_size=3&train_batch_size=32&train_micro_batch_size_per_gpu=2");
    assert_eq!(
        raw(&r, Output::BatchCheckWorldSize),
        s("2.6666666666666665")
    );
    assert_eq!(raw(&r, Output::GradientAccumulationSteps), s("6.0"));
    // the Ulysses groups cannot be built: exact text of initialize_sequence_parallel
    assert!(errors(&r).iter().any(|m| m
        .contains("RuntimeError: world_size (8) is not divisible by sequence_parallel_size 3)")));
    let e = error_text("world_size=7&sequence_parallel_size=3&train_batch_size=100");
    assert!(
        e.iter()
            .any(|m| m.contains("100 != 42.0 * 1 * 2.3333333333333335")),
        "{e:?}"
    );
    // divisible: still a float world size, integer replicas
    let r = report_of("framework=deepspeed&world_size=8&sequence_parallel_size=2&train_batch_size=32&train_micro_batch_size_per_gpu=4");
    assert_eq!(raw(&r, Output::BatchCheckWorldSize), s("4.0"));
    assert_eq!(raw(&r, Output::GradientAccumulationSteps), s("2.0"));
    assert_eq!(raw(&r, Output::DpWorldSize), s("4"));
    assert!(errors(&r).is_empty(), "{:?}", errors(&r));
}

#[test]
fn autotp_counts_the_batch_per_tp_rank() {
    let r = report_of("framework=deepspeed&world_size=8&autotp_size=2&train_micro_batch_size_per_gpu=4&gradient_accumulation_steps=2&num_samples=1000");
    assert_eq!(raw(&r, Output::TrainBatchSize), s("64"));
    assert_eq!(raw(&r, Output::BatchCheckWorldSize), s("8"));
    assert_eq!(raw(&r, Output::DpWorldSize), s("4"));
    // 4 × 2 × 4 samples per optimizer step, independently: the TP pair shares its samples
    assert_eq!(raw(&r, Output::GlobalBatchSize), s("32"));
    // ceil(ceil(1000/4)/4) = 63 micro batches; 63 // 2 = 31 steps
    assert_eq!(raw(&r, Output::MicroBatchesPerEpoch), s("63"));
    assert_eq!(raw(&r, Output::MaxSteps), s("31"));
    assert!(r
        .diags_for(Field::AutotpSize)
        .any(|d| d.level == Level::Warning && d.message.contains("per TP rank")));
    let e = error_text("world_size=6&autotp_size=4&train_micro_batch_size_per_gpu=1");
    assert!(
        e.iter()
            .any(|m| m.contains("autotp_size 4 does not divide world_size 6")),
        "{e:?}"
    );
}

#[test]
fn steps_carry_across_epochs_and_need_whole_epochs() {
    // 100 rows, dp 4 → 25 per rank → ceil(25/2) = 13 micro batches; 3 epochs → 39 // 3 = 13 steps
    let r = report_of("framework=deepspeed&world_size=4&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=3&num_samples=100&num_epochs=3");
    assert_eq!(raw(&r, Output::MicroBatchesPerEpoch), s("13"));
    assert_eq!(raw(&r, Output::MaxSteps), s("13"));
    // 13 is not a multiple of 3: no single per-epoch count
    assert_eq!(raw(&r, Output::StepsPerEpoch), None);
    let r = report_of("framework=deepspeed&world_size=4&train_micro_batch_size_per_gpu=2&num_samples=100&num_epochs=1.5");
    assert_eq!(
        r.diags_for(Field::NumEpochs)
            .filter(|d| d.level == Level::Error)
            .count(),
        1
    );
    assert_eq!(raw(&r, Output::MaxSteps), None);
    // without rows: a hint, no steps
    let r = report_of("framework=deepspeed&world_size=4&train_micro_batch_size_per_gpu=2");
    assert_eq!(raw(&r, Output::MaxSteps), None);
    assert!(r
        .diags_for(Field::NumSamples)
        .any(|d| d.level == Level::Hint));
}

#[test]
fn zero_and_fixes() {
    let e = error_text("world_size=8&train_batch_size=32&train_micro_batch_size_per_gpu=8");
    assert!(
        e.iter().any(
            |m| m.contains("Gradient accumulation steps: 0 has to be greater than 0")
                && m.contains("at least train_micro_batch_size_per_gpu × world_size = 8 × 8 = 64")
        ),
        "{e:?}"
    );
    let e = error_text("world_size=4&train_batch_size=32&train_micro_batch_size_per_gpu=0");
    assert!(
        e.iter()
            .any(|m| m.contains("ZeroDivisionError: integer division or modulo by zero")),
        "{e:?}"
    );
    let e = error_text("world_size=2&mpu_data_parallel_world_size=0&train_batch_size=4");
    assert_eq!(e.len(), 1, "{e:?}");
    // an empty form: a hint, no error
    assert!(error_text("").is_empty());
}

/// A refusal is data: DeepSpeed's words verbatim (with the `AssertionError: ` Python prints, as
/// the oracle recorded them), the field, and dpcalc's fix.
#[test]
fn a_refusal_is_data() {
    let r = report_of(
        "framework=deepspeed&world_size=2&train_batch_size=33&train_micro_batch_size_per_gpu=17&gradient_accumulation_steps=2",
    );
    let d = r
        .diags_for(Field::TrainBatchSize)
        .find(|d| d.level == Level::Error)
        .expect("an error at train_batch_size");
    let refusal = d.refusal.as_ref().expect("the error is a refusal");
    assert_eq!(
        refusal.says,
        "AssertionError: Check batch related parameters. train_batch_size is not equal to \
         micro_batch_per_gpu * gradient_acc_step * world_size 33 != 17 * 2 * 2"
    );
    assert_eq!(refusal.by, "DeepSpeed stops");
    assert!(
        refusal.fix.starts_with("Nearest valid: "),
        "{}",
        refusal.fix
    );
    assert_eq!(d.message, refusal.message());
    // no local rendering is left: every DeepSpeed refusal carries its data
    for q in [
        "framework=deepspeed&world_size=8&gradient_accumulation_steps=2",
        "framework=deepspeed&world_size=8&train_batch_size=8&train_micro_batch_size_per_gpu=0",
        "framework=deepspeed&world_size=8&sequence_parallel_size=0&train_batch_size=8",
        "framework=deepspeed&world_size=8&train_batch_size=4&gradient_accumulation_steps=1",
    ] {
        let r = report_of(q);
        let e: Vec<_> = r.diags.iter().filter(|d| d.level == Level::Error).collect();
        assert!(!e.is_empty(), "{q}");
        for d in e {
            let refusal = d
                .refusal
                .as_ref()
                .unwrap_or_else(|| panic!("{q}: {}", d.message));
            assert!(!refusal.says.is_empty() && !refusal.fix.is_empty(), "{q}");
            assert_eq!(d.message, refusal.message());
        }
    }
}
