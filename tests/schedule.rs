//! Tokens and time: the arithmetic of `calc::schedule`, checked against values worked by hand
//! from the formulas (module documentation), through axolotl's compute.

use crate::common::report::int;
use dpcalc::calc::schedule::{self, human_count, human_duration};
use dpcalc::calc::{Field, Framework, Level, Num, Output, RawInputs, Report};

fn run(pairs: &[(Field, &str)]) -> Report {
    Framework::Axolotl.compute("0.19.0", &RawInputs::from_pairs(pairs.iter().copied()))
}

fn float(r: &Report, o: Output) -> Option<f64> {
    r.value(o).map(Num::to_f64)
}

#[test]
fn tokens_per_step_epoch_and_total() {
    // 8 GPUs, mbs 2, ga 4: batch 64; 1000 rows × 2 epochs: ceil(2000/64) = 32 steps, 16 per epoch
    let r = run(&[
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumSamples, "1000"),
        (Field::NumEpochs, "2"),
        (Field::SequenceLen, "4096"),
    ]);
    assert_eq!(int(&r, Output::TokensPerStep), Some(64 * 4096));
    assert_eq!(int(&r, Output::StepsPerEpoch), Some(16));
    assert_eq!(int(&r, Output::TokensPerEpoch), Some(64 * 4096 * 16));
    assert_eq!(int(&r, Output::MaxSteps), Some(32));
    assert_eq!(int(&r, Output::TotalTokens), Some(64 * 4096 * 32));
    // no throughput: no time
    assert_eq!(r.value(Output::TimePerStepSeconds), None);
}

#[test]
fn time_from_tokens_per_second() {
    // 262,144 tokens per step / (4096 tokens/s/GPU × 8 GPUs) = 8 s; × 32 steps = 256 s;
    // 256 s × 8 GPUs / 3600 = 0.5688… GPU-hours
    let r = run(&[
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumSamples, "1000"),
        (Field::NumEpochs, "2"),
        (Field::SequenceLen, "4096"),
        (Field::TokensPerSecondPerGpu, "4096"),
    ]);
    assert_eq!(float(&r, Output::TimePerStepSeconds), Some(8.0));
    assert_eq!(float(&r, Output::TotalTimeSeconds), Some(256.0));
    assert_eq!(float(&r, Output::GpuHours), Some(256.0 * 8.0 / 3600.0));
    // seconds_per_step instead
    let r = run(&[(Field::NumSamples, "1000"), (Field::SecondsPerStep, "1.5")]);
    // batch 8, ceil(1000/8) = 125 steps × 1.5 s = 187.5 s
    assert_eq!(float(&r, Output::TotalTimeSeconds), Some(187.5));
    assert_eq!(float(&r, Output::GpuHours), Some(187.5 * 8.0 / 3600.0));
}

#[test]
fn throughput_refusals() {
    let both = run(&[
        (Field::NumSamples, "1000"),
        (Field::SecondsPerStep, "1"),
        (Field::TokensPerSecondPerGpu, "1000"),
    ]);
    assert_eq!(
        both.diags_for(Field::SecondsPerStep)
            .filter(|d| d.level == Level::Error)
            .count(),
        1
    );
    assert_eq!(both.value(Output::TotalTimeSeconds), None);
    let zero = run(&[(Field::TokensPerSecondPerGpu, "0")]);
    assert!(zero
        .diags_for(Field::TokensPerSecondPerGpu)
        .any(|d| d.level == Level::Error));
    let bad = run(&[(Field::SecondsPerStep, "fast")]);
    assert_eq!(bad.diags_for(Field::SecondsPerStep).count(), 1);
    // too large to represent: an error, not a missing value
    let huge = run(&[
        (Field::NumSamples, "1000000"),
        (Field::SecondsPerStep, "1e308"),
    ]);
    assert_eq!(huge.value(Output::TotalTimeSeconds), None);
    assert!(huge
        .diags_for(Field::SecondsPerStep)
        .any(|d| d.level == Level::Error));
    let tiny = run(&[(Field::TokensPerSecondPerGpu, "1e-320")]);
    assert_eq!(tiny.value(Output::TimePerStepSeconds), None);
    assert!(tiny
        .diags_for(Field::TokensPerSecondPerGpu)
        .any(|d| d.level == Level::Error));
    // max_steps -1 (0 steps): no totals
    let r = run(&[(Field::NumSamples, "0"), (Field::SecondsPerStep, "2")]);
    assert_eq!(r.value(Output::TotalTimeSeconds), None);
    assert_eq!(float(&r, Output::TimePerStepSeconds), Some(2.0));
}

