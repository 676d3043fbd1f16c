//! The GPU map: an SVG of the cluster, nodes as rows and GPUs as cells, in the selected
//! framework's rank order (`calc::mesh`, which cites each framework's source; the caption says
//! which order is drawn). Colour shows the data-parallel replica and every cell also prints its
//! replica number; tensor-parallel groups are outlined solid, context-parallel (and Ulysses
//! sequence-parallel) groups dashed, expert-parallel groups dotted (further inside). Every cell
//! is focusable, has a `<title>`, and carries `data-rank`, `data-dp`, `data-cp`, `data-tp` (and
//! `data-pp`, `data-sp`, `data-ep` where the framework has them). Groups are
//! `<g class="tp-group">` / `<g class="cp-group">` / `<g class="sp-group">` / `<g class="ep-group">`.
//! Above 512 GPUs one node is drawn and the rest is given as counts. The picture is
//! `calc::mesh::picture`; the rank descriptions, the groups, their counts and every sentence are
//! `calc::view`'s; this component only lays them out in SVG.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::mesh::{self, Axis, Picture};
use crate::calc::view::{self, DrawnGroup};
use crate::calc::{Framework, Output, RawInputs, Report};

/// Props of [`GpuMap`].
#[derive(Properties)]
pub struct GpuMapProps {
    pub framework: Framework,
    pub inputs: Rc<RawInputs>,
    pub report: Rc<Report>,
}

/// Equal when the picture would be: same framework, world size and the inputs the map depends
/// on (`view::map_fields`: node shape and parallel sizes). An edit elsewhere (rows, epochs,
/// warmup) then neither recomputes nor re-diffs the map.
impl PartialEq for GpuMapProps {
    fn eq(&self, other: &Self) -> bool {
        self.framework == other.framework
            && self.report.value(Output::WorldSize) == other.report.value(Output::WorldSize)
            && view::map_fields(self.framework).all(|f| self.inputs.get(f) == other.inputs.get(f))
    }
}

const CELL: u64 = 30;
const GAP: u64 = 6;
const LEFT: u64 = 64;
const TOP: u64 = 8;

/// A replica's colour (golden-angle hues, so neighbours differ); the number is printed too.
fn colour(dp: u64) -> String {
    let hue = (dp as f64 * 137.508) % 360.0;
    format!("hsl({hue:.0}, 60%, 78%)")
}

fn x_of(gpu: u64) -> u64 {
    LEFT + gpu * (CELL + GAP)
}

/// Room under each row of cells for the arcs of strided groups.
const ROW_GAP: u64 = 22;

fn y_of(node: u64) -> u64 {
    TOP + node * (CELL + ROW_GAP)
}

/// How a group's outline is drawn.
#[derive(Clone, Copy, PartialEq)]
enum Line {
    /// Tensor parallel.
    Solid,
    /// Context and sequence parallel.
    Dashed,
    /// Expert parallel (inset further, so it shows inside a context-parallel outline).
    Dotted,
}

/// The outlines of every group along `axis` that has a member among the drawn cells.
fn outlines(p: &Picture, axis: Axis, class: &'static str, line: Line) -> Html {
    let dashed = line != Line::Solid;
    let mut out = Vec::new();
    for DrawnGroup {
        first: r,
        members,
        consecutive,
        label,
    } in view::drawn_groups(p, axis)
    {
        let stroke = match line {
            Line::Solid => "none",
            Line::Dashed => "4 3",
            Line::Dotted => "1.5 2.5",
        };
        let width = if dashed { "1.5" } else { "2.5" };
        let shapes: Vec<Html> = if consecutive {
            run_outline(p, &members, line, width, stroke)
        } else {
            strided_arcs(p, &members, width, stroke)
        };
        out.push(html! {
            <g class={class} data-group={r.to_string()} aria-label={label}>
                { for shapes }
            </g>
        });
    }
    html! { <>{ for out }</> }
}

