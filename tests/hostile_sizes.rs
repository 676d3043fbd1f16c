//! Hostile sizes (issue 38): a link that sets the model's layers, heads, hidden size or
//! vocabulary, the cluster, the micro or global batch or the sequence length to anything up to
//! 10^18 computes without a panic and, in a release build, within [`BUDGET_MS`] for what the page
//! computes on load (the state, the run section's explorer, GPU map and timeline, the comparison,
//! the exported config and the snippets), and within the same budget for each slice of the
//! planner (`view=plan`) and of the scaling view (`view=scale`), whose slices the page runs one
//! per task. A debug build runs everything for no panic, untimed (its times say nothing).
//!
//! Timings: `cargo test --release --test suite hostile_sizes -- --nocapture` prints the slowest.

use std::time::Instant;

use dpcalc::calc::frameworks::Concept;
use dpcalc::calc::planner::{self, Planning};
use dpcalc::calc::scaling::Scaling;
use dpcalc::calc::{compare, export, layout, mesh, schedule, view, Field, Framework};
use dpcalc::query::{self, Link};
use dpcalc::state::State;

/// The bound for every link, natively in release.
const BUDGET_MS: f64 = 100.0;

/// The hostile values: a million, a billion, 2^63 (past `i64`), 10^18.
const VALUES: [&str; 4] = [
    "1000000",
    "1000000000",
    "9223372036854775808",
    "1000000000000000000",
];

/// The fields a hostile link sets, in the framework's own keys (those it has).
fn hostile_fields(fw: Framework) -> Vec<Field> {
    let concepts = [
        Concept::Layers,
        Concept::Heads,
        Concept::KvHeads,
        Concept::Ffn,
        Concept::Nodes,
        Concept::GpusPerNode,
        Concept::WorldSize,
        Concept::Micro,
        Concept::Accum,
        Concept::Global,
        Concept::SeqLen,
    ];
    let mut fields: Vec<Field> = concepts.iter().filter_map(|&c| fw.field_for(c)).collect();
    fields.extend([Field::HiddenSize, Field::VocabSize]);
    if fw.field_for(Concept::SeqLen).is_none() {
        fields.push(Field::MaxLength);
    }
    fields
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// What the page computes when the link loads; its milliseconds.
fn load(q: &str) -> (State, f64) {
    let t = Instant::now();
    let state = State::from_query(q);
    let (fw, release) = (state.link.framework, state.link.release().id);
    let (raw, report) = (&*state.inputs, &*state.report);
    let _ = view::steps(report);
    let _ = schedule::timeline(report).map(|t| view::timeline_text(&t));
    let _ = mesh::picture(fw, report);
    let _ = layout::explore(fw, release, raw);
    let _ = compare::compare(fw, raw, report);
    let _ = export::export(fw, release, raw, report);
    let _ = dpcalc::embed::snippets(fw, "e", "f", raw, report);
    (state, ms(t))
}

/// Runs `step` to the end; the longest slice and the total, in milliseconds.
fn slices(mut step: impl FnMut() -> bool) -> (f64, f64) {
    let (mut longest, mut total) = (0.0f64, 0.0);
    loop {
        let t = Instant::now();
        let done = step();
        let took = ms(t);
        longest = longest.max(took);
        total += took;
        if done {
            return (longest, total);
        }
    }
}

#[test]
fn hostile_sizes_compute_quickly_and_never_panic() {
    let timed = !cfg!(debug_assertions);
    let mut slow: Vec<String> = Vec::new();
    let mut silent: Vec<String> = Vec::new();
    let mut worst = (0.0f64, String::new());
    for &fw in Framework::ALL {
        let base = planner::bench_inputs(fw, 8);
        for field in hostile_fields(fw) {
            for value in VALUES {
                let mut inputs = base.clone();
                inputs.set(field, value);
                let link = Link {
                    framework: fw,
                    inputs,
                    ..Default::default()
                };
                let q = query::encode(&link);
                let what = format!("{} {}={value}", fw.id(), field.key());
                let (state, load_ms) = load(&q);
                // an estimate the value stops is stopped by a message at its field
                let report = &*state.report;
                let said = (report.diags.iter())
                    .any(|d| d.field == field || d.level == dpcalc::calc::Level::Error);
                if report.estimated.step.is_none() && !said {
                    silent.push(format!(
                        "{what}: {:?}",
                        report
                            .diags
                            .iter()
                            .map(|d| (d.field.key(), &d.message))
                            .collect::<Vec<_>>()
                    ));
                }
                let (release, raw) = (state.link.release().id, &*state.inputs);
                let mut planning = Planning::new(fw, release, raw);
                let (plan_slice, plan_total) = slices(|| planning.step());
                let mut scaling = Scaling::new(fw, release, raw);
                let (scale_slice, scale_total) = slices(|| scaling.step());
                let line = format!(
                    "{what}: load {load_ms:.1} ms, planner slice {plan_slice:.1} ms (all {plan_total:.1}), scaling slice {scale_slice:.1} ms (all {scale_total:.1})"
                );
                let longest = load_ms.max(plan_slice).max(scale_slice);
                if longest > worst.0 {
                    worst = (longest, line.clone());
                }
                if longest > BUDGET_MS / 4.0 {
                    println!("{line}");
                }
                if longest > BUDGET_MS {
                    slow.push(line);
                }
            }
        }
    }
    println!("slowest: {}", worst.1);
    assert!(
        silent.is_empty(),
        "no estimate and no message at the field:\n{}",
        silent.join("\n")
    );
    if timed {
        assert!(slow.is_empty(), "over {BUDGET_MS} ms:\n{}", slow.join("\n"));
    }
}
