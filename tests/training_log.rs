//! A pasted training log (`src/calc/import/log.rs`): each format read from a real excerpt
//! (`tests/fixtures/logs/`, sources in its README), its measured speed applied as
//! `seconds_per_step` or `tokens_per_second_per_gpu`, and a log of another run than the link's
//! refused with a message instead of calibrating.

use dpcalc::calc::import::{self, detect_format, Format, Scope};
use dpcalc::calc::spec::TrainingLog;
use dpcalc::calc::{Field, Framework, Num, Output, RawInputs};
use dpcalc::query;

fn fixture(name: &str) -> String {
    crate::common::files::read(&format!("tests/fixtures/logs/{name}"))
}

fn link(q: &str) -> (Framework, RawInputs) {
    let l = query::decode(q);
    (l.framework, l.inputs)
}

/// Reads `file` for the link `q` as the page does (read, settle, merge): what was read, and
/// the inputs after it.
fn paste(q: &str, file: &str) -> (import::Imported, RawInputs) {
    let (fw, inputs) = link(q);
    let mut got = import::read(fw, None, &fixture(file));
    got.settle(&inputs);
    let merged = got.merged_into(&inputs);
    (got, merged)
}

#[test]
fn each_format_is_detected_in_its_real_excerpt() {
    for (file, kind) in [
        ("megatron_issue_756.txt", TrainingLog::ElapsedPerIteration),
        ("torchtitan_pr_1287.txt", TrainingLog::StepTps),
        ("hf_trainer.txt", TrainingLog::TrainMetrics),
        ("nanotron_issue_390.txt", TrainingLog::TokensPerSecPerGpu),
    ] {
        assert_eq!(detect_format(&fixture(file)), Format::Log(kind), "{file}");
    }
}

/// The figure each excerpt gives, as its lines print it: Megatron's median of 5361.6, 5470.7
/// and 5829.9 ms; torchtitan's median `tps` of steps 200–240 (5,856 5,593 5,868 5,869 5,864);
/// the Trainer's 225.8005 s over 200 steps; nanotron's `11.4K`.
#[test]
fn each_excerpt_gives_its_measured_speed() {
    for (q, file, field, want) in [
        (
            "?framework=megatron&global_batch_size=128&micro_batch_size=1&nodes=2&train_iters=100",
            "megatron_issue_756.txt",
            Field::SecondsPerStep,
            5.4707,
        ),
        (
            "?framework=torchtitan&steps=1000",
            "torchtitan_pr_1287.txt",
            Field::TokensPerSecondPerGpu,
            5864.0,
        ),
        (
            "?framework=hf&gpus_per_node=4&per_device_train_batch_size=1&max_steps=200",
            "hf_trainer.txt",
            Field::SecondsPerStep,
            225.8005 / 200.0,
        ),
        (
            "?framework=nanotron&dp=2&micro_batch_size=32&batch_accumulation_per_replica=1&train_steps=400000",
            "nanotron_issue_390.txt",
            Field::TokensPerSecondPerGpu,
            11400.0,
        ),
    ] {
        let (got, merged) = paste(q, file);
        assert_eq!(got.scope, Scope::Measured, "{file}");
        assert!(
            got.applicable() && got.errors.is_empty(),
            "{file}: {:?}",
            got.errors
        );
        let v: f64 = merged.get(field).parse().expect(file);
        assert!((v / want - 1.0).abs() < 1e-9, "{file}: {v} vs {want}");
        // the other measured field and a typed factor give way to the measurement
        for other in [
            Field::SecondsPerStep,
            Field::TokensPerSecondPerGpu,
            Field::CalibrationComputeFactor,
        ] {
            if other != field {
                assert!(merged.get(other).is_empty(), "{file}: {other:?}");
            }
        }
    }
}

/// A log whose global batch (or last step) is not the link's is another run: said, and
/// nothing applied.
#[test]
fn a_log_of_another_layout_says_so_instead_of_calibrating() {
    for (q, file, says) in [
        (
            "?framework=megatron&global_batch_size=256&micro_batch_size=1&nodes=2&train_iters=100",
            "megatron_issue_756.txt",
            "its global batch is 128, the link's 256",
        ),
        (
            "?framework=nanotron&dp=2&micro_batch_size=16&batch_accumulation_per_replica=1&train_steps=400000",
            "nanotron_issue_390.txt",
            "its global batch is 64, the link's 32",
        ),
        (
            "?framework=hf&gpus_per_node=8&per_device_train_batch_size=1&max_steps=200",
            "hf_trainer.txt",
            "the link's 8",
        ),
        (
            "?framework=torchtitan&steps=100",
            "torchtitan_pr_1287.txt",
            "step 240, beyond the link's 100 steps",
        ),
    ] {
        let (fw, inputs) = link(q);
        let (got, merged) = paste(q, file);
        assert!(!got.applicable(), "{file}");
        assert!(
            got.errors.iter().any(|e| e.contains(says)),
            "{file}: {:?}",
            got.errors
        );
        assert!(
            merged.get(Field::SecondsPerStep).is_empty()
                && merged.get(Field::TokensPerSecondPerGpu).is_empty(),
            "{file}"
        );
        assert!(got.summary().starts_with("Nothing was applied"), "{file}");
        assert_eq!(fw, got.framework);
        assert_eq!(inputs.get(Field::Nodes), merged.get(Field::Nodes));
    }
}

#[test]
fn another_frameworks_log_is_refused() {
    let (got, _) = paste("?framework=torchtitan&steps=1000", "megatron_issue_756.txt");
    assert!(!got.applicable());
    assert!(
        got.errors[0].contains("training log of Megatron-LM; the link is torchtitan's"),
        "{:?}",
        got.errors
    );
}

/// The pasted log calibrates the link: its compute factor is the one the measured speed fits.
#[test]
fn a_pasted_log_calibrates_the_step_time() {
    let q = "?framework=torchtitan&version=0.3.0&nodes=1&gpus_per_node=8&local_batch_size=1&global_batch_size=8&seq_len=8192&model=llama3/8B&gpu=h100-sxm&steps=1000";
    let (_, merged) = paste(q, "torchtitan_pr_1287.txt");
    let l = query::decode(q);
    let report = l.framework.compute(l.release().id, &merged);
    let k = report.value(Output::CalibrationComputeFactor);
    assert!(
        matches!(k, Some(Num::Float(x)) if x != 1.0),
        "{k:?}: {:?}",
        report.diags
    );
    let tps = report.value(Output::TokensPerSecondPerGpu).map(Num::to_f64);
    assert!(
        tps.is_some_and(|t| (t / 5864.0 - 1.0).abs() < 0.002),
        "{tps:?}"
    );
}

#[test]
fn every_excerpt_names_its_source() {
    let readme = fixture("README.md");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logs");
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name != "README.md" {
            assert!(
                readme.contains(&format!("`{name}`")),
                "{name} not in the README"
            );
        }
    }
}
