//! "The run": tokens and time, the GPU map and the layout explorer, drawn after the results.
//! The results (what the user is waiting for) are in the DOM first; each of these larger
//! pictures follows on its own zero-delay timer, so neither the first load nor an edit is one
//! long task. A newer edit cancels pending redraws, so fast typing draws only the last state.

use std::rc::Rc;

use gloo::timers::callback::Timeout;
use yew::prelude::*;

use super::{explored, Explored, GpuMap, LayoutExplorer, TokensTime};
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

/// The two smaller parts (tokens and time, the GPU map), each drawn in its own task, in this
/// order; the explorer follows in a third.
const PARTS: usize = 2;

#[function_component(Run)]
pub fn run(props: &RunProps) -> Html {
    let shown: [UseStateHandle<Option<Snapshot>>; PARTS] = [use_state(|| None), use_state(|| None)];
    let explorer = use_state(|| None::<(Snapshot, Explored)>);
    let pending = use_mut_ref(Vec::<Timeout>::new);
    {
        let (shown, explorer, pending) = (shown.clone(), explorer.clone(), pending.clone());
        let snapshot: Snapshot = (
            props.framework,
            props.release,
            props.inputs.clone(),
            props.report.clone(),
        );
        use_effect_with(snapshot, move |snap| {
            // replacing the handles drops (cancels) redraws that have not run yet; timers of
            // equal delay run in the order they were set, one task each
            let mut timers: Vec<Timeout> = shown
                .iter()
                .cloned()
                .map(|part| {
                    let snap = snap.clone();
                    Timeout::new(0, move || part.set(Some(snap)))
                })
                .collect();
            // the explorer is computed in its task before the render (see `explored`)
            let snap = snap.clone();
            timers.push(Timeout::new(0, move || {
                let ex = explored(snap.0, snap.1, &snap.2);
                explorer.set(Some((snap, ex)));
            }));
            *pending.borrow_mut() = timers;
        });
    }
    let part = |n: usize| (*shown[n]).clone();
    html! {
        <section class="run" aria-label="The run">
            if let Some((framework, _, inputs, report)) = part(0) {
                <TokensTime {framework} {inputs} {report} />
            }
            if let Some((framework, _, inputs, report)) = part(1) {
                <GpuMap {framework} {inputs} {report} />
            }
            if let Some(((framework, release, inputs, _), explored)) = (*explorer).clone() {
                <LayoutExplorer {framework} {release} {inputs} {explored} on_apply={props.on_apply.clone()} />
            }
        </section>
    }
}
