//! The computed values, each in an element with `data-output` and, when it can be computed,
//! `data-value` (the exact value; see `Num::raw`).

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{view, Framework, Output, Report};

/// One value: `<div data-output=NAME data-value=RAW>`; without `data-value` when not computable.
pub fn value_row(framework: Framework, report: &Report, output: Output) -> Html {
    let (label, config_name) = framework.label(output);
    let value = report.value(output);
    let raw = value.map(|v| AttrValue::from(v.raw()));
    let shown = value.map_or_else(|| "—".to_string(), |v| view::shown_value(output, v));
    let class = classes!("value", value.is_none().then_some("missing"));
    html! {
        <div {class}>
            <dt>{ label }<code class="key">{ config_name }</code></dt>
            <dd data-output={output.name()} data-value={raw}>{ shown }</dd>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct ResultsProps {
    pub framework: Framework,
    pub release: &'static str,
    pub report: Rc<Report>,
}

#[function_component(Results)]
pub fn results(props: &ResultsProps) -> Html {
    html! {
        <section class="results" aria-label="Results" aria-live="polite">
            <h2>{ format!("What {} {} computes", props.framework.name(), props.release) }</h2>
            <dl>{ for props.framework.outputs().iter().map(|&o| value_row(props.framework, &props.report, o)) }</dl>
        </section>
    }
}
