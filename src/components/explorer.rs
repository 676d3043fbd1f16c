//! The layout explorer: every parallel layout of the current world size as a sortable table
//! (computed by `calc::layout::explore`; this component only renders it). The current layout is
//! highlighted (`aria-current`); a click on a row, or its Apply button, applies it. Its sentences
//! (summary, truncation note, miss, Apply label) are `calc::view`'s.
//!
//! Each row carries `data-layout` (its sizes as a query fragment in the framework's own names,
//! e.g. `tensor_parallel_size=2&context_parallel_size=1`) and `data-apply` (the same plus the
//! gradient accumulation it sets), so rows are testable and linkable. With a model, each row also
//! carries `data-memory-bytes` (the estimated memory per GPU, an exact integer) and, when the
//! GPU's memory is known, `data-fits="true|false"` with a "fits" / "over by X GiB" mark; the
//! checkbox `input#explorer-fits` then hides the rows that do not fit.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::layout::{self, BatchMatch, Explorer, Row, SortKey};
use crate::calc::{guide, view, Field, Framework, Num, Output, RawInputs};

/// Props of [`LayoutExplorer`].
#[derive(Properties, PartialEq)]
pub struct ExplorerProps {
    pub framework: Framework,
    /// The release id (`version=`), e.g. `"0.19.0"`.
    pub release: AttrValue,
    /// The current inputs (for the cells that say what a value needs).
    pub inputs: Rc<RawInputs>,
    /// The explorer computed on those inputs ([`explored`]), outside the render.
    pub explored: Explored,
    /// Called with every `(field, value)` a row sets when the user applies it.
    pub on_apply: Callback<Vec<(Field, String)>>,
}

/// A value, or what it needs (`guide::explorer_cell`).
fn num(v: Option<Num>, missing: impl FnOnce() -> String) -> Html {
    match v {
        Some(n) => html! { <span data-value={n.raw()}>{ n.pretty() }</span> },
        None => html! { <span class="missing">{ missing() }</span> },
    }
}

fn fit(f: BatchMatch, missing: impl FnOnce() -> String) -> Html {
    match f {
        BatchMatch::Exact => html! { <span class="fit exact" data-miss="0">{ "exact" }</span> },
        BatchMatch::Near { miss } => {
            html! { <span class="fit near" data-miss={miss.to_string()}>{ view::miss(miss) }</span> }
        }
        BatchMatch::Unknown => html! { <span class="fit missing">{ missing() }</span> },
    }
}

/// A row's memory per GPU (GiB) and, when the GPU's memory is known, its fits mark.
fn memory(row: &Row, capacity: Option<u128>, missing: impl FnOnce() -> String) -> Html {
    match view::row_memory(row) {
        Some(text) => {
            let mark = view::fit_mark(row, capacity).map(|m| {
                let class = classes!(
                    "fits",
                    (view::row_fits(row, capacity) == Some(false)).then_some("over")
                );
                html! { <span {class}>{ m }</span> }
            });
            html! { <><span class="gib">{ text }</span>{ for mark }</> }
        }
        None => html! { <span class="missing">{ missing() }</span> },
    }
}

/// A config key that may wrap after each `_` (`<wbr>`, which copies as nothing), so the columns
/// fit 1280 px.
fn breakable(key: &'static str) -> Html {
    html! { <>{ for key.split_inclusive('_').map(|part| html! { <>{ part }<wbr /></> }) }</> }
}

/// The most rows drawn (in the chosen order) until "Show all" is pressed
/// ([`view::shown_rows`]).
pub const SHOWN: usize = 100;

/// An explorer and the milliseconds its computation took (`data-compute-ms`, for `make bench`);
/// equal when it is the same computation.
#[derive(Clone)]
pub struct Explored(Rc<(Explorer, f64)>);

