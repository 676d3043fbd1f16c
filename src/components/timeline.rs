//! Tokens and time: the token counts and, with a throughput, the time per step, wall-clock
//! time and GPU-hours (each `data-output` with the exact `data-value`, the readable K/M/B/T or
//! s/min/h/d next to it), and an SVG timeline of the run along its optimizer steps: warmup,
//! epoch boundaries, evaluations and saves (`data-mark` = `warmup`/`epoch`/`eval`/`save`,
//! `data-step`). Everything shown comes from `calc::schedule`; the legend from
//! `calc::view::timeline_text`.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::schedule::{self, Marks};
use crate::calc::view::{self, TimelineText};
use crate::calc::{Framework, Output, RawInputs, Report};
use crate::page;

/// Props of [`TokensTime`].
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    pub framework: Framework,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

const W: f64 = 640.0;
const LEFT: f64 = 12.0;
const RIGHT: f64 = 12.0;
const AXIS_Y: f64 = 46.0;

/// One row of [`crate::page::tokens_time`]. A value the results list already shows keeps its
/// `data-output` there only.
fn row(framework: Framework, (r, exact): &(page::ValueRow, Option<String>)) -> Html {
    let name = (!framework.outputs().iter().any(|o| o.name() == r.output)).then_some(r.output);
    html! {
        <div class={classes!("value", r.raw.is_none().then_some("missing"))}>
            <dt>{ r.label }<code class="key">{ r.config_name }</code></dt>
            <dd data-output={name} data-value={r.raw.clone()} data-needs={r.needs.clone()}>{ r.shown.clone() }<span class="exact">{ exact.clone() }</span></dd>
        </div>
    }
}

fn marks(
    m: &Option<Marks>,
    total: u64,
    kind: &'static str,
    y: f64,
    shape: fn(f64, f64) -> Html,
) -> Html {
    let Some(m) = m else { return html! {} };
    let x = |s: f64| LEFT + (W - LEFT - RIGHT) * (s / total as f64);
    html! {
        <g class={format!("marks {kind}")}>
            { for m.at.iter().map(|&s| html! {
                <g data-mark={kind} data-step={format!("{s}")}>
                    <title>{ format!("{kind} at step {s}") }</title>
                    { shape(x(s), y) }
                </g>
            }) }
        </g>
    }
}

fn tick(x: f64, y: f64) -> Html {
    html! { <line x1={format!("{x:.1}")} x2={format!("{x:.1}")} y1={format!("{:.1}", y - 26.0)} y2={format!("{:.1}", y + 8.0)} stroke="currentColor" stroke-width="1.5" class="epoch-line" /> }
}

fn circle(x: f64, y: f64) -> Html {
    html! { <circle cx={format!("{x:.1}")} cy={format!("{:.1}", y + 14.0)} r="3.5" fill="currentColor" class="eval-dot" /> }
}

fn square(x: f64, y: f64) -> Html {
    html! { <rect x={format!("{:.1}", x - 3.5)} y={format!("{:.1}", y + 22.0)} width="7" height="7" fill="none" stroke="currentColor" class="save-box" /> }
}

/// Tokens, time and the run's timeline. See the module documentation for the DOM contract.
#[function_component(TokensTime)]
pub fn tokens_time(props: &TimelineProps) -> Html {
    let report = &props.report;
    let timeline = schedule::timeline(report);
    let svg = timeline.map(|t| {
        let total = t.total;
        let x = |s: f64| LEFT + (W - LEFT - RIGHT) * (s / total as f64);
        let TimelineText {
            warmup: warm,
            legend,
            end,
        } = view::timeline_text(&t);
        html! {
            <figure class="timeline">
                <svg class="steps" role="img" aria-label={legend.join("; ")} width={W.to_string()} height="84" viewBox={format!("0 0 {W} 84")}>
                    if let Some((w, _)) = warm {
                        <g data-mark="warmup" data-step={w.to_string()}>
                            <title>{ format!("warmup ends at step {w}") }</title>
                            <rect x={LEFT.to_string()} y={(AXIS_Y - 10.0).to_string()} width={format!("{:.1}", x(w as f64) - LEFT)} height="10" fill="currentColor" fill-opacity="0.25" class="warmup" />
                        </g>
                    }
                    <line x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={AXIS_Y.to_string()} y2={AXIS_Y.to_string()} stroke="currentColor" class="axis" />
                    { marks(&t.epochs, total, "epoch", AXIS_Y, tick) }
                    if let Some(e) = t.epochs.as_ref().filter(|e| e.count <= 12) {
                        { for e.at.iter().enumerate().map(|(k, &s)| html! {
                            <text x={format!("{:.1}", x(s) - 3.0)} y={format!("{:.1}", AXIS_Y - 16.0)} text-anchor="end" font-size="10" fill="currentColor">{ format!("epoch {}", k + 1) }</text>
                        }) }
                    }
                    { marks(&t.evals, total, "eval", AXIS_Y, circle) }
                    { marks(&t.saves, total, "save", AXIS_Y, square) }
                    <text x={LEFT.to_string()} y="14" fill="currentColor">{ "step 0" }</text>
                    <text x={(W - RIGHT).to_string()} y="14" text-anchor="end" fill="currentColor">{ end }</text>
                </svg>
                <figcaption>{ legend.join("; ") }{ "." }</figcaption>
            </figure>
        }
    });
    html! {
        <section class="tokens-time" aria-label="Tokens and time">
            <h2>{ "Tokens and time" }</h2>
            <dl>{ for page::tokens_time(props.framework, &props.inputs, report).iter().map(|r| row(props.framework, r)) }</dl>
            if report.value(Output::TimePerStepSeconds).is_none() {
                <p class="hint">{ "Enter tokens_per_second_per_gpu or seconds_per_step (GPU and speed), or a model, a GPU and an mfu, for the time estimates." }</p>
            }
            { for svg }
        </section>
    }
}
