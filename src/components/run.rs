//! "The run": tokens and time, the GPU map and the layout explorer, drawn one task after the
//! results. The results (what the user is waiting for) are in the DOM first; these larger
//! pictures follow on a zero-delay timer, so neither the first load nor an edit is one long task.
//! A newer edit cancels a pending redraw, so fast typing draws only the last state.

use std::rc::Rc;

use gloo::timers::callback::Timeout;
use yew::prelude::*;

use super::{GpuMap, LayoutExplorer, TokensTime};
use crate::calc::{Field, Framework, RawInputs, Report};

#[derive(Properties, PartialEq)]
pub struct RunProps {
    pub framework: Framework,
    pub release: &'static str,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
    /// Applies an explorer row (its sizes and the accumulation or batch it sets).
    pub on_apply: Callback<Vec<(Field, String)>>,
}

type Snapshot = (Framework, &'static str, Rc<RawInputs>, Rc<Report>);

#[function_component(Run)]
pub fn run(props: &RunProps) -> Html {
    let shown = use_state(|| None::<Snapshot>);
    let pending = use_mut_ref(|| None::<Timeout>);
    {
        let (shown, pending) = (shown.clone(), pending.clone());
        let snapshot: Snapshot = (
            props.framework,
            props.release,
            props.inputs.clone(),
            props.report.clone(),
        );
        use_effect_with(snapshot, move |snap| {
            let snap = snap.clone();
            // replacing the handle drops (cancels) a redraw that has not run yet
            *pending.borrow_mut() = Some(Timeout::new(0, move || shown.set(Some(snap))));
        });
    }
    let Some((framework, release, inputs, report)) = (*shown).clone() else {
        return html! { <section class="run" aria-label="The run" aria-busy="true"></section> };
    };
    html! {
        <section class="run" aria-label="The run">
            <TokensTime {framework} report={report.clone()} />
            <GpuMap {framework} inputs={inputs.clone()} {report} />
            <LayoutExplorer {framework} {release} {inputs} on_apply={props.on_apply.clone()} />
        </section>
    }
}
