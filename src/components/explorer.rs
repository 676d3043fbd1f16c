//! The layout explorer: every parallel layout of the current world size as a sortable table
//! (computed by `calc::layout::explore`; this component only renders it). The current layout is
//! highlighted (`aria-current`); a click on a row, or its Apply button, applies it. Its sentences
//! (summary, truncation note, miss, Apply label) are `calc::view`'s.
//!
//! Each row carries `data-layout` (its sizes as a query fragment in the framework's own names,
//! e.g. `tensor_parallel_size=2&context_parallel_size=1`) and `data-apply` (the same plus the
//! gradient accumulation it sets), so rows are testable and linkable.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::layout::{self, Fit, SortKey};
use crate::calc::{view, Field, Framework, Num, RawInputs};

/// Props of [`LayoutExplorer`].
#[derive(Properties, PartialEq)]
pub struct ExplorerProps {
    pub framework: Framework,
    /// The release id (`version=`), e.g. `"0.19.0"`.
    pub release: AttrValue,
    /// The current inputs (the explorer recomputes only when they change).
    pub inputs: Rc<RawInputs>,
    /// Called with every `(field, value)` a row sets when the user applies it.
    pub on_apply: Callback<Vec<(Field, String)>>,
}

fn num(v: Option<Num>) -> Html {
    match v {
        Some(n) => html! { <span data-value={n.raw()}>{ n.pretty() }</span> },
        None => html! { <span class="missing">{ "—" }</span> },
    }
}

fn fit(f: Fit) -> Html {
    match f {
        Fit::Exact => html! { <span class="fit exact" data-miss="0">{ "exact" }</span> },
        Fit::Near { miss } => {
            html! { <span class="fit near" data-miss={miss.to_string()}>{ view::miss(miss) }</span> }
        }
        Fit::Unknown => html! { <span class="fit missing">{ "—" }</span> },
    }
}

/// The most rows drawn (in the chosen order); 65,536 GPUs have 969 layouts of three dimensions.
pub const SHOWN: usize = 1_000;

/// The explorer table. See the module documentation for the DOM contract.
#[function_component(LayoutExplorer)]
pub fn layout_explorer(props: &ExplorerProps) -> Html {
    // The computation time is kept on the element (`data-compute-ms`) for `make bench`.
    let memo = use_memo(
        (props.framework, props.release.clone(), props.inputs.clone()),
        |(fw, rel, raw)| {
            let now = || gloo::utils::window().performance().map_or(0.0, |p| p.now());
            let t0 = now();
            let ex = layout::explore(*fw, rel, raw);
            (ex, now() - t0)
        },
    );
    let (ex, compute_ms) = (&memo.0, memo.1);
    let sort = use_state(|| None::<(SortKey, bool)>);
    let mut order: Vec<usize> = match *sort {
        Some((key, desc)) => layout::order(ex, key, desc),
        None => (0..ex.rows.len()).collect(),
    };
    let all = order.len();
    order.truncate(SHOWN);
    let header = |label: String, key: SortKey, code: Option<&'static str>| {
        let state = sort.clone();
        let (aria, next_desc) = match *sort {
            Some((k, d)) if k == key => (if d { "descending" } else { "ascending" }, !d),
            _ => ("none", false),
        };
        let onclick = Callback::from(move |_: MouseEvent| state.set(Some((key, next_desc))));
        html! {
            <th scope="col" aria-sort={aria}>
                <button type="button" class="sort" {onclick}>
                    { label }
                    if let Some(c) = code { <code class="key">{ c }</code> }
                </button>
            </th>
        }
    };
    let world = ex.world.map(|w| w.to_string()).unwrap_or_default();
    html! {
        <section class="explorer" aria-label="Layout explorer" data-world={world} data-compute-ms={format!("{compute_ms:.3}")}>
            <h2>{ "Parallel layouts" }</h2>
            if let Some(note) = &ex.note { <p class="note">{ note }</p> }
            if !ex.rows.is_empty() {
                <p class="explorer-summary">{ view::explorer_summary(ex) }</p>
                if let Some(note) = view::explorer_truncated(SHOWN, all) {
                    <p class="note">{ note }</p>
                }
                <div class="table-scroll">
                <table class="layouts">
                    <thead><tr>
                        { for ex.dims.iter().enumerate().map(|(i, &(d, f))| header(d.short().to_string(), SortKey::Size(i), Some(f.key()))) }
                        { header("Data-parallel".into(), SortKey::Dp, Some("dp_world_size")) }
                        { header("Accumulation".into(), SortKey::Ga, Some("gradient_accumulation_steps")) }
                        { header("Global batch".into(), SortKey::Global, None) }
                        { header("Miss".into(), SortKey::Miss, None) }
                        { header("Steps".into(), SortKey::Steps, Some("max_steps")) }
                        <th scope="col"><span class="sr-only">{ "Apply" }</span></th>
                    </tr></thead>
                    <tbody>
                    { for order.iter().map(|&i| {
                        let row = &ex.rows[i];
                        let current = ex.current == Some(i);
                        let assignments = ex.assignments(row);
                        // The row takes the click (the Apply button's click, or Enter on it, bubbles here).
                        let apply = {
                            let cb = props.on_apply.clone();
                            let a = assignments;
                            Callback::from(move |_: MouseEvent| cb.emit(a.clone()))
                        };
                        let class = classes!(current.then_some("current"), (!row.valid()).then_some("invalid"));
                        let label = view::apply_label(ex, row);
                        html! {
                            <tr {class} data-layout={ex.query(row)} data-apply={ex.apply_query(row)}
                                aria-current={current.then_some("true")} onclick={apply}>
                                { for row.sizes.iter().map(|s| html! { <td>{ s }</td> }) }
                                <td>{ num(row.dp_world_size.or(Some(Num::Int(row.dp.into())))) }</td>
                                <td>{ num(row.gradient_accumulation_steps) }</td>
                                <td>{ num(row.global_batch_size) }</td>
                                <td>{ fit(row.fit) }</td>
                                <td>{ num(row.max_steps) }</td>
                                <td>
                                    if current { <span class="badge">{ "current" }</span> }
                                    if let Some(p) = &row.problem { <span class="problem" data-error="layout" title={p.clone()}>{ "refused: " }{ p.clone() }</span> }
                                    <button type="button" class="apply" aria-label={label}>{ "Apply" }</button>
                                </td>
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
                </div>
            }
        </section>
    }
}