impl PartialEq for Explored {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Computes the explorer, timed. The run section calls it in its own task, before Yew renders:
/// at 65,536 GPUs with a model it is a few milliseconds natively and several times that in the
/// browser, and a render that long makes Yew's scheduler yield, which would queue the next
/// edit's render behind the page's other tasks.
pub fn explored(framework: Framework, release: &str, inputs: &RawInputs) -> Explored {
    let now = || gloo::utils::window().performance().map_or(0.0, |p| p.now());
    let t0 = now();
    let ex = layout::explore(framework, release, inputs);
    Explored(Rc::new((ex, now() - t0)))
}

/// The explorer table. See the module documentation for the DOM contract.
#[function_component(LayoutExplorer)]
pub fn layout_explorer(props: &ExplorerProps) -> Html {
    let (ex, compute_ms) = (&props.explored.0 .0, props.explored.0 .1);
    let sort = use_state(|| None::<(SortKey, bool)>);
    let only_fit = use_state(|| false);
    let order: Vec<usize> = match *sort {
        Some((key, desc)) => layout::order(ex, key, desc),
        None => (0..ex.rows.len()).collect(),
    };
    let order = view::keep_fitting(ex, order, *only_fit);
    let show_all = use_state(|| false);
    let has_memory = ex.rows.iter().any(|r| r.memory_bytes.is_some());
    let show_filter = has_memory && ex.capacity.is_some();
    let on_fit_filter = {
        let only_fit = only_fit.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            only_fit.set(el.checked());
        })
    };
    let all = order.len();
    let limit = if *show_all { usize::MAX } else { SHOWN };
    let order = view::shown_rows(&order, ex.current, limit);
    let on_show_all = {
        let show_all = show_all.clone();
        Callback::from(move |_: MouseEvent| show_all.set(true))
    };
    let header = |label: String, key: SortKey, code: Option<&'static str>| {
        sort_header(&sort, label, key, code)
    };
    let world = ex.world.map(|w| w.to_string()).unwrap_or_default();
    html! {
        <section class="explorer" aria-label="Layout explorer" data-world={world} data-compute-ms={format!("{compute_ms:.3}")}>
            <h2>{ "Parallel layouts" }</h2>
            if let Some(note) = &ex.note { <p class="note">{ note }</p> }
            if !ex.rows.is_empty() {
                <p class="explorer-summary">{ view::explorer_summary(ex) }</p>
                if let Some(s) = view::explorer_memory_summary(ex) {
                    <p class="explorer-memory">{ s }</p>
                }
                if show_filter {
                    <p class="explorer-filter">
                        <input type="checkbox" id="explorer-fits" checked={*only_fit} onchange={on_fit_filter} />
                        <label for="explorer-fits">{ "only layouts that fit" }</label>
                    </p>
                }
                { cut_note(limit, all, on_show_all) }
                <div class="table-scroll">
                <table class="layouts">
                    <thead><tr>
                        { for ex.shown_dims().map(|(i, d, f)| header(d.short().to_string(), SortKey::Size(i), Some(f.key()))) }
                        { header("Data-parallel".into(), SortKey::Dp, Some("dp_world_size")) }
                        { header("Accumulation".into(), SortKey::Ga, Some("gradient_accumulation_steps")) }
                        { header("Global batch".into(), SortKey::Global, None) }
                        { header("Miss".into(), SortKey::Miss, None) }
                        { header("Steps".into(), SortKey::Steps, Some("max_steps")) }
                        if has_memory { { header("Memory per GPU".into(), SortKey::Memory, None) } }
                        <th scope="col"><span class="sr-only">{ "Apply" }</span></th>
                    </tr></thead>
                    <tbody>
                    { for order.iter().map(|&i| layout_row(ex, i, props, has_memory)) }
                    </tbody>
                </table>
                </div>
            }
        </section>
    }
}

/// When the table is cut ([`SHOWN`]), the note that says so and the button that draws all.
fn cut_note(limit: usize, all: usize, on_show_all: Callback<MouseEvent>) -> Html {
    let Some(note) = view::explorer_truncated(limit, all) else {
        return Html::default();
    };
    html! {
        <p class="note explorer-cut">
            { note }{ " " }
            <button type="button" class="secondary" data-show-all="" onclick={on_show_all}>
                { view::show_all_label(all) }
            </button>
        </p>
    }
}

/// A column head that sorts the rows by `key` (descending on a second click).
fn sort_header(
    sort: &UseStateHandle<Option<(SortKey, bool)>>,
    label: String,
    key: SortKey,
    code: Option<&'static str>,
) -> Html {
    let state = sort.clone();
    let (aria, next_desc) = match **sort {
        Some((k, d)) if k == key => (if d { "descending" } else { "ascending" }, !d),
        _ => ("none", false),
    };
    let onclick = Callback::from(move |_: MouseEvent| state.set(Some((key, next_desc))));
    html! {
        <th scope="col" aria-sort={aria}>
            <button type="button" class="sort" {onclick}>
                { label }
                if let Some(c) = code { <code class="key">{ breakable(c) }</code> }
            </button>
        </th>
    }
}

/// One layout: its sizes, batch, steps and memory, marked when current or refused; a click
/// applies it.
fn layout_row(ex: &Explorer, i: usize, props: &ExplorerProps, has_memory: bool) -> Html {
    let cell = |row: &Row, o: Output| guide::explorer_cell(ex, &props.inputs, row, o);
    let row = &ex.rows[i];
    let current = ex.current == Some(i);
    let assignments = ex.assignments(row);
    // The row takes the click (the Apply button's click, or Enter on it, bubbles here).
    let apply = {
        let cb = props.on_apply.clone();
        let a = assignments;
        Callback::from(move |_: MouseEvent| cb.emit(a.clone()))
    };
    let class = classes!(
        current.then_some("current"),
        (!row.valid()).then_some("invalid")
    );
    let label = view::apply_label(ex, row);
    let memory_bytes = row.memory_bytes.map(|b| b.to_string());
    let fits = view::row_fits(row, ex.capacity).map(|f| f.to_string());
    html! {
        <tr {class} data-layout={ex.query(row)} data-apply={ex.apply_query(row)}
            data-memory-bytes={memory_bytes} data-fits={fits}
            aria-current={current.then_some("true")} onclick={apply}>
            { for ex.shown_dims().map(|(i, _, _)| html! { <td>{ row.sizes[i] }</td> }) }
            <td>{ num(row.dp_world_size.or(Some(Num::Int(row.dp.into()))), String::new) }</td>
            <td>{ num(row.gradient_accumulation_steps, || cell(row, Output::GradientAccumulationSteps)) }</td>
            <td>{ num(row.global_batch_size, || cell(row, Output::GlobalBatchSize)) }</td>
            <td>{ fit(row.batch_match, || cell(row, Output::GlobalBatchSize)) }</td>
            <td>{ num(row.max_steps, || cell(row, Output::MaxSteps)) }</td>
            if has_memory { <td class="memory">{ memory(row, ex.capacity, || cell(row, Output::MemoryPerGpuBytes)) }</td> }
            <td>
                if current { <span class="badge">{ "current" }</span> }
                if let Some(p) = &row.problem { <span class="problem" data-error="layout" title={p.clone()}>{ "refused: " }{ &**p }</span> }
                <button type="button" class="apply" aria-label={label}>{ "Apply" }</button>
            </td>
        </tr>
    }
}
