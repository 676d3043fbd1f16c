//! The planner view: every plan the framework accepts that fits, ranked by estimated step time
//! (`calc::planner`; this component only runs it and renders `calc::view::plan_rows`).
//!
//! The planning runs in slices (`calc::planner::Planning::step`, one explorer pass, one choice
//! over up to 48 of a pass's layouts, or four full computations each), on zero-delay timers, at most
//! [`super::sliced::SLICE_MS`] of work per task, so typing stays responsive while it runs; a newer edit drops
//! the planning under way and starts another. It starts when the section is opened (or the link
//! says `view=plan`, where the app puts the section at the top of the page, under the summary
//! bar). The rows come first, the step parts' legend and the sentence on the count after them.
//!
//! DOM contract: a container `[data-plan]` (with `data-compute-ms`, the planning's work summed
//! over its slices, and `data-slices`, `data-longest-slice-ms`, once it is done); rows
//! `[data-plan-row]` in rank order with `data-rank`, `data-tp`, `data-cp`, `data-pp`, `data-ep`,
//! `data-dp`, `data-micro-batch`, `data-recompute`, `data-sharding`, `data-virtual-stages`,
//! `data-step-seconds`, `data-tokens-per-second-per-gpu`, `data-mfu`, `data-memory-bytes`,
//! `data-total-cost` (with `gpu_hour_price`), `data-calibration-compute-factor` and `data-calibration-comm-factor` (calibrated), an `a[href]` to the plan's link and an Apply button.

use std::rc::Rc;

use yew::prelude::*;

use super::sliced::{use_sliced, ByPtr, Interim};
use crate::calc::planner::{Planner, Planning};
use crate::calc::view::{self, PLAN_COLUMNS, STEP_PARTS};
use crate::calc::{Field, Framework, RawInputs};

#[derive(Properties, PartialEq)]
pub struct PlannerProps {
    pub framework: Framework,
    pub release: &'static str,
    pub inputs: Rc<RawInputs>,
    /// Open from the start (`view=plan`).
    pub open: bool,
    /// Applies a plan (its assignments).
    pub on_apply: Callback<Vec<(Field, String)>>,
    /// The link of the current page with a plan's assignments.
    pub href: Callback<Vec<(Field, String)>, String>,
}

