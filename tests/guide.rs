//! The first visit, natively for all six frameworks: what a value that cannot be
//! computed needs (`calc::guide::needs`), the summary, when the other release's comparison is
//! shown, and the one-click examples (complete links that compute without errors).

use crate::common::files;
use dpcalc::calc::guide::{self, Missing};
use dpcalc::calc::{view, Field, Framework, Level, Output, RawInputs};
use dpcalc::query;

/// A plausible value for each input the table may ask for (8 GPUs).
fn fill(field: Field) -> &'static str {
    match field {
        Field::NumSamples | Field::TrainSamples => "1000",
        Field::MaxSteps | Field::TrainIters | Field::Steps | Field::TrainSteps => "100",
        Field::TrainBatchSize => "16",
        Field::TrainMicroBatchSizePerGpu | Field::MicroBatchSize => "2",
        Field::BatchAccumulationPerReplica | Field::GradientAccumulationSteps => "1",
        Field::Dp => "8",
        Field::Tp | Field::Pp => "1",
        Field::SequenceLength | Field::SeqLength | Field::MaxLength | Field::SeqLen => "2048",
        Field::EvalsPerEpoch | Field::SavesPerEpoch => "4",
        Field::ValSetSize => "0.05",
        Field::EvalSteps => "10",
        Field::RampupBatchSize => "8 8 400",
        Field::GlobalBatchSize => "32",
        other => panic!("no test value for {}", other.key()),
    }
}

/// What a release that refuses the empty config needs first (axolotl 0.14.0: two batch keys).
fn refused_fix(fw: Framework) -> RawInputs {
    let mut raw = RawInputs::default();
    raw.set(Field::MicroBatchSize, "2");
    raw.set(Field::GradientAccumulationSteps, "1");
    assert!(fw.has(Field::MicroBatchSize) && fw.has(Field::GradientAccumulationSteps));
    raw
}

/// The bare page of each framework: every value that cannot be computed says what it needs (by
/// the framework's own keys), never a bare dash; giving what it names, round after round, makes
/// every value of the framework computable.
#[test]
fn every_missing_value_names_what_it_needs_and_giving_it_computes_it() {
    for (fw, release) in Framework::ALL
        .iter()
        .flat_map(|&fw| fw.releases().iter().map(move |r| (fw, r.id)))
    {
        let mut raw = RawInputs::default();
        let mut named_at_bare = 0;
        let mut explained = Vec::new();
        for round in 0..6 {
            let report = fw.compute(release, &raw);
            if report.has_errors() {
                // a release that refuses the empty config (axolotl 0.14.0's two batch keys):
                // every value it cannot compute points at the error
                assert_eq!(round, 0, "{} {release}: {:#?}", fw.id(), report.diags);
                for &o in fw.outputs() {
                    let m = guide::needs(fw, &raw, &report, o);
                    assert!(
                        matches!(m, None | Some(Missing::Blocked | Missing::Needs(_))),
                        "{m:?}"
                    );
                }
                named_at_bare = 1;
                raw = refused_fix(fw);
                continue;
            }
            let mut todo = Vec::new();
            for &o in fw.outputs() {
                match guide::needs(fw, &raw, &report, o) {
                    None => assert!(report.value(o).is_some()),
                    Some(Missing::Needs(reqs)) => {
                        for alts in &reqs {
                            assert!(!alts.is_empty());
                            for f in alts {
                                assert!(fw.has(*f), "{} {}: {}", fw.id(), o.name(), f.key());
                            }
                            todo.push(alts[0]);
                        }
                        let text = Missing::Needs(reqs.clone()).text(fw);
                        assert!(
                            text.starts_with("needs ") && !text.contains('\u{2014}'),
                            "{text}"
                        );
                        if round == 0 {
                            named_at_bare += 1;
                        }
                    }
                    // a setting this release ignores: its note says so
                    Some(Missing::Explained(f)) => {
                        assert!(!raw.get(f).is_empty());
                        assert!(
                            report.diags_for(f).next().is_some()
                                || (o == Output::WarmupSteps && f == Field::RampupBatchSize)
                        );
                        explained.push(o);
                    }
                    Some(Missing::InTokens) => {
                        assert_eq!(o, Output::GlobalBatchSize);
                        assert!(report.value(Output::TokensPerStep).is_some());
                        explained.push(o);
                    }
                    Some(other) => {
                        panic!(
                            "{} {release} {} round {round}: {other:?}",
                            fw.id(),
                            o.name()
                        )
                    }
                }
            }
            if todo.is_empty() {
                break;
            }
            for &f in &todo {
                raw.set(f, fill(f));
            }
            for f in todo {
                // a ramp-up needs a global batch to ramp up to, and sample-based training
                if f == Field::RampupBatchSize {
                    raw.set(Field::GlobalBatchSize, fill(Field::GlobalBatchSize));
                    raw.set(Field::TrainIters, "");
                    raw.set(Field::TrainSamples, fill(Field::TrainSamples));
                }
            }
            assert!(round < 5, "{}: still needs inputs", fw.id());
        }
        let report = fw.compute(release, &raw);
        for &o in fw.outputs() {
            assert!(
                report.value(o).is_some() || explained.contains(&o),
                "{} {release} {}",
                fw.id(),
                o.name()
            );
        }
        if fw.id() != "torchtitan" {
            assert!(named_at_bare > 0, "{}", fw.id());
        }
    }
}

