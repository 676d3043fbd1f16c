//! The results: how the list shows a value, the worked steps in the order of the outputs they
//! compute ("How this is computed"), and the comparison with another release the framework's
//! `Spec::legacy` names.

use crate::calc::{Framework, Num, Output, Report, Step};

/// How the results list shows a value: the exact number, with bytes also in GiB.
pub fn shown_value(output: Output, v: Num) -> String {
    match v {
        Num::Int(b) if output.name().ends_with("_bytes") && b > 0 => {
            format!("{} ({})", crate::calc::num::gib(b as u128), v.pretty())
        }
        // the step time's parts and its MFU read as durations and a percentage (the exact value
        // is the element's data-value); only the full app has them (a first view holds none of
        // this formatting)
        Num::Float(_)
            if crate::calc::first_view::FULL
                && matches!(
                    output,
                    Output::StepTimeSeconds
                        | Output::StepComputeSeconds
                        | Output::StepTpCommSeconds
                        | Output::StepCpCommSeconds
                        | Output::StepEpCommSeconds
                        | Output::StepPpBubbleSeconds
                        | Output::StepDpCommSeconds
                        | Output::StepTimeUncalibratedSeconds
                        | Output::StepTimeUncalibratedError
                        | Output::MfuEstimate
                ) =>
        {
            crate::calc::schedule::human(output, v)
        }
        _ => v.pretty(),
    }
}

/// The worked steps in the order of the outputs they compute.
pub fn steps(report: &Report) -> Vec<&Step> {
    let mut steps: Vec<_> = report.steps.iter().collect();
    steps.sort_by_key(|s| s.output);
    steps
}

pub use crate::calc::spec::Legacy;

/// The comparison shown with `framework` at `release`, if the framework has one (its
/// `Spec::legacy`: axolotl's other release). Its values are the report's `Legacy*` outputs.
pub fn legacy(framework: Framework, release: &str) -> Option<Legacy> {
    framework.spec().legacy.map(|of| of(release))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::view::testing::{fw, raw};
    use crate::calc::Field;

    #[test]
    fn the_step_time_reads_as_durations_and_a_percentage() {
        assert_eq!(
            shown_value(Output::StepTimeSeconds, Num::Float(23.569)),
            "23.6 s"
        );
        assert_eq!(
            shown_value(Output::StepTpCommSeconds, Num::Float(0.0123)),
            "12.3 ms"
        );
        assert_eq!(
            shown_value(Output::MfuEstimate, Num::Float(0.6088)),
            "60.9 %"
        );
        // other floats as they are
        assert_eq!(
            shown_value(Output::TokensPerSecondPerGpu, Num::Float(1.5)),
            Num::Float(1.5).pretty()
        );
    }

    #[test]
    fn steps_are_in_output_order() {
        let fw = fw("axolotl");
        let inputs = raw(&[
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumSamples, "1000"),
        ]);
        let mut report = fw.compute("0.19.0", &inputs);
        report.steps.reverse();
        let s = steps(&report);
        assert!(s.len() > 2, "{s:?}");
        assert_eq!(s.len(), report.steps.len());
        assert!(s.windows(2).all(|w| w[0].output <= w[1].output));
        assert_eq!(
            s[0].output,
            report.steps.iter().map(|s| s.output).min().unwrap()
        );
    }

    #[test]
    fn the_legacy_comparison_is_the_other_axolotl_release() {
        for r in ["0.19.0", "0.18.0", "not-a-release"] {
            let l = legacy(fw("axolotl"), r).unwrap();
            assert_eq!(l.other, "0.14.0", "{r}");
            assert!(l.title.contains("Before the fix"));
        }
        let l = legacy(fw("axolotl"), "0.14.0").unwrap();
        assert_eq!(l.other, "0.19.0");
        assert!(l.title.contains("After the fix"));
        assert!(l.help.contains("world_size // cp // tp"));
        // every axolotl release has one; no other framework does
        for r in fw("axolotl").releases() {
            assert!(legacy(fw("axolotl"), r.id).is_some());
        }
        for &fw in Framework::ALL.iter().filter(|&&f| f != fw("axolotl")) {
            assert_eq!(legacy(fw, fw.default_release().id), None, "{fw:?}");
        }
        // and the report has its values
        let report = fw("axolotl").compute(
            "0.19.0",
            &raw(&[
                (Field::MicroBatchSize, "1"),
                (Field::GradientAccumulationSteps, "1"),
            ]),
        );
        assert!(report.value(Output::LegacyGlobalBatchSize).is_some());
    }
}