#[function_component(PlanView)]
pub fn plan_view(props: &PlannerProps) -> Html {
    let open = use_state(|| props.open);
    let progress =
        use_sliced::<Planning>(props.framework, props.release, props.inputs.clone(), *open);
    let on_toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let (done, interim) = (&progress.done, &progress.interim);
    let state = interim.as_ref().map(|(_, i)| i.name());
    // the rows shown and their links, made once per result: an edit that leaves the previous
    // rows on the page (stale) redraws none of them, and their links stay those rows' own
    let shown =
        (done.as_ref().map(|d| d.out.clone())).or_else(|| interim.as_ref().map(|(o, _)| o.clone()));
    let hrefs = use_memo(ByPtr(shown.clone()), |shown| {
        let rows = shown.0.iter().flat_map(|p| p.rows.iter());
        Rc::new(
            rows.map(|r| props.href.emit(r.assignments.clone()))
                .collect::<Vec<_>>(),
        )
    });
    let table = |planner: &Rc<Planner>| {
        html! { <PlanTable planner={ByPtr(Some(planner.clone()))} hrefs={(*hrefs).clone()} on_apply={props.on_apply.clone()} /> }
    };
    let body = match (done, interim, *open) {
        (_, _, false) => html! {
            <p class="hint">{ "Every layout, micro batch, recompute and sharding the framework accepts that fits the GPU, ranked by estimated step time." }</p>
        },
        (Some(done), _, true) => table(&done.out),
        (None, Some((out, how)), true) => html! {
            <>
                <p class="note" role="status">{ view::plan_interim(*how == Interim::Stale) }</p>
                { table(out) }
            </>
        },
        (None, None, true) => {
            html! { <p class="note" role="status">{ "Ranking the plans…" }</p> }
        }
    };
    let (compute, slices, longest) = match done {
        Some(d) => (
            Some(format!("{:.3}", d.ms)),
            Some(d.slices.to_string()),
            Some(format!("{:.3}", d.longest)),
        ),
        None => (None, None, None),
    };
    html! {
        <section class="planner" id="plan" aria-label="Planner" data-plan="" data-compute-ms={compute}
            data-slices={slices} data-longest-slice-ms={longest} data-plan-state={state}
            aria-busy={(done.is_none() && *open).then_some("true")}>
            <h2>{ "Which plan to run" }</h2>
            <button type="button" class="plan-toggle" aria-expanded={(*open).to_string()} onclick={on_toggle}>
                { if *open { "Hide the plans" } else { "Rank the plans" } }
            </button>
            { body }
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct PlanTableProps {
    planner: ByPtr<Planner>,
    /// Each row's link, in row order.
    hrefs: Rc<Vec<String>>,
    on_apply: Callback<Vec<(Field, String)>>,
}

/// The rows, the legend and the sentence on the count; redrawn only for another result.
#[function_component(PlanTable)]
fn plan_table(props: &PlanTableProps) -> Html {
    match &props.planner.0 {
        Some(p) => table(p, &props.hrefs, &props.on_apply),
        None => Html::default(),
    }
}

fn table(planner: &Planner, hrefs: &[String], on_apply: &Callback<Vec<(Field, String)>>) -> Html {
    let rows = view::plan_rows(planner);
    html! {
        <>
            if let Some(note) = &planner.note { <p class="note" data-plan-note="">{ note }</p> }
            // the rows first (in the first screen under `view=plan`), then what explains them
            if !rows.is_empty() {
                <div class="table-scroll">
                <table class="plans">
                    <thead><tr>
                        { for PLAN_COLUMNS.iter().map(|c| html! { <th scope="col">{ *c }</th> }) }
                        <th scope="col">{ "Step parts" }</th>
                        <th scope="col"><span class="sr-only">{ "Link and apply" }</span></th>
                    </tr></thead>
                    <tbody>
                    { for rows.iter().zip(&planner.rows).zip(hrefs).map(|((r, plan), href)| {
                        let assignments = plan.assignments.clone();
                        let href = href.clone();
                        let apply = {
                            let cb = on_apply.clone();
                            Callback::from(move |_: MouseEvent| cb.emit(assignments.clone()))
                        };
                        let mut tr = html! {
                            <tr data-plan-row="">
                                { for r.cells().into_iter().map(|c| html! { <td>{ c }</td> }) }
                                <td class="stepbar">
                                    <svg class="stepbar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img"
                                        aria-label={format!("step {}", r.step_text)}>
                                        { for r.bar.iter().map(|b| html! {
                                            <rect class={format!("step{}", b.part)} x={format!("{:.3}", b.x)} y="0"
                                                width={format!("{:.3}", b.width)} height="10">
                                                <title>{ b.title.clone() }</title>
                                            </rect>
                                        }) }
                                    </svg>
                                </td>
                                <td>
                                    <a href={href} class="plan-link">{ "link" }</a>
                                    <button type="button" class="apply" onclick={apply}
                                        aria-label={format!("Apply plan {}", r.rank)}>{ "Apply" }</button>
                                </td>
                            </tr>
                        };
                        // the DOM contract's attributes, as the view model names them
                        if let Html::VTag(tag) = &mut tr {
                            for (name, value) in r.attributes() {
                                Rc::make_mut(tag).add_attribute(name, value.to_string());
                            }
                        }
                        tr
                    }) }
                    </tbody>
                </table>
                </div>
                <p class="plan-legend">
                    { for STEP_PARTS.iter().enumerate().map(|(i, (_, label))| html! {
                        <span class={format!("legend step{i}")}>{ *label }</span>
                    }) }
                </p>
            }
            if let Some(s) = view::plan_summary(planner) { <p class="plan-summary">{ s }</p> }
        </>
    }
}