#[test]
fn units() {
    assert_eq!(human_count(950.0), "950");
    assert_eq!(human_count(1_000.0), "1 K");
    assert_eq!(human_count(1_234.0), "1.23 K");
    assert_eq!(human_count(262_144.0), "262 K");
    assert_eq!(human_count(999_999.0), "1 M");
    assert_eq!(human_count(3_460_000.0), "3.46 M");
    assert_eq!(human_count(12_600_000_000.0), "12.6 B");
    assert_eq!(human_count(2.0e12), "2 T");
    assert_eq!(human_count(0.5), "0.5");
    assert_eq!(human_duration(0.25), "250 ms");
    assert_eq!(human_duration(8.0), "8 s");
    assert_eq!(human_duration(90.0), "1.5 min");
    assert_eq!(human_duration(3.0 * 3600.0), "3 h");
    assert_eq!(human_duration(2.5 * 86_400.0), "2.5 d");
    assert_eq!(
        schedule::human(Output::GpuHours, Num::Float(1500.0)),
        "1.5 K GPU-hours"
    );
}

#[test]
fn timeline_points() {
    // 125 steps, 3 epochs' worth? 1000 rows, batch 8, 3 epochs: ceil(3000/8) = 375 steps,
    // 125 per epoch; warmup min(int(0.03 × 375), 100) = 11; 2 evals and 4 saves per epoch.
    let r = run(&[
        (Field::NumSamples, "1000"),
        (Field::NumEpochs, "3"),
        (Field::ValSetSize, "0.1"),
        (Field::EvalsPerEpoch, "2"),
        (Field::SavesPerEpoch, "4"),
    ]);
    let t = schedule::timeline(&r).unwrap();
    assert_eq!(t.total, 375);
    assert_eq!(t.warmup, Some(11));
    let e = t.epochs.unwrap();
    assert_eq!((e.count, e.at.clone()), (3, vec![125.0, 250.0, 375.0]));
    // eval_steps = ceil(375 × 1/(2×3)) = 63 → 5 marks within 375; saves ceil(375/12) = 32 → 11
    let ev = t.evals.unwrap();
    assert_eq!((ev.every, ev.count), (63.0, 5));
    let sv = t.saves.unwrap();
    assert_eq!((sv.every, sv.count), (32.0, 11));
    assert!(sv.complete());
    // many marks are capped
    let r = run(&[(Field::NumSamples, "1000000"), (Field::NumEpochs, "1000")]);
    let t = schedule::timeline(&r).unwrap();
    let e = t.epochs.unwrap();
    assert_eq!(e.count, 1000);
    assert_eq!(e.at.len(), schedule::Marks::LIMIT);
    assert!(!e.complete());
}

/// `total_cost = gpu_hours × gpu_hour_price`, named in the worked steps; absent without a
/// price; a negative or non-number price, a deadline of 0 and `max_nodes` out of 1–1024 are
/// errors at their own fields, and none of them changes another value.
#[test]
fn cost_from_the_gpu_hour_price() {
    let base = [(Field::NumSamples, "1000"), (Field::SecondsPerStep, "1.5")];
    let plain = run(&base);
    assert_eq!(plain.value(Output::TotalCost), None);
    let priced = run(&[base[0], base[1], (Field::GpuHourPrice, "2.5")]);
    // 187.5 s × 8 GPUs / 3600 = 0.41666… GPU-hours × 2.5
    assert_eq!(
        float(&priced, Output::TotalCost),
        Some(187.5 * 8.0 / 3600.0 * 2.5)
    );
    assert!(priced
        .steps
        .iter()
        .any(|w| w.output == Output::TotalCost
            && w.rule == "total_cost = gpu_hours × gpu_hour_price"));
    for o in Output::ALL.iter().filter(|&&o| o != Output::TotalCost) {
        assert_eq!(priced.value(*o), plain.value(*o), "{o:?}");
    }
    for (field, text, says) in [
        (
            Field::GpuHourPrice,
            "-1",
            "gpu_hour_price cannot be negative",
        ),
        (Field::GpuHourPrice, "two", "gpu_hour_price is not a number"),
        (
            Field::DeadlineHours,
            "0",
            "deadline_hours must be more than 0",
        ),
        (
            Field::DeadlineHours,
            "-3",
            "deadline_hours cannot be negative",
        ),
        (Field::MaxNodes, "0", "max_nodes must be from 1 to 1024"),
        (Field::MaxNodes, "2048", "max_nodes must be from 1 to 1024"),
        (Field::MaxNodes, "1.5", "max_nodes"),
    ] {
        let r = run(&[base[0], base[1], (field, text)]);
        let d = (r.diags.iter())
            .find(|d| d.field == field && d.level == Level::Error)
            .unwrap_or_else(|| panic!("{field:?}={text}: no error at the field"));
        assert!(d.message.contains(says), "{field:?}={text}: {}", d.message);
        assert_eq!(r.value(Output::TotalCost), None);
    }
}
