//! Calibration to one measured run (`calibration_compute_factor`, `fit/time.rs`): the factor
//! fitted from a measured speed of the link's own layout, and what it predicts for the other runs
//! of the same source on the same GPU, framework and precision.
//!
//! The leave-one-out table of docs/estimates.md ("Calibrated to your cluster") is this test's
//! table: for every group of three or more records of `tests/fixtures/measured_throughput.txt`
//! that share their source (the document), GPU (and its variant), framework and precision, each
//! record in turn gives the factor (its link with its measured `tokens_per_second_per_gpu`), and
//! every other record of the group is estimated with that factor (its link with
//! `calibration_compute_factor`) and compared with its own measurement.

use crate::measured_throughput::{float, measured, median, not_modelled, records, Record};
use dpcalc::calc::planner::PlanRow;
use dpcalc::calc::{Field, Level, Output, RawInputs, Report};
use dpcalc::query;

/// The goal of issue 35: median |error| at most 6 %, 90 % of the predictions within ±15 %. One
/// compute factor corrects what is constant across a group's runs (the GPU variant, the
/// framework's kernels); what the step-time model misses by model size (Megatron-LM's table from
/// 1.7B to 462B) it cannot, so the test is a ratchet on the figures reached so far
/// ([`MEDIAN`], [`WITHIN_15`]), which a better step-time model may improve and must not worsen.
const MEDIAN_GOAL: f64 = 6.0;
const WITHIN_15_GOAL: f64 = 0.90;
/// The median |error| of the 16-bit groups' predictions so far, percent, and the share within
/// ±15 %. 4.6 % and 0.91 until Megatron-LM's H100 table was converted with the FLOPs formula of
/// its own release (see [`ALL_MEDIAN`]): 4.9 % and 0.89, a measurement corrected.
const MEDIAN: f64 = 4.9;
const WITHIN_15: f64 = 0.89;
/// The same for the FP8 groups, estimated since the FP8 products were modelled.
/// (21.3 % and 0.36 until the torchtitan 405B interleaved run's link said its schedule: an input
/// corrected, not a model made worse; 18.8 % and 0.37 until the NeMo 24.07 links took the
/// settings of NeMo's own launcher recipes at that release: the Llama 2 70B run's factor went
/// from 0.63 to 0.99, its group's median from 28.8 % to 5.5 %; 16.8 % and 0.43 until the NeMo
/// group gained the four GPT-3 rows linked from the launcher's `gpt3/*.yaml`: its own median
/// went from 5.5 % to 7.8 %, the FP8 predictions' as a whole to 16.4 %; 16.4 % and 0.45 until
/// torchtitan's 405B Table 5 pipeline runs were linked with the 8 micro batches the code at
/// 9dec370 runs: inputs corrected.)
const FP8_MEDIAN: f64 = 15.8;
const FP8_WITHIN_15: f64 = 0.48;
/// The 16-bit figures with the H100 BF16 records added for issue 35 (`added=` in the fixture;
/// [`MEDIAN`] and [`WITHIN_15`] stay on the records they were set on). 6.0 % and 0.86 until
/// Megatron-LM's H100 table was converted with the FLOPs formula of its own release
/// (measured_throughput.rs `megatron_r080_per_token`): its measured throughputs fell by 2 % (462B)
/// to 12 % (1.7B), which widened the group's factors from 0.70–1.22 to 0.77–1.34 and its median
/// from 8.6 to 12.9 % — a measurement corrected, not a model made worse.
const ALL_MEDIAN: f64 = 6.1;
const ALL_WITHIN_15: f64 = 0.85;

fn report(link: &str) -> Report {
    let l = query::decode(link);
    assert!(l.unknown.is_empty(), "{link}: unknown keys {:?}", l.unknown);
    l.report()
}

/// The record `id` of the fixture.
fn record(id: &str) -> Record {
    records()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id}: no such record"))
}

