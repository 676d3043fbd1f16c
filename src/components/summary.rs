//! The compact summary a small screen keeps at the top while the form scrolls (`[data-summary-bar]`):
//! dp, global batch and steps (`calc::guide::summary`), each `[data-summary=NAME]` (not
//! `data-output`: the results keep one element per output), and the first error with a link to
//! its field. Hidden on wide screens, where the results sit beside the form.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::guide;
use crate::calc::{Framework, RawInputs, Report};

#[derive(Properties, PartialEq)]
pub struct SummaryProps {
    pub framework: Framework,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

#[function_component(Summary)]
pub fn summary(props: &SummaryProps) -> Html {
    let s = guide::summary(props.framework, &props.inputs, &props.report);
    html! {
        <section class="summary-bar" data-summary-bar="" aria-label="Key results">
            <dl>
                { for s.items.iter().map(|i| {
                    let value = i.computed.then(|| AttrValue::from(
                        props.report.value(i.output).map(|v| v.raw()).unwrap_or_default()));
                    html! {
                        <div class={classes!("sum", (!i.computed).then_some("missing"))}>
                            <dt>{ i.label }</dt>
                            <dd data-summary={i.output.name()} data-value={value}>{ i.shown.clone() }</dd>
                        </div>
                    }
                }) }
            </dl>
            if let Some((field, message, count)) = s.error.clone() {
                <p class="sum-error" data-summary="error">
                    <a href={format!("#in-{}", field.key())}>
                        { if count > 1 { format!("{count} errors; first at {}: ", field.key()) } else { format!("Error at {}: ", field.key()) } }
                    </a>
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
            { for crate::query::example_links().into_iter().map(|(label, q)| html! {
                <a data-example="" href={crate::state::url_with(&base, &q)}>{ label }</a>
            }) }
        </nav>
    }
}
