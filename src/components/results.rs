//! The computed values, each in an element with `data-output` and, when it can be computed,
//! `data-value` (the exact value; see `Num::raw`).

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{Output, Report};

fn label(output: Output) -> &'static str {
    match output {
        Output::WorldSize => "GPUs",
        Output::DpWorldSize => "Data-parallel replicas",
        Output::GradientAccumulationSteps => "Gradient accumulation steps",
        Output::GlobalBatchSize => "Global batch (samples per optimizer step)",
        Output::TotalNumSteps => "Total steps axolotl logs",
        Output::MaxSteps => "Optimizer steps the run takes",
        Output::StepsPerEpoch => "Steps per epoch",
        Output::WarmupSteps => "Warmup steps",
        Output::EvalSteps => "Evaluate every",
        Output::SaveSteps => "Save every",
        Output::TokensPerStep => "Token slots per step",
        Output::LegacyGlobalBatchSize => "Global batch",
        Output::LegacyTotalNumSteps => "Total steps",
    }
}

/// The config name shown beside a value.
fn config_name(output: Output) -> &'static str {
    match output {
        Output::GlobalBatchSize | Output::LegacyGlobalBatchSize => "batch_size",
        Output::MaxSteps => "Trainer max_steps",
        Output::LegacyTotalNumSteps => "total_num_steps",
        o => o.name(),
    }
}

const MAIN: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TotalNumSteps,
    Output::MaxSteps,
    Output::StepsPerEpoch,
    Output::WarmupSteps,
    Output::EvalSteps,
    Output::SaveSteps,
    Output::TokensPerStep,
];

/// One value: `<div data-output=NAME data-value=RAW>`; without `data-value` when not computable.
pub fn value_row(report: &Report, output: Output) -> Html {
    let value = report.value(output);
    let raw = value.map(|v| AttrValue::from(v.raw()));
    let shown = value.map_or_else(|| "—".to_string(), |v| v.pretty());
    let class = classes!("value", value.is_none().then_some("missing"));
    html! {
        <div {class}>
            <dt>{ label(output) }<code class="key">{ config_name(output) }</code></dt>
            <dd data-output={output.name()} data-value={raw}>{ shown }</dd>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct ResultsProps {
    pub report: Rc<Report>,
}

#[function_component(Results)]
pub fn results(props: &ResultsProps) -> Html {
    html! {
        <section class="results" aria-label="Results" aria-live="polite">
            <h2>{ "What axolotl computes" }</h2>
            <dl>{ for MAIN.iter().map(|&o| value_row(&props.report, o)) }</dl>
        </section>
    }
}
