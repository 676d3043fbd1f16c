//! "How this is computed" (each rule with the user's numbers) and the legacy comparison.

use std::rc::Rc;

use yew::prelude::*;

use super::results::value_row;
use crate::calc::axolotl::Version;
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

/// The other axolotl release's numbers for the same inputs: 0.14.0 (before PRs #3444 and #3462)
/// under the newer releases, 0.19.0 under 0.14.0 (`axolotl::Version::other`).
#[derive(Properties, PartialEq)]
pub struct LegacyProps {
    pub release: &'static str,
    pub report: Rc<Report>,
}

#[function_component(Legacy)]
pub fn legacy(props: &LegacyProps) -> Html {
    let r = &props.report;
    let main = Version::from_id(props.release).unwrap_or(Version::V0_19_0);
    let (title, help) = match main.other() {
        Version::V0_14_0 => (
            "Before the fix: axolotl 0.14.0",
            "0.14.0 scaled the batch by the whole world size and multiplied steps by context × tensor parallel size. \
             Use these to audit an older run.",
        ),
        _ => (
            "After the fix: axolotl 0.19.0",
            "0.19.0 (after PRs #3444 and #3462) scales the batch by world_size // cp // tp and adds no step factor: \
             what the same config gives on a current axolotl.",
        ),
    };
    html! {
        <section class="legacy" aria-label="Comparison with another axolotl release">
            <h2>{ title }</h2>
            <p class="help">{ help }</p>
            <dl>
                { value_row(Framework::Axolotl, r, Output::LegacyGlobalBatchSize) }
                { value_row(Framework::Axolotl, r, Output::LegacyTotalNumSteps) }
            </dl>
            { for r.legacy_notes.iter().map(|n| html! { <p class="msg note">{ n.clone() }</p> }) }
        </section>
    }
}
