//! The compact summary a small screen keeps at the top while the form scrolls (`[data-summary-bar]`):
//! dp, global batch and steps (`calc::guide::summary`), each `[data-summary=NAME]` (not
//! `data-output`: the results keep one element per output), and the first error with a link to
//! its field. Hidden on wide screens, where the results sit beside the form.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{Framework, RawInputs, Report};
use crate::page::{self, markup};

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
        <section class={markup::SUMMARY_BAR} data-summary-bar="" aria-label={markup::SUMMARY_ARIA}>
            <dl>
                { for s.rows.into_iter().map(|r| html! {
                    <div class={classes!(markup::SUM, r.raw.is_none().then_some(markup::MISSING))}>
                        <dt>{ r.label }</dt>
                        <dd data-summary={r.output} data-value={r.raw}>{ r.shown }</dd>
                    </div>
                }) }
            </dl>
            if let Some((key, lead, message)) = s.error {
                <p class={markup::SUM_ERROR} data-summary={markup::SUMMARY_ERROR}>
                    <a href={markup::id(markup::IN_HREF, key)}>{ lead }</a>
                    <span>{ message }</span>
                </p>
            }
            <a class={markup::SUM_MORE} href={markup::RESULTS_HREF}>{ markup::ALL_RESULTS }</a>
        </section>
    }
}

/// The one-click examples near the top (`query::example_links`): each `a[data-example]` whose
/// `href` is a complete link with its `version=`.
#[function_component(Examples)]
pub fn examples() -> Html {
    let base = crate::web::base_url();
    html! {
        <nav class={markup::EXAMPLES} aria-label={markup::EXAMPLES_ARIA}>
            <span class={markup::EXAMPLES_LEAD_CLASS}>{ markup::EXAMPLES_LEAD }</span>
            { for page::examples(&base).into_iter().map(|(label, href)| html! {
                <a data-example="" {href}>{ label }</a>
            }) }
        </nav>
    }
}