fn needs_text(fw: &str, q: &str, out: Output) -> Option<(String, String)> {
    let fw = Framework::from_id(fw).unwrap();
    let link = query::decode(q);
    let report = link.report();
    guide::needs(fw, &link.inputs, &report, out).map(|m| (m.keys(), m.text(fw)))
}

#[test]
fn the_words_at_the_values() {
    // the example: axolotl's step counts need the training rows
    assert_eq!(
        needs_text("axolotl", "", Output::TotalNumSteps),
        Some(("num_samples".into(), "needs Training rows".into()))
    );
    assert_eq!(needs_text("axolotl", "", Output::GlobalBatchSize), None);
    // axolotl's eval steps need the rows, the evaluations per epoch and an eval split
    assert_eq!(
        needs_text("axolotl", "", Output::EvalSteps).unwrap().0,
        "num_samples evals_per_epoch val_set_size"
    );
    // DeepSpeed: either batch key
    assert_eq!(
        needs_text("deepspeed", "framework=deepspeed", Output::GlobalBatchSize),
        Some(("train_batch_size".into(), "needs Train batch size".into()))
    );
    // Megatron names its own key; its tokens need its sequence length (no default)
    assert_eq!(
        needs_text("megatron", "framework=megatron", Output::MaxSteps)
            .unwrap()
            .0,
        "train_iters"
    );
    assert_eq!(
        needs_text("megatron", "framework=megatron", Output::TokensPerStep)
            .unwrap()
            .0,
        "seq_length"
    );
    assert_eq!(
        needs_text(
            "megatron",
            "framework=megatron&train_iters=10",
            Output::InitialGlobalBatchSize
        )
        .unwrap()
        .1,
        "needs Batch-size ramp-up or Step batch-size schedule"
    );
    // nanotron: its required parallel sizes, listed
    let (keys, text) = needs_text("nanotron", "framework=nanotron", Output::DpWorldSize).unwrap();
    assert_eq!(keys, "dp tp pp");
    assert_eq!(
        text,
        "needs Data parallel size, Tensor parallel size and Pipeline parallel size"
    );
    // hf: the sequence length has no default there
    assert_eq!(
        needs_text("hf", "framework=hf", Output::TokensPerStep)
            .unwrap()
            .0,
        "max_length"
    );
    // a value stopped by an error, with everything given, says so
    let link = query::decode("nodes=two&num_samples=100");
    let r = link.report();
    assert_eq!(
        guide::needs(
            Framework::default(),
            &link.inputs,
            &r,
            Output::GlobalBatchSize
        ),
        Some(Missing::Blocked)
    );
}

#[test]
fn the_summary_has_dp_batch_steps_and_the_first_error() {
    for &fw in Framework::ALL {
        let raw = RawInputs::default();
        let r = fw.compute(fw.default_release().id, &raw);
        let s = guide::summary(fw, &raw, &r);
        let outs: Vec<_> = s.items.iter().map(|i| i.output).collect();
        assert!(outs.contains(&Output::MaxSteps), "{}", fw.id());
        assert!(outs.contains(&Output::GlobalBatchSize), "{}", fw.id());
        for i in &s.items {
            assert!(!i.shown.is_empty(), "{} {}", fw.id(), i.label);
            assert_eq!(i.computed, r.value(i.output).is_some());
        }
        assert!(s.error.is_none());
    }
    let link = query::decode("nodes=two&gradient_accumulation_steps=1.5&num_samples=100");
    let r = link.report();
    let s = guide::summary(link.framework, &link.inputs, &r);
    let (field, message, count) = s.error.unwrap();
    assert_eq!(
        count,
        r.diags.iter().filter(|d| d.level == Level::Error).count()
    );
    assert!(count >= 2);
    assert_eq!(r.error_at(field).as_deref(), Some(message.as_str()));
    let link = query::decode("version=0.19.0&nodes=2&micro_batch_size=2&num_samples=1000");
    let r = link.report();
    let s = guide::summary(link.framework, &link.inputs, &r);
    assert_eq!(s.items[1].shown, "32");
    assert_eq!(s.items[2].shown, "32");
}

