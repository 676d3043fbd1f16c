//! One-click fixes (`calc::fixes`): every fix offered for a refused link, applied, removes the
//! error at its field; a valid link gets none; hostile values never panic and stay bounded.

use crate::common;

use std::time::{Duration, Instant};

use dpcalc::calc::fixes::{fixes, names_key, Fix, MAX_FIELDS, MAX_FIXES};
use dpcalc::calc::{Field, Framework, Level, RawInputs, Report};
use dpcalc::query;

use common::FIXTURES;

static FIXES_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static FIXES_MAX_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static REVEALS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn applied(raw: &RawInputs, fix: &Fix) -> RawInputs {
    let mut raw = raw.clone();
    for (f, v) in &fix.set {
        raw.set(*f, v.clone());
    }
    raw
}

fn error_fields(report: &Report) -> Vec<Field> {
    report
        .diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| d.field)
        .collect()
}

/// Checks every fix of one link; returns how many fields with an error got a fix.
fn check(fw: Framework, release: &str, raw: &RawInputs, at: &str) -> (usize, usize) {
    let report = fw.compute(release, raw);
    let before = error_fields(&report);
    let t = Instant::now();
    let all = fixes(fw, release, raw, &report);
    let took = t.elapsed().as_nanos() as u64;
    FIXES_NS.fetch_add(took, std::sync::atomic::Ordering::Relaxed);
    FIXES_MAX_NS.fetch_max(took, std::sync::atomic::Ordering::Relaxed);
    for (field, list) in &all {
        assert!(
            before.contains(field),
            "{at}: fixes at {field:?}, which has no error"
        );
        assert!(
            !list.is_empty() && list.len() <= MAX_FIXES + 1,
            "{at}: {list:?}"
        );
        for fix in list {
            assert!(!fix.set.is_empty(), "{at}: an empty fix");
            assert!(!fix.label.is_empty());
            for (f, v) in &fix.set {
                // the label names every field it sets
                assert!(
                    fix.label.contains(f.key()),
                    "{at}: {} lacks {}",
                    fix.label,
                    f.key()
                );
                assert_ne!(
                    raw.get(*f).trim(),
                    v.as_str(),
                    "{at}: {fix:?} sets what is there"
                );
            }
            let after = fw.compute(release, &applied(raw, fix));
            assert_eq!(
                after.error_at(*field),
                None,
                "{at}: {} leaves the error at {}",
                fix.label,
                field.key()
            );
            for f in error_fields(&after) {
                // no error at a field the fix sets; an error elsewhere only when the one at the
                // field hid it (counted below)
                assert!(
                    !fix.set.iter().any(|(g, _)| *g == f),
                    "{at}: {} makes an error at {}",
                    fix.label,
                    f.key()
                );
                if !before.contains(&f) {
                    REVEALS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    }
    let mut fields = before.clone();
    fields.dedup();
    let mut unique = Vec::new();
    for f in fields {
        if !unique.contains(&f) {
            unique.push(f);
        }
    }
    (unique.len().min(MAX_FIELDS), all.len())
}

#[test]
fn every_fix_of_every_refused_fixture_link_removes_its_error() {
    let mut total = (0, 0);
    let mut links = 0;
    let mut slowest = (Duration::ZERO, String::new());
    for (name, text) in FIXTURES {
        let (_, records) = common::parse(text);
        let mut per = (0, 0);
        for r in records {
            let link = query::decode(&r.link);
            let release = link.release().id;
            let report = link.framework.compute(release, &link.inputs);
            if !report.has_errors() {
                // a valid link gets no fixes
                assert!(fixes(link.framework, release, &link.inputs, &report).is_empty());
                continue;
            }
            links += 1;
            let at = format!("{name}.txt:{} {}", r.line, r.link);
            let t = Instant::now();
            let (errors, fixed) = check(link.framework, release, &link.inputs, &at);
            let took = t.elapsed();
            if took > slowest.0 {
                slowest = (took, at.clone());
            }
            per.0 += errors;
            per.1 += fixed;
        }
        println!(
            "{name}: {} of {} fields with an error get fixes",
            per.1, per.0
        );
        // most refusals of every framework get a fix
        assert!(
            per.1 * 2 >= per.0,
            "{name}: only {} of {} fields get a fix",
            per.1,
            per.0
        );
        total.0 += per.0;
        total.1 += per.1;
    }
    let reveals = REVEALS.load(std::sync::atomic::Ordering::Relaxed);
    let ns = FIXES_NS.load(std::sync::atomic::Ordering::Relaxed);
    let max = FIXES_MAX_NS.load(std::sync::atomic::Ordering::Relaxed);
    // what the page pays per edit with an error (the calls of this test only; others run in
    // parallel and add to the total but the mean stays indicative)
    println!(
        "fixes(): mean {:?}, max {:?} per refused link",
        Duration::from_nanos(ns / links as u64),
        Duration::from_nanos(max)
    );
    println!("all: {} of {} fields, {links} links; slowest {:?} {}; {reveals} fixes reveal another error", total.1, total.0, slowest.0, slowest.1);
    assert!(links >= 300, "{links}");
}

fn link(q: &str) -> (Framework, &'static str, RawInputs, Report) {
    let l = query::decode(q);
    let release = l.release().id;
    let report = l.framework.compute(release, &l.inputs);
    (l.framework, release, l.inputs, report)
}

fn fixes_at(q: &str, field: Field) -> Vec<Fix> {
    let (fw, release, raw, report) = link(q);
    check(fw, release, &raw, q);
    fixes(fw, release, &raw, &report)
        .into_iter()
        .find(|(f, _)| *f == field)
        .map(|(_, l)| l)
        .unwrap_or_default()
}

fn labels(list: &[Fix]) -> Vec<&str> {
    list.iter().map(|f| f.label.as_str()).collect()
}

#[test]
fn the_nearest_layouts_and_values() {
    // axolotl: tp 4 on 6 GPUs; the sizes that divide 6, nearest first
    let q = "world_size=6&micro_batch_size=2&gradient_accumulation_steps=4&num_epochs=1&sequence_len=2048&tensor_parallel_size=4&num_samples=1000";
    let tp = fixes_at(q, Field::TensorParallelSize);
    // tp 3 keeps the global batch of 8 with gradient_accumulation_steps 2
    assert_eq!(
        labels(&tp)[0],
        "Use tensor_parallel_size = 3, gradient_accumulation_steps = 2",
        "{tp:?}"
    );
    assert!(
        labels(&tp)
            .iter()
            .all(|l| l.starts_with("Use tensor_parallel_size = ")),
        "{tp:?}"
    );
    // at the cluster: another world size first
    let ws = fixes_at(q, Field::WorldSize);
    assert_eq!(
        labels(&ws)[..2],
        ["Use world_size = 4", "Use world_size = 8"],
        "{ws:?}"
    );
    // Megatron: the global batch's nearest multiples of micro × dp
    let q = "framework=megatron&version=0.16.1&world_size=2&global_batch_size=30&micro_batch_size=8&decrease_batch_size_if_needed=false&train_iters=100";
    let gbs = fixes_at(q, Field::GlobalBatchSize);
    assert_eq!(
        labels(&gbs)[..2],
        ["Use global_batch_size = 32", "Use global_batch_size = 16"],
        "{gbs:?}"
    );
    // DeepSpeed: the one train_batch_size that matches, or leave it out
    let q = "framework=deepspeed&train_batch_size=33&train_micro_batch_size_per_gpu=17&gradient_accumulation_steps=2&world_size=2";
    let tbs = fixes_at(q, Field::TrainBatchSize);
    assert!(
        labels(&tbs).contains(&"Use train_batch_size = 68"),
        "{tbs:?}"
    );
    assert!(
        labels(&tbs).contains(&"Leave train_batch_size unset"),
        "{tbs:?}"
    );
    // two exclusive settings: leave one unset
    let q = "world_size=1&micro_batch_size=1&gradient_accumulation_steps=1&num_epochs=1&sequence_len=2048&warmup_ratio=0.1&warmup_steps=5&num_samples=125";
    let w = fixes_at(q, Field::WarmupRatio);
    assert!(labels(&w).contains(&"Leave warmup_ratio unset"), "{w:?}");
    // a field given twice: each of its values
    let q = "world_size=8&world_size=6&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&tensor_parallel_size=4";
    let (fw, release, raw, report) = link(q);
    if report.error_at(Field::WorldSize).is_some() {
        let all = fixes(fw, release, &raw, &report);
        let ws = &all.iter().find(|(f, _)| *f == Field::WorldSize).unwrap().1;
        assert_eq!(ws[0].label, "Use world_size = 8", "{ws:?}");
    }
    // nanotron's dp fill
    let q = "framework=nanotron&version=0.4&world_size=8&dp=4&tp=1&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=1000";
    let dp = fixes_at(q, Field::Dp);
    assert!(labels(&dp).iter().any(|l| l.contains("dp = 8")), "{dp:?}");
}

#[test]
fn a_valid_link_gets_no_fixes() {
    for fw in Framework::ALL {
        let raw = RawInputs::default();
        let release = fw.default_release().id;
        let report = fw.compute(release, &raw);
        if !report.has_errors() {
            assert!(fixes(*fw, release, &raw, &report).is_empty(), "{}", fw.id());
        }
    }
    let (fw, release, raw, report) =
        link("world_size=8&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&tensor_parallel_size=4");
    assert!(!report.has_errors());
    assert!(fixes(fw, release, &raw, &report).is_empty());
}

#[test]
fn hostile_values_never_panic_and_stay_bounded() {
    let huge = "18446744073709551615";
    let values = [
        huge,
        "99999999999999999999999",
        "-1",
        "0",
        "1e308",
        "NaN",
        "2.5",
        "two",
        "",
        " 7 ",
    ];
    for fw in Framework::ALL {
        let release = fw.default_release().id;
        let dims = dpcalc::calc::layout::dims_at(*fw, release);
        for v in values {
            for &(_, f) in dims.iter().take(2) {
                for world in ["6", huge, "16777216", "16777217"] {
                    let mut raw = RawInputs::default();
                    raw.set(Field::WorldSize, world);
                    raw.set(f, v);
                    if let Some(g) = fw.field_for(dpcalc::calc::spec::Concept::Global) {
                        raw.set(g, v);
                    }
                    let t = Instant::now();
                    check(
                        *fw,
                        release,
                        &raw,
                        &format!("{} {} {v} ws {world}", fw.id(), f.key()),
                    );
                    assert!(
                        t.elapsed() < Duration::from_secs(20),
                        "{} {v} {world}: {:?}",
                        fw.id(),
                        t.elapsed()
                    );
                }
            }
        }
    }
}

#[test]
fn every_error_message_of_the_fixtures_is_checked_for_its_key() {
    // the page shows the key in front of the messages that lack it (messages.rs); this lists
    // how many there are and checks names_key on a few known cases
    let mut lacking = Vec::new();
    let mut n = 0;
    for (_, text) in FIXTURES {
        for r in common::parse(text).1 {
            let l = query::decode(&r.link);
            for d in l.report().diags.iter().filter(|d| d.level == Level::Error) {
                n += 1;
                if !names_key(d.field, &d.message) {
                    lacking.push(format!("{}: {}", d.field.key(), d.message));
                }
            }
        }
    }
    lacking.sort();
    lacking.dedup();
    for l in &lacking {
        println!("{l}");
    }
    println!("{} of {n} error messages lack their key", lacking.len());
    assert!(n > 500);
}

/// A batch rule that wants another key given (axolotl 0.14.0–0.18.0's "at least two of …", and
/// "please set only one of gradient_accumulation_steps or batch_size") gets that key as a fix.
#[test]
fn a_batch_rule_gets_the_other_batch_key() {
    for (q, want) in [
        ("version=0.18.0&world_size=4&num_samples=1000", "gradient_accumulation_steps=1&micro_batch_size=1"),
        ("version=0.14.0&world_size=1&gradient_accumulation_steps=4&batch_size=16&num_samples=1000", "batch_size=&micro_batch_size=1"),
    ] {
        let link = query::decode(q);
        let release = link.release().id;
        let report = link.framework.compute(release, &link.inputs);
        let fx = fixes(link.framework, release, &link.inputs, &report);
        let at = fx
            .iter()
            .find(|(f, _)| *f == Field::BatchSize)
            .unwrap_or_else(|| panic!("{q}: no fix at batch_size: {fx:?}"));
        let sets: Vec<String> = at.1[0].set.iter().map(|(f, v)| format!("{}={v}", f.key())).collect();
        assert_eq!(sets.join("&"), want, "{q}");
        let mut fixed = link.inputs.clone();
        for (f, v) in &at.1[0].set {
            fixed.set(*f, v.as_str());
        }
        assert!(!link.framework.compute(release, &fixed).has_errors(), "{q}");
    }
}
