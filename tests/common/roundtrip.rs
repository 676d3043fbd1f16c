//! The round trip's comparison, shared by `tests/roundtrip.rs` and the fuzz targets
//! (`fuzz/fuzz_targets/import.rs` includes this file by its path): what an import of an exported
//! config gives back, field by field, against the inputs it was exported from. See
//! `tests/roundtrip.rs` for what is compared and why.

use dpcalc::calc::field::{CLUSTER, THROUGHPUT};
use dpcalc::calc::import::Imported;
use dpcalc::calc::{Field, Output, RawInputs};
use dpcalc::query::{self, Link};

/// The same value as form text: equal text, or the same number, or the same boolean.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x == y;
    }
    let flag = |s: &str| match s.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    };
    flag(a).is_some() && flag(a) == flag(b)
}

/// Checks one import of the exported text; returns whether every field was compared.
pub fn check(at: &str, link: &Link, text: &str, notes: &[String], got: &Imported) -> bool {
    let fw = link.framework;
    let raw = &link.inputs;
    assert!(
        got.errors.is_empty(),
        "{at}: errors {:?}\n{text}",
        got.errors
    );
    assert_eq!(got.framework, fw, "{at}\n{text}");
    assert!(
        got.unknown.is_empty(),
        "{at}: unknown {:?}\n{text}",
        got.unknown
    );
    let mut back = got.raw();
    let left_out = |f: Field| {
        notes
            .iter()
            .any(|n| n.starts_with(&format!("{} left out", f.key())))
    };
    let derived = |f: Field| {
        notes
            .iter()
            .any(|n| n.starts_with("derived from the other values") && n.contains(f.key()))
    };
    let json = fw.spec().export.lang == "json";
    let report = fw.compute(link.release().id, raw);
    // a whitespace-only value is not written (the export skips empty texts)
    let mut complete = !notes.iter().any(|n| n.contains("left out"))
        && !fw
            .fields()
            .any(|f| !raw.get(f).is_empty() && raw.get(f).trim().is_empty());
    for f in fw.fields() {
        if CLUSTER.contains(&f) || THROUGHPUT.1.contains(&f) {
            continue;
        }
        if f == Field::NumSamples && json {
            complete &= raw.get(f).trim().is_empty();
            continue;
        }
        let (a, b) = (raw.get(f), back.get(f));
        if raw.conflict(f).is_some() || left_out(f) || report.error_at(f).is_some() {
            // not written (num_samples with an error is dropped without a note)
            complete = false;
            continue;
        }
        if a.trim().is_empty() {
            assert!(
                b.trim().is_empty() || derived(f),
                "{at}: {} came back as {b:?}, not given\n{text}",
                f.key()
            );
        } else if fw.spec().export.lang == "sh" && b.is_empty() && same(a, "false") {
            // a store_true flag that is false is simply absent from the command line
        } else if fw.spec().export.lang == "sh" && a.split_whitespace().eq(b.split_whitespace()) {
            // a value of several words (`--rampup-batch-size 32 32 1000`) is its words on a
            // command line: the white space between them is not carried, nor read
        } else {
            assert!(
                same(a, b),
                "{at}: {} was {a:?}, came back {b:?}\n{text}",
                f.key()
            );
        }
    }
    // the cluster: the launcher line's shape
    let has_launch = !json && !notes.iter().any(|n| n.starts_with("no launcher line"));
    complete &= has_launch || json || CLUSTER.iter().all(|f| raw.get(*f).trim().is_empty());
    if json {
        // DeepSpeed's JSON has no comments: its three batch keys fix the world (DeepSpeed's
        // batch check), and the import says when they do not
        let world = |r: &RawInputs| {
            fw.compute(link.release().id, r)
                .value(Output::WorldSize)
                .map(|n| n.raw())
        };
        if back.get(Field::Nodes).is_empty() {
            assert!(
                got.notes
                    .iter()
                    .any(|n| n.starts_with("The cluster is not in this file")),
                "{at}: {:?}\n{text}",
                got.notes
            );
        } else if report.value(Output::WorldSize).is_some() {
            assert_eq!(world(raw), world(&back), "{at}: world size\n{text}");
        }
        // the rest is compared on the user's own cluster shape
        for &f in CLUSTER {
            back.set(f, raw.get(f));
        }
    }
    let rel = link.release().id;
    let (before, after) = (fw.compute(rel, raw), fw.compute(rel, &back));
    if has_launch {
        assert_eq!(
            before.value(Output::WorldSize).map(|n| n.raw()),
            after.value(Output::WorldSize).map(|n| n.raw()),
            "{at}: world size\n{text}"
        );
    }
    let others_empty = THROUGHPUT.1.iter().all(|f| raw.get(*f).trim().is_empty());
    if complete && others_empty {
        for &o in fw.outputs() {
            // the same number (a value DeepSpeed derives as a float, 2.0, is written as the
            // integer 2 and then given: its type is the given key's)
            let (x, y) = (
                before.value(o).map(|n| n.raw()),
                after.value(o).map(|n| n.raw()),
            );
            assert!(
                x == y || matches!((&x, &y), (Some(a), Some(b)) if same(a, b)),
                "{at}: {o:?} differs after the round trip: {x:?} then {y:?}\n{text}"
            );
        }
        if !notes
            .iter()
            .any(|n| n.starts_with("derived") || n.starts_with("world_size"))
        {
            // the same link (the cluster as nodes × GPUs, text as the export writes it)
            let mut norm = raw.clone();
            for (f, v) in raw.given() {
                let words = fw.spec().export.lang == "sh"
                    && v.split_whitespace().eq(back.get(f).split_whitespace());
                if !same(v, back.get(f)) && !words {
                    continue;
                }
                norm.set(f, back.get(f));
            }
            let a = query::encode(&Link {
                inputs: norm,
                release: Some(link.release()),
                ..link.clone()
            });
            let b = query::encode(&Link {
                inputs: back,
                release: Some(link.release()),
                ..link.clone()
            });
            assert_eq!(a, b, "{at}: the link differs\n{text}");
        }
    }
    complete
}