/// The group a record calibrates: its source document, GPU and variant, framework and precision.
fn group(r: &Record) -> String {
    let full = r.get("source").unwrap_or_default();
    let doc = match full.rsplit_once(':') {
        Some((doc, _)) if full.contains('@') => {
            doc.split('@').next().unwrap_or(doc).to_string()
                + ":"
                + doc.rsplit(':').next().unwrap_or("")
        }
        _ => r.source.clone(),
    };
    format!(
        "{doc} · {}{} · {} · {}",
        r.gpu,
        r.get("gpu_variant")
            .map(|v| format!(" ({v})"))
            .unwrap_or_default(),
        r.get("framework").unwrap_or_default(),
        r.get("precision").unwrap_or_default()
    )
}

/// A record the step time estimates, with its measured tokens per second per GPU.
fn estimable(r: &Record) -> Option<f64> {
    if not_modelled(r).is_some() {
        return None;
    }
    let rep = report(&r.link);
    if rep.diags.iter().any(|d| d.level == Level::Error) {
        return None;
    }
    float(&rep, Output::TokensPerSecondPerGpu)?;
    measured(r, &rep).ok()
}

/// The factor a record's measured speed fits (`None`: no factor within the bounds does).
fn factor(r: &Record, measured: f64) -> Option<f64> {
    let rep = report(&format!("{}&tokens_per_second_per_gpu={measured}", r.link));
    float(&rep, Output::CalibrationComputeFactor)
}

/// The error of the estimate of `r` calibrated with `k`, percent.
fn predicted_error(r: &Record, measured: f64, k: f64) -> f64 {
    let rep = report(&format!("{}&calibration_compute_factor={k}", r.link));
    let estimated = float(&rep, Output::TokensPerSecondPerGpu).expect("an estimate");
    (estimated - measured) * 100.0 / measured
}

struct Group {
    name: String,
    records: usize,
    factors: Vec<f64>,
    /// |error| of every prediction, percent.
    errors: Vec<f64>,
    /// Records whose measurement no factor within the bounds reproduces.
    unfitted: Vec<String>,
}

fn groups() -> Vec<Group> {
    groups_of(|_| true)
}

/// The groups of the records `keep` takes.
fn groups_of(keep: impl Fn(&Record) -> bool) -> Vec<Group> {
    let mut by: Vec<(String, Vec<(Record, f64)>)> = Vec::new();
    for r in records().into_iter().filter(|r| keep(r)) {
        let Some(m) = estimable(&r) else { continue };
        let g = group(&r);
        match by.iter_mut().find(|(n, _)| *n == g) {
            Some((_, v)) => v.push((r, m)),
            None => by.push((g, vec![(r, m)])),
        }
    }
    by.into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|(name, v)| {
            let mut g = Group {
                name,
                records: v.len(),
                factors: Vec::new(),
                errors: Vec::new(),
                unfitted: Vec::new(),
            };
            for (i, (r, m)) in v.iter().enumerate() {
                let Some(k) = factor(r, *m) else {
                    g.unfitted.push(r.id.clone());
                    continue;
                };
                g.factors.push(k);
                for (j, (o, om)) in v.iter().enumerate() {
                    if i != j {
                        g.errors.push(predicted_error(o, *om, k).abs());
                    }
                }
            }
            g
        })
        .collect()
}

fn within(errors: &[f64], limit: f64) -> f64 {
    errors.iter().filter(|e| **e <= limit).count() as f64 / errors.len().max(1) as f64
}

/// The table of docs/estimates.md.
fn table(groups: &[Group]) -> String {
    let mut t = String::from(
        "| source · GPU · framework · precision | records | factors | predictions | median \\|error\\| | within ±15 % | worst |\n|---|---|---|---|---|---|---|\n",
    );
    let mut all = Vec::new();
    for g in groups {
        let lo = g.factors.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = g.factors.iter().copied().fold(0.0, f64::max);
        t.push_str(&format!(
            "| {} | {} | {:.2}–{:.2} | {} | {:.1} % | {:.0} % | {:.1} % |\n",
            g.name,
            g.records,
            lo,
            hi,
            g.errors.len(),
            median(g.errors.clone()),
            within(&g.errors, 15.0) * 100.0,
            g.errors.iter().copied().fold(0.0, f64::max)
        ));
        all.extend(g.errors.iter().copied());
    }
    let part = |fp8: bool| {
        let e = errors(groups, fp8);
        format!(
            "{} predictions, median {:.1} %, {:.0} % within ±15 %",
            e.len(),
            median(e.clone()),
            within(&e, 15.0) * 100.0
        )
    };
    t.push_str(&format!(
        "\nAll {} predictions: median |error| {:.1} %, {:.0} % within ±15 % (16-bit: {}; FP8: {}).\n",
        all.len(),
        median(all.clone()),
        within(&all, 15.0) * 100.0,
        part(false),
        part(true)
    ));
    t
}

