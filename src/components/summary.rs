//! The compact summary a small screen keeps at the top while the form scrolls (`[data-summary-bar]`):
//! dp, global batch and steps (`calc::guide::summary`), each `[data-summary=NAME]` (not
//! `data-output`: the results keep one element per output), and the first error with a link to
//! its field. Hidden on wide screens, where the results sit beside the form.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{Framework, RawInputs, Report};
use crate::page;

#[derive(Properties, PartialEq)]
pub struct SummaryProps {
    pub framework: Framework,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

#[function_component(Summary)]
pub fn summary(props: &SummaryProps) -> Html {
    let s = page::summary(props.framework, &props.inputs, &props.report);
    html! {
        <section class="summary-bar" data-summary-bar="" aria-label="Key results">
            <dl>
                { for s.rows.into_iter().map(|r| html! {
                    <div class={classes!("sum", r.raw.is_none().then_some("missing"))}>
                        <dt>{ r.label }</dt>
                        <dd data-summary={r.output} data-value={r.raw}>{ r.shown }</dd>
                    </div>
                }) }
            </dl>
            if let Some((key, lead, message)) = s.error {
                <p class="sum-error" data-summary="error">
                    <a href={format!("#in-{key}")}>{ lead }</a>
                    <span>{ message }</span>
                </p>
            }
            <a class="sum-more" href="#results">{ "All results" }</a>
        </section>
    }
}

/// The one-click examples near the top (`query::example_links`): each `a[data-example]` whose
/// `href` is a complete link with its `version=`.
#[function_component(Examples)]
pub fn examples() -> Html {
    let base = crate::web::base_url();
    html! {
        <nav class="examples" aria-label="Examples">
            <span class="examples-label">{ "Try:" }</span>
            { for page::examples(&base).into_iter().map(|(label, href)| html! {
                <a data-example="" {href}>{ label }</a>
            }) }
        </nav>
    }
}
