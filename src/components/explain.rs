//! "How this is computed" (each rule with the user's numbers) and the legacy comparison.

use std::rc::Rc;

use yew::prelude::*;

use super::results::value_row;
use crate::calc::{Framework, Output, Report};

#[derive(Properties, PartialEq)]
pub struct ReportProps {
    pub report: Rc<Report>,
}

#[function_component(Explain)]
pub fn explain(props: &ReportProps) -> Html {
    let mut steps: Vec<_> = props.report.steps.iter().collect();
    steps.sort_by_key(|s| s.output);
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

/// What axolotl 0.14.0 (before PRs #3444 and #3462) computed for the same inputs.
#[function_component(Legacy)]
pub fn legacy(props: &ReportProps) -> Html {
    let r = &props.report;
    html! {
        <section class="legacy" aria-label="Legacy values">
            <h2>{ "Before the fix: axolotl 0.14.0" }</h2>
            <p class="help">
                { "0.14.0 scaled the batch by the whole world size and multiplied steps by context × tensor parallel size. \
                   Use these to audit an older run." }
            </p>
            <dl>
                { value_row(Framework::Axolotl, r, Output::LegacyGlobalBatchSize) }
                { value_row(Framework::Axolotl, r, Output::LegacyTotalNumSteps) }
            </dl>
            { for r.legacy_notes.iter().map(|n| html! { <p class="msg note">{ n.clone() }</p> }) }
        </section>
    }
}