/// The |errors| of the groups of one precision (FP8 or 16-bit), percent.
fn errors(groups: &[Group], fp8: bool) -> Vec<f64> {
    groups
        .iter()
        .filter(|g| g.name.ends_with(" · fp8") == fp8)
        .flat_map(|g| g.errors.clone())
        .collect()
}

#[test]
fn calibrating_on_one_run_predicts_the_others() {
    let groups = groups();
    let t = table(&groups);
    println!("{t}");
    assert!(groups.len() >= 3, "{} groups\n{t}", groups.len());
    let unfitted: Vec<&String> = groups.iter().flat_map(|g| &g.unfitted).collect();
    assert!(unfitted.is_empty(), "no factor fits {unfitted:?}\n{t}");
    // the ratchet holds the 16-bit groups; the FP8 groups, estimated since, have their own
    let every = errors(&groups, false);
    assert!(
        median(every.clone()) <= ALL_MEDIAN + 0.05 && within(&every, 15.0) >= ALL_WITHIN_15 - 0.005,
        "worse than the ratchet with the added records (median {ALL_MEDIAN} %, {ALL_WITHIN_15} within ±15 %)\n{t}"
    );
    let all = errors(&groups_of(|r| r.get("added").is_none()), false);
    let med = median(all.clone());
    let share = within(&all, 15.0);
    let fp8 = errors(&groups, true);
    assert!(
        !fp8.is_empty()
            && median(fp8.clone()) <= FP8_MEDIAN + 0.05
            && within(&fp8, 15.0) >= FP8_WITHIN_15 - 0.005,
        "worse than the FP8 ratchet (median {FP8_MEDIAN} %, {FP8_WITHIN_15} within ±15 %)\n{t}"
    );
    assert!(
        med <= MEDIAN.max(MEDIAN_GOAL) + 0.05 && share >= WITHIN_15.min(WITHIN_15_GOAL) - 0.005,
        "worse than the ratchet: median {med:.1} % (so far {MEDIAN}, goal {MEDIAN_GOAL}), {:.0} % within ±15 % (so far {:.0} %, goal {:.0} %)\n{t}",
        share * 100.0,
        WITHIN_15 * 100.0,
        WITHIN_15_GOAL * 100.0
    );
    let doc = crate::common::files::read("docs/estimates.md");
    assert!(
        doc.contains(&t),
        "docs/estimates.md's leave-one-out table differs from the test's; it should read:\n{t}"
    );
}

/// A planner row's link (`inputs`: the link's with the row's assignments) computes the row's
/// step time exactly.
fn shows_the_rows_step_time(l: &query::Link, inputs: &RawInputs, row: &PlanRow) {
    let rep = l.framework.compute(l.release().id, inputs);
    assert_eq!(
        float(&rep, Output::StepTimeSeconds),
        Some(row.step_seconds),
        "{}",
        row.query()
    );
}

