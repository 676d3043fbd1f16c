//! The computed values, each in an element with `data-output` and, when it can be computed,
//! `data-value` (the exact value; see `Num::raw`). A value that cannot be computed says what it
//! needs instead (`calc::guide::needs`), with the fields' keys in `data-needs`.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::guide::{self, Missing};
use crate::calc::{view, Framework, Output, RawInputs, Report};

/// One value: `<div data-output=NAME data-value=RAW>`; without `data-value` when not computable.
pub fn value_row(framework: Framework, report: &Report, output: Output) -> Html {
    value_row_with(framework, report, output, None)
}

/// One value, and when it cannot be computed what it needs (`needs NAME`, `data-needs=KEYS`).
pub fn value_row_with(
    framework: Framework,
    report: &Report,
    output: Output,
    missing: Option<Missing>,
) -> Html {
    let (label, config_name) = framework.label(output);
    let value = report.value(output);
    let raw = value.map(|v| AttrValue::from(v.raw()));
    let shown = match (value, &missing) {
        (Some(v), _) => view::shown_value(output, v),
        (None, Some(m)) => m.text(framework),
        (None, None) => "\u{2014}".to_string(),
    };
    let needs = missing
        .as_ref()
        .map(Missing::keys)
        .filter(|k| !k.is_empty())
        .map(AttrValue::from);
    let class = classes!("value", value.is_none().then_some("missing"));
    html! {
        <div {class}>
            <dt>{ label }<code class="key">{ config_name }</code></dt>
            <dd data-output={output.name()} data-value={raw} data-needs={needs}>{ shown }</dd>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct ResultsProps {
    pub framework: Framework,
    pub release: &'static str,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

#[function_component(Results)]
pub fn results(props: &ResultsProps) -> Html {
    let (fw, r) = (props.framework, &*props.report);
    html! {
        <section class="results" id="results" aria-label="Results" aria-live="polite">
            <h2>{ format!("What {} {} computes", fw.name(), props.release) }</h2>
            <dl>{ for fw.outputs().iter().map(|&o| value_row_with(fw, r, o, guide::needs(fw, &props.inputs, r, o))) }</dl>
        </section>
    }
}
