//! Export then import gives back the same inputs, for every framework: each link of the oracle
//! fixtures (`tests/fixtures/<fw>.txt`) and of `tests/links.txt` is decoded, computed, exported
//! (`calc::export::export`) and imported again, both detected (`import::read`) and forced as its
//! framework (`import::import_as`).
//!
//! What comes back, field by field:
//! - every config key the export wrote (the given keys and the ones it derives, e.g. DeepSpeed's
//!   gradient_accumulation_steps or nanotron's dp) comes back with the same value; a key it left
//!   out (a value with an error) is not compared;
//! - the cluster is no config key: it is carried by the launcher line, `# launch: torchrun
//!   --nnodes N --nproc-per-node G …` in a comment (YAML, TOML, Python), the command itself
//!   (Megatron); world_size comes back as that nodes × GPUs shape, so the world size is compared;
//!   DeepSpeed's JSON has no comments: its three batch keys fix the world (train = micro × GA ×
//!   world, times sequence_parallel_size), compared where the import derives it; where they do
//!   not, the import says so;
//! - the training rows (num_samples, dpcalc's input) are carried by dpcalc's comment
//!   `# num_samples N: training rows, …`, except in DeepSpeed's JSON;
//! - the GPU, its memory, the MFU and the measured throughput are not exported, so not compared;
//! - Megatron's store_true flags that are false are absent from the command, and come back
//!   empty (the same: false is their default);
//! - with nothing left out and the cluster carried, the imported inputs compute the same values
//!   for every output (and, with nothing derived, encode to the same link).

use crate::common::roundtrip::check;
use crate::common::{self, files};

use dpcalc::calc::export::export;
use dpcalc::calc::import::{import_as, read};
use dpcalc::calc::{Field, Framework, Output, RawInputs};
use dpcalc::query;

fn links() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for fw in Framework::ALL {
        let file = format!("tests/fixtures/{}.txt", fw.id());
        let (_, records) = common::parse(&files::read(&file));
        for r in records {
            out.push((format!("{file}:{}", r.line), r.link));
        }
    }
    for (line, q) in files::links() {
        out.push((format!("tests/links.txt:{line}"), q));
    }
    out
}

#[test]
fn export_then_import_gives_back_the_same_inputs() {
    let mut checked = vec![0usize; Framework::ALL.len()];
    let mut whole = vec![0usize; Framework::ALL.len()];
    for (at, q) in links() {
        let link = query::decode(&q);
        if !link.notices.is_empty() {
            continue;
        }
        let fw = link.framework;
        let rel = link.release().id;
        let report = fw.compute(rel, &link.inputs);
        let e = export(fw, rel, &link.inputs, &report);
        let i = Framework::ALL.iter().position(|&f| f == fw).unwrap();
        let forced = import_as(fw, &e.text);
        // the export names its release and the import reads it back (JSON has no comments)
        if e.lang != "json" {
            assert_eq!(
                forced.release.map(|r| r.id),
                Some(rel),
                "{at}: the release\n{}",
                e.text
            );
        }
        let complete = check(
            &format!("{at} (as {})", fw.id()),
            &link,
            &e.text,
            &e.notes,
            &forced,
        );
        // detected: the current framework does not matter
        let other = Framework::ALL[(i + 1) % Framework::ALL.len()];
        let detected = read(other, None, &e.text);
        if detected
            .errors
            .iter()
            .any(|m| m.starts_with("This does not look"))
        {
            // an export with nothing in it (DeepSpeed's `{}`, only comments and no launcher
            // line) is no config
            let nothing = e.text.trim() == "{}"
                || e.text
                    .lines()
                    .all(|l| l.starts_with('#') && !l.starts_with("# launch:"));
            assert!(nothing, "{at}\n{}", e.text);
        } else {
            check(
                &format!("{at} (detected)"),
                &link,
                &e.text,
                &e.notes,
                &detected,
            );
        }
        checked[i] += 1;
        whole[i] += usize::from(complete);
    }
    for (i, fw) in Framework::ALL.iter().enumerate() {
        assert!(checked[i] >= 5, "{}: only {} links", fw.id(), checked[i]);
        assert!(whole[i] >= 1, "{}: no link compared whole", fw.id());
    }
    eprintln!("links checked per framework: {checked:?}; compared whole: {whole:?}");
}