/// The outline of a group whose members are neighbours.
fn run_outline(
    p: &Picture,
    members: &[u64],
    line: Line,
    width: &'static str,
    stroke: &'static str,
) -> Vec<Html> {
    // A run of neighbours: an outline around it (one per node it touches).
    let inset = match line {
        Line::Solid => 2,
        Line::Dashed => 5,
        Line::Dotted => 8,
    };
    let segs = mesh::segments(members, p.gpus_per_node);
    // A group continued on the next node: a line joins its pieces.
    let joins: Vec<Html> = segs
        .windows(2)
        .map(|w| {
            let (x0, y0) = (x_of(w[0].2) + CELL / 2, y_of(w[0].0) + CELL + 2);
            let (x1, y1) = (x_of(w[1].1) + CELL / 2, y_of(w[1].0) - 2);
            html! { <line class="crossing" x1={x0.to_string()} y1={y0.to_string()} x2={x1.to_string()} y2={y1.to_string()} stroke="#c00" stroke-width="2.5" /> }
        })
        .collect();
    segs.iter()
        .map(|&(n, a, b)| {
            let x = x_of(a) - GAP / 2 + inset;
            let w = (b - a + 1) * (CELL + GAP) - 2 * inset;
            let y = y_of(n) - GAP / 2 + inset;
            let h = CELL + GAP - 2 * inset;
            let colour = if segs.len() > 1 { "#c00" } else { "currentColor" };
            html! { <rect x={x.to_string()} y={y.to_string()} width={w.to_string()} height={h.to_string()} rx="4" fill="none" stroke={colour} stroke-width={width} stroke-dasharray={stroke} /> }
        })
        .chain(joins)
        .collect()
}

/// The arcs and dots of a group whose members are apart (strided).
fn strided_arcs(
    p: &Picture,
    members: &[u64],
    width: &'static str,
    stroke: &'static str,
) -> Vec<Html> {
    // Strided members: arcs under the row join each member to the next, deeper for
    // each interleaved group so they stay apart; a dot marks every member.
    let stride = (members[1] - members[0]).max(1);
    let depth = 4.0 + 3.0 * ((members[0] % stride).min(4) as f64);
    let at = |m: u64| {
        (
            (x_of(m % p.gpus_per_node) + CELL / 2) as f64,
            (y_of(m / p.gpus_per_node) + CELL) as f64,
        )
    };
    let mut d = String::new();
    for w in members.windows(2) {
        let ((x0, y0), (x1, y1)) = (at(w[0]), at(w[1]));
        if y0 == y1 {
            d.push_str(&format!(
                "M{x0},{y0} Q{},{} {x1},{y1} ",
                (x0 + x1) / 2.0,
                y0 + 2.0 * depth
            ));
        } else {
            d.push_str(&format!("M{x0},{y0} L{x1},{} ", y1 - CELL as f64));
        }
    }
    let mut v = vec![
        html! { <path d={d} fill="none" stroke="currentColor" stroke-width={width} stroke-dasharray={stroke} /> },
    ];
    v.extend(members.iter().map(|&m| {
        let (x, y) = at(m);
        html! { <circle cx={x.to_string()} cy={(y - 3.0).to_string()} r="2" fill="currentColor" /> }
    }));
    v
}

/// The cluster picture. See the module documentation for the DOM contract.
#[function_component(GpuMap)]
pub fn gpu_map(props: &GpuMapProps) -> Html {
    let focused = use_state(|| None::<u64>);
    let picture = mesh::picture(props.framework, &props.report);
    let p = match picture {
        Ok(p) => p,
        Err(why) => return unavailable(why),
    };
    let order = mesh::order(props.framework);
    let width = LEFT + p.drawn_gpus * (CELL + GAP) + GAP;
    let height = TOP + p.drawn_nodes * (CELL + ROW_GAP);
    let cells = cells(&p, order, &focused);
    let said = view::map_text(&p);
    let (dp, shown_replicas) = (said.replicas, said.legend_replicas);
    let details = focused
        .map(|r| view::describe_rank(&p, r))
        .unwrap_or_else(|| "Hover or focus a GPU to see its global rank and coordinates.".into());
    html! {
        <section class="gpumap" aria-label="GPU map" data-world={p.mesh.world.to_string()}>
            <h2>{ "GPU map" }</h2>
            <p class="map-order">{ said.order }</p>
            if let Some(c) = p.caveat { <p class="note">{ c }</p> }
            if let Some(w) = said.tp_crossing {
                <p class="warning" data-warning="tp-crosses-node" role="status">{ w }</p>
            }
            if let Some(n) = said.cp_crossing {
                <p class="note" data-warning="cp-crosses-node">{ n }</p>
            }
            if let Some(n) = said.ep_crossing {
                <p class="note" data-warning="ep-crosses-node">{ n }</p>
            }
            if let Some(s) = said.summary {
                <p class="map-summary" data-summary="true">{ s }</p>
            }
            <div class="map-scroll">
            <svg class="map" role="group" aria-label={format!("{} GPUs by node", p.mesh.world)}
                width={width.to_string()} height={height.to_string()} viewBox={format!("0 0 {width} {height}")}>
                { for cells }
                <g class="outlines" aria-hidden="true">
                    { outlines(&p, Axis::Tp, "tp-group", Line::Solid) }
                    { outlines(&p, Axis::Cp, "cp-group", Line::Dashed) }
                    { outlines(&p, Axis::Sp, "sp-group", Line::Dashed) }
                    { outlines(&p, Axis::Ep, "ep-group", Line::Dotted) }
                </g>
            </svg>
            </div>
            <p class="map-details" aria-live="polite">{ details }</p>
            { legend(&p, order, dp, shown_replicas) }
        </section>
    }
}