/// Calibrated on its own measurement, a record's estimate is that measurement (to the three
/// decimals of the factor), and its uncalibrated step time and error are shown beside it.
#[test]
fn a_record_calibrated_on_itself_takes_its_measured_time() {
    let r = record("tt-a100-llama3-70b-fsdp64-full");
    let m = estimable(&r).expect("estimated");
    let rep = report(&format!("{}&tokens_per_second_per_gpu={m}", r.link));
    let k = float(&rep, Output::CalibrationComputeFactor).expect("a factor");
    let step = float(&rep, Output::StepTimeSeconds).unwrap();
    let uncalibrated = float(&rep, Output::StepTimeUncalibratedSeconds).unwrap();
    let error = float(&rep, Output::StepTimeUncalibratedError).unwrap();
    let measured_step = float(&rep, Output::TimePerStepSeconds).unwrap();
    assert!(k != 1.0 && (0.25..=4.0).contains(&k), "{k}");
    assert!(
        (step / measured_step - 1.0).abs() < 0.001,
        "{step} vs {measured_step}"
    );
    assert!(
        ((uncalibrated - measured_step) / measured_step - error).abs() < 1e-9,
        "{error}"
    );
    // the factor multiplies the compute only: the communication parts stay the network model's
    let plain = report(&r.link);
    for o in [Output::StepTpCommSeconds, Output::StepPpBubbleSeconds] {
        assert_eq!(float(&rep, o), float(&plain, o), "{o:?}");
    }
    let compute = float(&rep, Output::StepComputeSeconds).unwrap();
    let compute0 = float(&plain, Output::StepComputeSeconds).unwrap();
    assert!(
        (compute / compute0 - k).abs() < 0.02,
        "{compute} / {compute0} vs {k}"
    );
}

