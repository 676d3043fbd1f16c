//! "Model, memory and compute": the model's parameter counts, the frameworks' own estimators
//! (DeepSpeed's ZeRO model states, Megatron's theoretical memory, FLOPs per token in four
//! conventions) and the published-formula memory per GPU as a stacked bar against the GPU's
//! memory. Every number is the core's (`calc::fit`); the bar's geometry is `calc::view`'s.

use std::rc::Rc;

use yew::prelude::*;

use super::results::computed_row as value_row;
use crate::calc::{view, Framework, Output, Report};

#[derive(Properties, PartialEq)]
pub struct MemoryProps {
    pub framework: Framework,
    pub report: Rc<Report>,
}

/// A titled list of values, each labelled with its source, shown when any of them is computed.
fn group(fw: Framework, report: &Report, g: view::ValueGroup) -> Html {
    let view::ValueGroup {
        title,
        source,
        outputs,
    } = g;
    if outputs.iter().all(|&o| report.value(o).is_none()) {
        return html! {};
    }
    html! {
        <div class="fit-group">
            <h3>{ title }</h3>
            <p class="source">{ source }</p>
            <dl>{ for outputs.iter().filter(|&&o| report.value(o).is_some()).map(|&o| value_row(fw, report, o)) }</dl>
        </div>
    }
}

#[function_component(Memory)]
pub fn memory(props: &MemoryProps) -> Html {
    let (fw, report) = (props.framework, &*props.report);
    if !view::has_model(report) {
        return html! {
            <section class="fit" aria-label="Model, memory and compute">
                <h2>{ "Model, memory and compute" }</h2>
                <p class="hint" data-hint="model">{ format!("Pick a model ({}) and a GPU (gpu) to see its parameters, its memory per GPU, whether it fits and its FLOPs.", fw.spec().fit.model_key.key()) }</p>
            </section>
        };
    }
    let bar = view::memory_bar(report);
    html! {
        <section class="fit" aria-label="Model, memory and compute">
            <h2>{ "Model, memory and compute" }</h2>
            { group(fw, report, view::PARAMETERS) }
            { group(fw, report, view::ZERO_MODEL_STATES) }
            { group(fw, report, view::MEGATRON_MEMORY) }
            if let Some(bar) = bar {
                <div class="fit-group estimate">
                    <h3>{ view::MEMORY_ESTIMATE.title }</h3>
                    <p class="source">{ view::MEMORY_ESTIMATE.source }</p>
                    <svg class="membar" viewBox="0 0 100 12" preserveAspectRatio="none" role="img"
                        aria-label={format!("{} per GPU{}", bar.total_text, bar.capacity.as_ref().map_or(String::new(), |(_, c)| format!(" of {c}")))}>
                        { for bar.parts.iter().enumerate().map(|(i, p)| html! {
                            <rect class={format!("part p{i}")} x={format!("{:.3}", p.x)} y="1" width={format!("{:.3}", p.width)} height="10">
                                <title>{ format!("{}: {}", p.label, p.text) }</title>
                            </rect>
                        }) }
                        if let Some((x, _)) = &bar.capacity {
                            <line class="capacity" x1={format!("{x:.3}")} x2={format!("{x:.3}")} y1="0" y2="12" />
                        }
                    </svg>
                    <ul class="legend">
                        { for bar.parts.iter().enumerate().map(|(i, p)| html! {
                            <li><span class={format!("swatch p{i}")} aria-hidden="true"></span>{ format!("{}: {}", p.label, p.text) }</li>
                        }) }
                        if let Some((_, c)) = &bar.capacity {
                            <li><span class="swatch capacity" aria-hidden="true"></span>{ format!("GPU memory: {c} (the line)") }</li>
                        }
                    </ul>
                    <dl>
                        { value_row(fw, report, Output::MemoryPerGpuBytes) }
                        if let Some(row) = crate::page::stage_memory_row(report) {
                            { super::results::draw_value(&row) }
                        }
                        if let Some(row) = crate::page::stage_reserved_row(report) {
                            { super::results::draw_value(&row) }
                        }
                        { for view::MEMORY_ESTIMATE.outputs[1..].iter().copied()
                            .filter(|&o| report.value(o).is_some()).map(|o| value_row(fw, report, o)) }
                    </dl>
                    if let Some(w) = view::memory_warning(report) {
                        <p class="warning" data-warning="memory" role="status">{ w }</p>
                    } else if bar.fits == Some(true) {
                        <p class="note" data-fits="true">{ format!("Fits: {} of {} per GPU (estimated).", bar.total_text, bar.capacity.as_ref().map_or("", |(_, c)| c.as_str())) }</p>
                    }
                </div>
            }
            { group(fw, report, view::FLOPS) }
            { group(fw, report, view::STEP_TIME) }
            if report.value(Output::StepTimeSeconds).is_some() {
                <p class="plan-jump"><a href="#plan">{ "Which plan is fastest? The planner ranks every plan that fits ↓" }</a></p>
            }
        </section>
    }
}