/// The map's place when there is no picture, with why.
fn unavailable(why: String) -> Html {
    html! {
        <section class="gpumap" aria-label="GPU map">
            <h2>{ "GPU map" }</h2>
            <p class="note">{ why }</p>
        </section>
    }
}

/// The cells, a row per node: each GPU with its coordinates, which sets `focused` on focus or
/// hover.
fn cells(p: &Picture, order: &[Axis], focused: &UseStateHandle<Option<u64>>) -> Vec<Html> {
    let mut cells = Vec::new();
    for node in 0..p.drawn_nodes {
        cells.push(html! {
            <text class="node-label" fill="currentColor" x="4" y={(y_of(node) + CELL / 2 + 4).to_string()}>{ format!("node {node}") }</text>
        });
        for gpu in 0..p.drawn_gpus {
            let rank = node * p.gpus_per_node + gpu;
            let c = p.mesh.coords(rank);
            let text = view::describe_rank(p, rank);
            let (onfocus, onenter) = {
                let f = focused.clone();
                let g = focused.clone();
                (
                    Callback::from(move |_: FocusEvent| f.set(Some(rank))),
                    Callback::from(move |_: MouseEvent| g.set(Some(rank))),
                )
            };
            let (x, y) = (x_of(gpu), y_of(node));
            cells.push(html! {
                <g class="gpu" tabindex="0" role="img" aria-label={text.clone()}
                    data-rank={rank.to_string()} data-dp={c.dp.to_string()} data-cp={c.cp.to_string()} data-tp={c.tp.to_string()}
                    data-pp={order.contains(&Axis::Pp).then(|| c.pp.to_string())}
                    data-sp={order.contains(&Axis::Sp).then(|| c.sp.to_string())}
                    data-ep={order.contains(&Axis::Ep).then(|| c.ep.to_string())}
                    {onfocus} onmouseenter={onenter}>
                    <title>{ text }</title>
                    <rect x={x.to_string()} y={y.to_string()} width={CELL.to_string()} height={CELL.to_string()} rx="3" fill={colour(c.dp)} stroke="#555" stroke-width="0.5" />
                    <text x={(x + CELL / 2).to_string()} y={(y + CELL / 2 + 4).to_string()} text-anchor="middle" fill="#111" font-size="11">{ c.dp }</text>
                </g>
            });
        }
    }
    cells
}

/// The legend: the replicas' colours and the outline of each kind of group drawn.
fn legend(p: &Picture, order: &[Axis], dp: u64, shown_replicas: u64) -> Html {
    html! {
        <ul class="legend" aria-label="Legend">
            { for (0..shown_replicas).map(|d| html! {
                <li><svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" rx="2" fill={colour(d)} /></svg>{ format!(" replica {d}") }</li>
            }) }
            if dp > shown_replicas { <li>{ format!("… {dp} replicas in all; each cell prints its replica (dp) number") }</li> }
            else { <li>{ "each cell prints its data-parallel replica (dp) number" }</li> }
            <li><svg width="22" height="14" aria-hidden="true"><rect x="1" y="1" width="20" height="12" rx="3" fill="none" stroke="currentColor" stroke-width="2.5" class="tp-swatch" /></svg>{ " solid outline: a tensor-parallel group (red, joined by a red line, when it spans nodes)" }</li>
            if order.contains(&Axis::Cp) {
                <li><svg width="22" height="14" aria-hidden="true"><rect x="1" y="1" width="20" height="12" rx="3" fill="none" stroke="currentColor" stroke-width="1.5" stroke-dasharray="4 3" class="cp-swatch" /></svg>{ " dashed outline, or dashed arcs and dots under the row when its members are apart: a context-parallel group" }</li>
            }
            if p.mesh.size(Axis::Ep) > 1 {
                <li><svg width="22" height="14" aria-hidden="true"><rect x="1" y="1" width="20" height="12" rx="3" fill="none" stroke="currentColor" stroke-width="1.5" stroke-dasharray="1.5 2.5" class="ep-swatch" /></svg>{ " dotted outline (inside), or dotted arcs when its members are apart: an expert-parallel group (its ranks read their own data)" }</li>
            }
            if order.contains(&Axis::Sp) {
                <li><svg width="22" height="14" aria-hidden="true"><rect x="1" y="1" width="20" height="12" rx="3" fill="none" stroke="currentColor" stroke-width="1.5" stroke-dasharray="4 3" class="sp-swatch" /></svg>{ " dashed outline or arcs: a sequence-parallel (Ulysses) group" }</li>
            }
        </ul>
    }
}