#[test]
fn the_launcher_line_carries_the_cluster() {
    // world_size 16 with 2 nodes: exported as 2 × 8, read back as that shape
    for fw in Framework::ALL {
        let raw = RawInputs::from_pairs([(Field::Nodes, "2"), (Field::WorldSize, "16")]);
        let rel = fw.default_release().id;
        let e = export(*fw, rel, &raw, &fw.compute(rel, &raw));
        let got = import_as(*fw, &e.text);
        if fw.spec().export.lang == "json" {
            // no batch keys given: nothing fixes the world, and the import says so
            assert_eq!(got.get(Field::Nodes), None, "{}", e.text);
            assert!(got.summary().contains("The cluster is not in this file"));
            continue;
        }
        assert_eq!(got.get(Field::Nodes), Some("2"), "{}: {}", fw.id(), e.text);
        assert_eq!(
            got.get(Field::GpusPerNode),
            Some("8"),
            "{}: {}",
            fw.id(),
            e.text
        );
    }
}

/// DeepSpeed's export → import keeps the cluster where its three batch keys fix it
/// (16 GPUs came back as 8), with `sequence_parallel_size` counted as DeepSpeed's batch check
/// counts it, and says so where they do not.
#[test]
fn deepspeed_json_keeps_the_cluster_its_batch_keys_fix() {
    let fw = Framework::from_id("deepspeed").unwrap();
    let rel = fw.default_release().id;
    let trip = |pairs: &[(Field, &str)]| {
        let raw = RawInputs::from_pairs(pairs.iter().copied());
        let report = fw.compute(rel, &raw);
        let e = export(fw, rel, &raw, &report);
        let got = import_as(fw, &e.text);
        assert!(got.errors.is_empty(), "{:?}\n{}", got.errors, e.text);
        let back = fw.compute(rel, &got.raw());
        let w = |r: &dpcalc::calc::Report| r.value(Output::WorldSize).map(|n| n.raw());
        (w(&report), w(&back), got, e.text)
    };
    // 2 × 8 GPUs, train 64 and micro 2 given: GA 2 derived, all three written, world 16 back
    let (before, after, got, text) = trip(&[
        (Field::Nodes, "2"),
        (Field::GpusPerNode, "8"),
        (Field::TrainBatchSize, "64"),
        (Field::TrainMicroBatchSizePerGpu, "2"),
    ]);
    assert_eq!(before.as_deref(), Some("16"));
    assert_eq!(after, before, "{text}");
    assert_eq!(got.get(Field::Nodes), Some("2"));
    assert_eq!(got.get(Field::GpusPerNode), Some("8"));
    assert!(
        got.summary().contains("16 GPUs (2 node(s) × 8)"),
        "{}",
        got.summary()
    );
    // Ulysses: the check counts world / sequence_parallel_size, so the world is that × sp
    let (before, after, _, text) = trip(&[
        (Field::WorldSize, "32"),
        (Field::SequenceParallelSize, "4"),
        (Field::TrainBatchSize, "16"),
        (Field::GradientAccumulationSteps, "2"),
    ]);
    assert_eq!(before.as_deref(), Some("32"));
    assert_eq!(after, before, "{text}");
    // one batch key given: DeepSpeed derives the other two, the export writes all three
    let (before, after, _, text) = trip(&[(Field::WorldSize, "16"), (Field::TrainBatchSize, "64")]);
    assert_eq!(after, before, "{text}");
    // a pasted file with one key: nothing fixes the world, and the import says so
    let got = import_as(fw, r#"{"train_batch_size": 64}"#);
    assert_eq!(got.get(Field::Nodes), None);
    assert!(got.summary().contains("The cluster is not in this file"));
    // a pasted file with all three keys, as a user writes it
    let got = import_as(
        fw,
        r#"{"train_batch_size": 256, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}"#,
    );
    assert_eq!(
        (got.get(Field::Nodes), got.get(Field::GpusPerNode)),
        (Some("4"), Some("8"))
    );
    // 12 GPUs: one node of 12
    let got = import_as(
        fw,
        r#"{"train_batch_size": 24, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2}"#,
    );
    assert_eq!(
        (got.get(Field::Nodes), got.get(Field::GpusPerNode)),
        (Some("1"), Some("12"))
    );
    // train not a multiple of micro × GA: DeepSpeed would refuse it; no world is made up
    let got = import_as(
        fw,
        r#"{"train_batch_size": 10, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}"#,
    );
    assert_eq!(got.get(Field::Nodes), None);
}