#[test]
fn the_other_release_shows_only_for_the_users_own_inputs() {
    let why = |q: &str| {
        let link = query::decode(q);
        let r = link.report();
        guide::legacy_why(link.framework, link.release().id, &link.inputs, &r)
    };
    // the bare address: 0.14.0 refuses the empty config, but the visitor typed nothing
    assert!(view::legacy(
        Framework::default(),
        Framework::default().default_release().id
    )
    .is_some());
    assert_eq!(why(""), None);
    // the same values as the current release: nothing to say
    assert_eq!(why("version=0.19.0&world_size=8&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000"), None);
    // a different batch under tensor parallelism (PR #3462)
    let w = why("version=0.19.0&world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").unwrap();
    assert!(w.contains("0.14.0") && w.contains("global batch"), "{w}");
    // a typed config the old release refuses (0.14.0 needs two of the three batch keys)
    let w = why("version=0.19.0&micro_batch_size=2&num_samples=1000").unwrap();
    assert!(w.contains("refuses"), "{w}");
    // other frameworks have no comparison
    assert_eq!(
        why("framework=hf&version=5.23&per_device_train_batch_size=3"),
        None
    );
}

#[test]
fn the_examples_are_complete_links_that_compute() {
    let links = query::example_links();
    assert!(links.len() >= 3);
    let labels: Vec<_> = links.iter().map(|(l, _)| *l).collect();
    assert!(labels.contains(&"Llama-3.1-8B on 1 × 8, ZeRO-3"));
    assert!(labels.contains(&"70B on 4 × 8, TP 8"));
    assert!(labels.iter().any(|l| l.contains("#3462")));
    for (label, q) in links {
        assert!(q.contains("version="), "{label}: {q}");
        let link = query::decode(&q);
        assert!(
            link.release.is_some() && link.unknown.is_empty() && link.notices.is_empty(),
            "{label}"
        );
        // the link reads back as the same link
        assert_eq!(query::encode(&link), q, "{label}");
        let r = link.report();
        assert!(!r.has_errors(), "{label}: {:#?}", r.diags);
        for o in [
            Output::DpWorldSize,
            Output::GlobalBatchSize,
            Output::MaxSteps,
        ] {
            assert!(r.value(o).is_some(), "{label}: {}", o.name());
        }
        if !label.contains("#3462") {
            assert!(
                r.value(Output::MemoryPerGpuBytes).is_some(),
                "{label}: no memory estimate"
            );
        }
    }
}

/// Every link of `tests/links.txt` and the bare page of every release, with the framework and
/// release it computes.
fn every_page() -> Vec<(String, dpcalc::state::State)> {
    let mut pages: Vec<(String, dpcalc::state::State)> = Framework::ALL
        .iter()
        .flat_map(|&fw| fw.releases().iter().map(move |r| (fw, r.id)))
        .map(|(fw, r)| format!("framework={}&version={r}", fw.id()))
        .chain(files::links().into_iter().map(|(_, q)| q))
        .map(|q| (q.clone(), dpcalc::state::State::from_query(&q)))
        .collect();
    // a ramp-up (megatron-core 0.16.1) and a step schedule (head), for their own outputs
    for q in [
        "framework=megatron&version=0.16.1&world_size=8&micro_batch_size=1&global_batch_size=32&rampup_batch_size=8+8+400&train_samples=1000&seq_length=2048&lr_warmup_samples=100",
        "framework=megatron&version=0.19.2&world_size=8&micro_batch_size=1&global_batch_size=32&rampup_batch_size=8+8+400&train_samples=1000",
    ] {
        pages.push((q.into(), dpcalc::state::State::from_query(q)));
    }
    pages
}

