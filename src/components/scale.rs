//! The scaling view: the planner's best plan at 1, 2, 4, … nodes with the global batch kept,
//! each size's time and cost, as a table and a chart (`calc::scaling`; this component only runs
//! it in slices and renders `calc::view::scale_rows` and `scale_chart`).
//!
//! The work runs in slices like the planner's (`calc::scaling::Scaling::step`, one planner slice
//! each), at most [`super::sliced::SLICE_MS`] per task; it starts when the section is opened
//! (or the link says `view=scale`, where the app puts the section at the top of the page).
//!
//! DOM contract: a container `[data-scale]` (with `data-compute-ms` once done); rows
//! `[data-scale-row]` smallest first with `data-nodes`, `data-gpus`, and with a plan
//! `data-step-seconds`, `data-tokens-per-second-per-gpu`, `data-mfu`, `data-total-hours`,
//! `data-cost` (with `gpu_hour_price`), `data-meets-deadline` (with `deadline_hours`),
//! `data-cheapest="true"` on the cheapest size within the deadline, and an `a[href]` to the
//! size's plan. The chart is inline SVG drawn with classes only (no inline style or script).

use std::rc::Rc;

use yew::prelude::*;

use super::sliced::{use_sliced, ByPtr, Interim};
use crate::calc::scaling::{Scale, ScaleRow, Scaling};
use crate::calc::view::{self, ScaleChart, CHART_HEIGHT, CHART_PLOT, CHART_WIDTH, SCALE_COLUMNS};
use crate::calc::{Framework, RawInputs};

#[derive(Properties, PartialEq)]
pub struct ScaleProps {
    pub framework: Framework,
    pub release: &'static str,
    pub inputs: Rc<RawInputs>,
    /// Open from the start (`view=scale`).
    pub open: bool,
    /// A size's plan link (`state::scale_url`).
    pub href: Callback<ScaleRow, Option<String>>,
}