/// A measured speed is the link's own layout's: the planner ranks every plan with the factor it
/// fits, each row says so, and each row's link carries the factor instead of the speed and
/// shows the row's step time; `dpcalc check --json` prints the factor.
#[test]
fn the_planner_ranks_and_links_with_the_factor() {
    let r = record("tt-a100-llama3-8b-fsdp64-sel-layer");
    let m = estimable(&r).expect("estimated");
    let q = format!("{}&tokens_per_second_per_gpu={m}", r.link);
    let l = query::decode(&q);
    let base = l.report();
    let k = float(&base, Output::CalibrationComputeFactor).expect("a factor");
    let plans = dpcalc::calc::planner::rank(l.framework, l.release().id, &l.inputs);
    assert!(plans.rows.len() >= 3, "{:?}", plans.note);
    for row in &plans.rows {
        assert_eq!(row.compute_factor, Some(k));
        // one measured run: the communication keeps the network model's rates
        assert_eq!(row.comm_factor, None);
        let mut inputs = l.inputs.clone();
        for (f, v) in &row.assignments {
            inputs.set(*f, v);
        }
        assert!(inputs.get(Field::TokensPerSecondPerGpu).is_empty());
        assert_eq!(
            inputs.get(Field::CalibrationComputeFactor),
            dpcalc::calc::num::float_repr(k)
        );
        shows_the_rows_step_time(&l, &inputs, row);
    }
    // an uncalibrated ranking is another one: the factor moves the step times
    let plain =
        dpcalc::calc::planner::rank(l.framework, l.release().id, &query::decode(&r.link).inputs);
    assert!(plain.rows.iter().all(|p| p.compute_factor.is_none()));
    assert_ne!(plain.rows[0].step_seconds, plans.rows[0].step_seconds);
    // the scaling view: every size is planned with the link's factor, not refitted at its size
    let scale = dpcalc::calc::scaling::scale(l.framework, l.release().id, &l.inputs);
    let planned: Vec<_> = scale.rows.iter().filter_map(|r| r.plan_inputs()).collect();
    assert!(planned.len() >= 2, "{:?}", scale.note);
    for inputs in &planned {
        assert!(inputs.get(Field::TokensPerSecondPerGpu).is_empty());
        assert_eq!(
            inputs.get(Field::CalibrationComputeFactor),
            dpcalc::calc::num::float_repr(k)
        );
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dpcalc"))
        .args(["check", "--json", &q])
        .output()
        .expect("dpcalc runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        json["outputs"]["calibration_compute_factor"].as_f64(),
        Some(k),
        "{json}"
    );
}

/// A factor outside 0.25–4 is refused at its field; one beyond ±25 % is applied with a warning.
#[test]
fn the_factor_is_bounded_and_warned_beyond_25_percent() {
    let r = record("tt-a100-llama3-8b-fsdp64-sel-layer");
    let refused = report(&format!("{}&calibration_compute_factor=5", r.link));
    assert!(refused
        .diags_for(Field::CalibrationComputeFactor)
        .any(|d| d.level == Level::Error));
    let warned = report(&format!("{}&calibration_compute_factor=1.5", r.link));
    assert!(warned
        .diags_for(Field::CalibrationComputeFactor)
        .any(|d| d.level == Level::Warning && d.message.contains("±25 %")));
    assert_eq!(float(&warned, Output::CalibrationComputeFactor), Some(1.5));
    let fine = report(&format!("{}&calibration_compute_factor=1.1", r.link));
    assert_eq!(fine.diags_for(Field::CalibrationComputeFactor).count(), 0);
    // a measured speed no factor reproduces: said, and uncalibrated
    let far = report(&format!("{}&tokens_per_second_per_gpu=1", r.link));
    assert!(far
        .diags_for(Field::TokensPerSecondPerGpu)
        .any(|d| d.message.starts_with("No calibration")));
    assert_eq!(float(&far, Output::CalibrationComputeFactor), Some(1.0));
}

/// A Megatron-LM link on 4 nodes of H100 whose step exposes tensor- and data-parallel
/// communication (no gradient-reduce overlap by default), the same inputs measured on 8 nodes
/// too.
const TWO_RUNS: &str = "?framework=megatron&version=0.19.2&nodes=4&gpus_per_node=8&tensor_model_parallel_size=8&pipeline_model_parallel_size=1&micro_batch_size=1&global_batch_size=128&seq_length=4096&model=meta-llama/Llama-2-13b-hf&gpu=h100-sxm&train_iters=100";

/// Two "measured" runs synthesized by dpcalc's own model with known factors (1.2 on the compute,
/// 1.5 on the communication) at 4 and 8 nodes: given as the link's `seconds_per_step` and the
/// second run's `second_run_tokens_per_second_per_gpu` (its own global batch's tokens over its
/// 64 GPUs), both factors are recovered, both runs reproduced, and the planner ranks and links
/// with both; one run alone leaves the communication factor at 1 with a note.
#[test]
fn two_runs_at_two_node_counts_recover_both_factors() {
    let (k, c) = (1.2, 1.5);
    let typed = format!("&calibration_compute_factor={k}&calibration_comm_factor={c}");
    let on = |nodes: u64| TWO_RUNS.replace("nodes=4", &format!("nodes={nodes}"));
    let run1 = report(&format!("{}{typed}", on(4)));
    let run2 = report(&format!("{}{typed}", on(8)));
    let s1 = float(&run1, Output::StepTimeSeconds).unwrap();
    let tps2 = float(&run2, Output::TokensPerSecondPerGpu).unwrap();
    // the communication is a part of both steps that the factor moves, more on 8 nodes
    let share = |r: &Report| {
        let comm = [Output::StepTpCommSeconds, Output::StepDpCommSeconds]
            .map(|o| float(r, o).unwrap())
            .iter()
            .sum::<f64>();
        comm / float(r, Output::StepTimeSeconds).unwrap()
    };
    assert!(share(&run1) > 0.2 && share(&run2) > share(&run1) + 0.02);
    let q = format!(
        "{TWO_RUNS}&seconds_per_step={s1}&second_run_nodes=8&second_run_tokens_per_second_per_gpu={tps2}"
    );
    let fitted = report(&q);
    assert_eq!(float(&fitted, Output::CalibrationComputeFactor), Some(k));
    assert_eq!(float(&fitted, Output::CalibrationCommFactor), Some(c));
    assert!((float(&fitted, Output::StepTimeSeconds).unwrap() / s1 - 1.0).abs() < 1e-9);
    // fitted, so warned at the second run beyond ±25 % (and only that)
    let said: Vec<_> = fitted.diags_for(Field::SecondRunNodes).collect();
    assert!(
        said.len() == 1
            && said[0]
                .message
                .starts_with("The communication factor 1.50 is beyond ±25 %"),
        "{said:?}"
    );
    // the uncalibrated communication is the network model's: the calibrated parts are c times it
    let plain = report(TWO_RUNS);
    let tp = |r: &Report| float(r, Output::StepTpCommSeconds).unwrap();
    assert!(
        (tp(&fitted) / tp(&plain) - c).abs() < 1e-9,
        "{} vs {}",
        tp(&fitted),
        tp(&plain)
    );

    // one run: the compute factor alone, the communication factor 1 with a note
    let one = report(&format!("{TWO_RUNS}&seconds_per_step={s1}"));
    assert_eq!(float(&one, Output::CalibrationCommFactor), Some(1.0));
    let k1 = float(&one, Output::CalibrationComputeFactor).unwrap();
    assert!(
        k1 > k,
        "one factor takes the communication's share too: {k1}"
    );
    assert!(one
        .diags_for(Field::SecondRunNodes)
        .any(|d| d.level == Level::Note && d.message.contains("communication factor stays 1")));

    // the planner: every row ranked with both factors, its link carries them instead of the
    // measurements and shows the row's step time
    let l = query::decode(&q);
    let plans = dpcalc::calc::planner::rank(l.framework, l.release().id, &l.inputs);
    assert!(plans.rows.len() >= 3, "{:?}", plans.note);
    for row in &plans.rows {
        assert_eq!((row.compute_factor, row.comm_factor), (Some(k), Some(c)));
        let mut inputs = l.inputs.clone();
        for (f, v) in &row.assignments {
            inputs.set(*f, v);
        }
        for f in [
            Field::SecondsPerStep,
            Field::SecondRunNodes,
            Field::SecondRunTokensPerSecondPerGpu,
        ] {
            assert!(inputs.get(f).is_empty(), "{f:?}");
        }
        assert_eq!(inputs.get(Field::CalibrationCommFactor), "1.5");
        shows_the_rows_step_time(&l, &inputs, row);
    }
}

/// A second run that cannot calibrate says why at `second_run_nodes` and leaves the
/// communication factor at 1: the link's node count again, no speed, no node count, a speed no
/// pair of factors reproduces, and a communication factor typed out of bounds is refused.
#[test]
fn a_second_run_that_cannot_calibrate_says_why() {
    let warned = |q: &str, field: Field, text: &str| {
        let r = report(&format!("{TWO_RUNS}{q}"));
        assert!(
            r.diags_for(field).any(|d| d.message.contains(text)),
            "{q}: {:?}",
            r.diags
        );
        r
    };
    let r = warned(
        "&seconds_per_step=6&second_run_nodes=4&second_run_seconds_per_step=6",
        Field::SecondRunNodes,
        "needs another node count",
    );
    assert_eq!(float(&r, Output::CalibrationCommFactor), Some(1.0));
    warned(
        "&seconds_per_step=6&second_run_nodes=8",
        Field::SecondRunNodes,
        "needs its measured speed",
    );
    warned(
        "&seconds_per_step=6&second_run_seconds_per_step=3",
        Field::SecondRunSecondsPerStep,
        "give second_run_nodes too",
    );
    warned(
        "&second_run_nodes=8&second_run_seconds_per_step=3",
        Field::SecondRunNodes,
        "the link's own measured run",
    );
    // 8 nodes faster than 4 by 10x: no factors reproduce both
    let r = warned(
        "&seconds_per_step=6&second_run_nodes=8&second_run_seconds_per_step=0.3",
        Field::SecondRunNodes,
        "No communication factor",
    );
    assert_eq!(float(&r, Output::CalibrationCommFactor), Some(1.0));
    assert!(float(&r, Output::CalibrationComputeFactor).is_some());
    let refused = report(&format!("{TWO_RUNS}&calibration_comm_factor=5"));
    assert!(refused
        .diags_for(Field::CalibrationCommFactor)
        .any(|d| d.level == Level::Error));
    let wide = report(&format!("{TWO_RUNS}&calibration_comm_factor=2"));
    assert!(wide
        .diags_for(Field::CalibrationCommFactor)
        .any(|d| d.level == Level::Warning && d.message.contains("±25 %")));
}
