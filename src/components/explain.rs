//! "How this is computed" (each rule with the user's numbers, in `calc::view::steps` order) and
//! the comparison with another release (`calc::view::legacy`: which one, its title and help).

use std::rc::Rc;

use yew::prelude::*;

use super::results::value_row;
use crate::calc::view::{self, Legacy as Other};
use crate::calc::{Framework, Output, RawInputs, Report};

#[derive(Properties, PartialEq)]
pub struct ReportProps {
    pub report: Rc<Report>,
}

#[function_component(Explain)]
pub fn explain(props: &ReportProps) -> Html {
    let steps = view::steps(&props.report);
    html! {
        <details class="explain" open=true>
            <summary>{ "How this is computed" }</summary>
            <ol>
                { for steps.iter().map(|s| html! {
                    <li>
                        <span class="rule">{ s.rule.clone() }</span>
                        <code class="worked">{ s.worked.clone() }</code>
                    </li>
                }) }
            </ol>
        </details>
    }
}

/// The other release's numbers for the same inputs (a framework's `Spec::legacy`: axolotl's
/// 0.14.0, before PRs #3444 and #3462, under the newer releases, 0.19.0 under 0.14.0), as
/// `calc::view::legacy` describes it; the values are the report's `Legacy*` outputs.
#[derive(Properties, PartialEq)]
pub struct LegacyProps {
    pub framework: Framework,
    pub legacy: Other,
    /// Why it matters for these inputs (`calc::guide::legacy_why`); the page shows the box only
    /// when there is a reason.
    pub why: String,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

#[function_component(Legacy)]
pub fn legacy(props: &LegacyProps) -> Html {
    let (r, inputs) = (&props.report, &props.inputs);
    let Other { title, help, .. } = props.legacy;
    html! {
        <section class="legacy" aria-label={format!("Comparison with another {} release", props.framework.name())}>
            <h2>{ title }</h2>
            <p class="why" data-legacy-why="">{ props.why.clone() }</p>
            <p class="help">{ help }</p>
            <dl>
                { value_row(props.framework, inputs, r, Output::LegacyGlobalBatchSize) }
                { value_row(props.framework, inputs, r, Output::LegacyTotalNumSteps) }
            </dl>
            { for r.legacy_notes.iter().map(|n| html! { <p class="msg note">{ n.clone() }</p> }) }
        </section>
    }
}