#[function_component(ScaleView)]
pub fn scale_view(props: &ScaleProps) -> Html {
    let open = use_state(|| props.open);
    let progress =
        use_sliced::<Scaling>(props.framework, props.release, props.inputs.clone(), *open);
    let on_toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let (done, interim) = (&progress.done, &progress.interim);
    let state = interim.as_ref().map(|(_, i)| i.name());
    // the rows shown and their links, made once per result (see the planner's view)
    let shown =
        (done.as_ref().map(|d| d.out.clone())).or_else(|| interim.as_ref().map(|(o, _)| o.clone()));
    let hrefs = use_memo(ByPtr(shown), |shown| {
        let rows = shown.0.iter().flat_map(|s| s.rows.iter());
        Rc::new(rows.map(|r| props.href.emit(r.clone())).collect::<Vec<_>>())
    });
    let table = |scale: &Rc<Scale>| {
        html! { <ScaleTable scale={ByPtr(Some(scale.clone()))} hrefs={(*hrefs).clone()} /> }
    };
    let body = match (done, interim, *open) {
        (_, _, false) => html! {
            <p class="hint">{ "The best plan at 1, 2, 4, … nodes for the same model, global batch and sequence length: how many GPUs to rent, and what the run costs (gpu_hour_price, deadline_hours, max_nodes)." }</p>
        },
        (Some(done), _, true) => table(&done.out),
        (None, Some((out, how)), true) => html! {
            <>
                <p class="note" role="status">{ view::scale_interim(*how == Interim::Stale) }</p>
                { table(out) }
            </>
        },
        (None, None, true) => {
            html! { <p class="note" role="status">{ "Planning each size…" }</p> }
        }
    };
    let compute = done.as_ref().map(|d| format!("{:.3}", d.ms));
    html! {
        <section class="planner scaling" id="scale" aria-label="Scaling" data-scale="" data-compute-ms={compute}
            data-scale-state={state} aria-busy={(done.is_none() && *open).then_some("true")}>
            <h2>{ "How many GPUs to rent" }</h2>
            <button type="button" class="plan-toggle" aria-expanded={(*open).to_string()} onclick={on_toggle}>
                { if *open { "Hide the sizes" } else { "Compare cluster sizes" } }
            </button>
            { body }
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct ScaleTableProps {
    scale: ByPtr<Scale>,
    /// Each size's plan link, in row order.
    hrefs: Rc<Vec<Option<String>>>,
}

/// The rows, the chart and the sentence; redrawn only for another result.
#[function_component(ScaleTable)]
fn scale_table(props: &ScaleTableProps) -> Html {
    match &props.scale.0 {
        Some(s) => table(s, &props.hrefs),
        None => Html::default(),
    }
}

fn table(scale: &Scale, hrefs: &[Option<String>]) -> Html {
    let rows = view::scale_rows(scale);
    html! {
        <>
            if let Some(note) = &scale.note { <p class="note" data-scale-note="">{ note }</p> }
            if !rows.is_empty() {
                <div class="table-scroll">
                <table class="plans">
                    <thead><tr>
                        { for SCALE_COLUMNS.iter().map(|c| html! { <th scope="col">{ *c }</th> }) }
                        <th scope="col"><span class="sr-only">{ "Link" }</span></th>
                    </tr></thead>
                    <tbody>
                    { for rows.iter().zip(hrefs).map(|(r, href)| {
                        let mut tr = html! {
                            <tr data-scale-row="" class={classes!(r.cheapest.then_some("cheapest"))}>
                                { for r.cells().into_iter().map(|c| html! { <td>{ c }</td> }) }
                                <td>
                                    if let Some(h) = href.clone() { <a href={h} class="plan-link">{ "plan" }</a> }
                                </td>
                            </tr>
                        };
                        // the DOM contract's attributes, as the view model names them
                        if let Html::VTag(tag) = &mut tr {
                            let tag = Rc::make_mut(tag);
                            for (name, value) in r.attributes() {
                                tag.add_attribute(name, value.to_string());
                            }
                            if r.cheapest {
                                tag.add_attribute("data-cheapest", "true");
                            }
                        }
                        tr
                    }) }
                    </tbody>
                </table>
                </div>
            }
            // the rows first (in the first screen under `view=scale`), then the chart and the
            // sentence
            if let Some(chart) = view::scale_chart(scale) { { chart_svg(&chart, hrefs) } }
            if let Some(s) = view::scale_summary(scale) { <p class="plan-summary">{ s }</p> }
        </>
    }
}

/// The chart as inline SVG: classes only, every number from the view model.
fn chart_svg(chart: &ScaleChart, hrefs: &[Option<String>]) -> Html {
    let (left, right, top, bottom) = CHART_PLOT;
    let f = |x: f64| format!("{x:.1}");
    let dots = |s: &view::ChartSeries, class: &'static str| -> Html {
        html! { <>{ for s.points.iter().map(|p| {
            let dot = html! {
                <circle class={class} cx={f(p.x)} cy={f(p.y)} r="4"><title>{ p.title.clone() }</title></circle>
            };
            match hrefs.get(p.row).cloned().flatten() {
                Some(h) => html! { <a href={h}>{ dot }</a> },
                None => dot,
            }
        }) }</> }
    };
    html! {
        <figure class="scale-chart">
            <svg class="scale-chart" viewBox={format!("0 0 {CHART_WIDTH} {CHART_HEIGHT}")} role="img" aria-label={chart.title.clone()}>
                <line class="axis" x1={f(left)} y1={f(bottom)} x2={f(right)} y2={f(bottom)} />
                <line class="axis" x1={f(left)} y1={f(top)} x2={f(left)} y2={f(bottom)} />
                <line class="axis" x1={f(right)} y1={f(top)} x2={f(right)} y2={f(bottom)} />
                if let Some(x) = chart.cheapest_x {
                    <line class="cheapest" x1={f(x)} y1={f(top)} x2={f(x)} y2={f(bottom)} />
                }
                { for chart.x_ticks.iter().map(|(x, label)| html! {
                    <text class="tick" x={f(*x)} y={f(bottom + 14.0)} text-anchor="middle">{ label.clone() }</text>
                }) }
                <text class="tick" x={f((left + right) / 2.0)} y={f(CHART_HEIGHT - 4.0)} text-anchor="middle">{ "GPUs" }</text>
                <text class="tick s-tput" x={f(left - 4.0)} y={f(top - 4.0)} text-anchor="start">{ chart.throughput.max_label.clone() }</text>
                <text class="tick s-hours" x={f(right + 4.0)} y={f(top - 4.0)} text-anchor="end">{ chart.hours.max_label.clone() }</text>
                <polyline class="s-tput" points={chart.throughput.line.clone()} />
                <polyline class="s-hours" points={chart.hours.line.clone()} />
                { dots(&chart.throughput, "s-tput") }
                { dots(&chart.hours, "s-hours") }
            </svg>
            <figcaption class="plan-legend">
                <span class="legend s-tput">{ chart.throughput.label }</span>
                <span class="legend s-hours">{ chart.hours.label }</span>
                if chart.cheapest_x.is_some() { <span class="legend cheapest">{ "cheapest within the deadline" }</span> }
            </figcaption>
        </figure>
    }
}
