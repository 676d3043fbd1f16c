//! The computed values, each in an element with `data-output` and, when it can be computed,
//! `data-value` (the exact value; see `Num::raw`). A value that cannot be computed says what it
//! needs instead (`calc::guide::needs`), with the fields' keys in `data-needs`. What each row
//! says is `crate::page`'s (the first view draws the same rows).

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{Framework, Output, RawInputs, Report};
use crate::page::{self, markup};

/// A computed value: `<div data-output=NAME data-value=RAW>` (the model panel shows only these).
pub fn computed_row(framework: Framework, report: &Report, output: Output) -> Html {
    draw_value(&page::value_row(framework, report, output, None))
}

/// One value, or what it needs (`page::row`); nothing when the page does not show it.
pub fn value_row(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
    output: Output,
) -> Html {
    page::row(framework, inputs, report, output).map_or_else(Html::default, |r| draw_value(&r))
}

/// Draws a [`page::ValueRow`] (the first view writes the same, `src/first.rs`).
pub fn draw_value(row: &page::ValueRow) -> Html {
    let class = classes!(markup::VALUE, row.raw.is_none().then_some(markup::MISSING));
    html! {
        <div {class}>
            <dt>{ row.label }<code class={markup::KEY}>{ row.config_name }</code></dt>
            <dd data-output={row.output} data-value={row.raw.clone()} data-needs={row.needs.clone()}>{ row.shown.clone() }</dd>
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
        <section class={markup::RESULTS} id={markup::RESULTS} aria-label={markup::RESULTS_ARIA} aria-live={markup::POLITE}>
            <h2>{ page::results_title(fw, props.release) }</h2>
            <dl>{ for page::results(fw, &props.inputs, r).iter().map(draw_value) }</dl>
        </section>
    }
}