/// No value of the results, the tokens-and-time panel or the other release's box is a
/// bare dash; each says what it needs, why it has none, or is not shown.
#[test]
fn no_value_is_a_bare_dash() {
    use dpcalc::page;
    let mut missing = 0;
    for (q, state) in every_page() {
        let (fw, raw, report) = (state.link.framework, &state.inputs, &*state.report);
        let release = state.link.release().id;
        let mut rows = page::results(fw, raw, report);
        rows.extend(
            page::tokens_time(fw, raw, report)
                .into_iter()
                .map(|(r, _)| r),
        );
        if guide::legacy_why(fw, release, raw, report).is_some() {
            for o in [Output::LegacyGlobalBatchSize, Output::LegacyTotalNumSteps] {
                rows.extend(page::row(fw, raw, report, o));
            }
        }
        for row in rows {
            assert!(
                !row.shown.trim().is_empty() && row.shown != "\u{2014}",
                "{q}: {row:?}"
            );
            if row.raw.is_none() {
                missing += 1;
                let o = *Output::ALL.iter().find(|o| o.name() == row.output).unwrap();
                let m = guide::needs_legacy(fw, raw, report, o).unwrap();
                assert!(!matches!(m, Missing::Unknown), "{q}: {} {m:?}", row.output);
                assert_eq!(row.shown, m.text(fw));
            }
        }
    }
    assert!(missing > 100, "{missing}");
}

/// The outputs of a feature the link does not use are not listed (Megatron's ramp-up,
/// evaluations, saves); tokens per epoch only where the framework counts epochs.
#[test]
fn a_feature_the_link_does_not_use_has_no_outputs() {
    use dpcalc::page;
    let names = |q: &str| -> Vec<&'static str> {
        let s = dpcalc::state::State::from_query(q);
        let (fw, raw, r) = (s.link.framework, &s.inputs, &*s.report);
        let mut v: Vec<&'static str> = page::results(fw, raw, r).iter().map(|r| r.output).collect();
        v.extend(page::tokens_time(fw, raw, r).iter().map(|(r, _)| r.output));
        v
    };
    let ramp = [
        "initial_global_batch_size",
        "initial_num_microbatches",
        "rampup_samples_per_increment",
        "full_batch_iteration",
    ];
    let plain = names(
        "framework=megatron&version=0.19.2&train_iters=10&micro_batch_size=1&global_batch_size=16",
    );
    assert!(plain.contains(&"train_iters") && plain.contains(&"dp_world_size"));
    for o in ramp {
        assert!(!plain.contains(&o), "{o}");
    }
    assert!(!plain.contains(&"tokens_per_epoch"));
    let ramped = names("framework=megatron&version=0.16.1&world_size=8&micro_batch_size=1&global_batch_size=32&rampup_batch_size=8+8+400&train_samples=1000");
    for o in ramp {
        assert!(ramped.contains(&o), "{o}");
    }
    // axolotl: no evaluation or save without their settings; each appears with its own
    let bare = names("");
    assert!(!bare.contains(&"eval_steps") && !bare.contains(&"save_steps"));
    assert!(bare.contains(&"tokens_per_epoch") && bare.contains(&"max_steps"));
    assert!(names("evals_per_epoch=4").contains(&"eval_steps"));
    assert!(names("saves_per_epoch=2").contains(&"save_steps"));
    // the core decides, for both renderers: the first view writes the same list
    let s = dpcalc::state::State::from_query("framework=megatron&version=0.19.2&train_iters=10");
    let html = dpcalc::first::render(&page::Page::new(&s, "https://x/"));
    assert!(html.contains("data-output=\"train_iters\""));
    assert!(!html.contains("data-output=\"initial_global_batch_size\""));
}

/// An explorer cell without a value says what it needs (the results' words), or that
/// the layout is refused; never a bare dash.
#[test]
fn no_explorer_cell_is_a_bare_dash() {
    use dpcalc::calc::layout;
    let bare = dpcalc::state::State::from_query("");
    let ex = layout::explore(bare.link.framework, bare.link.release().id, &bare.inputs);
    let row = &ex.rows[0];
    assert_eq!(row.max_steps, None);
    assert_eq!(
        guide::explorer_cell(&ex, &bare.inputs, row, Output::MaxSteps),
        "needs Training rows"
    );
    let mut cells = 0;
    for (q, state) in every_page() {
        let fw = state.link.framework;
        let ex = layout::explore(fw, state.link.release().id, &state.inputs);
        for row in &ex.rows {
            for (o, v) in [
                (
                    Output::GradientAccumulationSteps,
                    row.gradient_accumulation_steps,
                ),
                (Output::GlobalBatchSize, row.global_batch_size),
                (Output::MaxSteps, row.max_steps),
            ] {
                if v.is_none() {
                    cells += 1;
                    let text = guide::explorer_cell(&ex, &state.inputs, row, o);
                    assert!(
                        text == "refused"
                            || text.starts_with("needs ")
                            || text.starts_with("none")
                            || text.starts_with("not computed"),
                        "{q}: {} {:?}: {text}",
                        o.name(),
                        row.sizes
                    );
                    assert_eq!(row.problem.is_some(), text == "refused");
                }
            }
        }
    }
    assert!(cells > 50, "{cells}");
}
