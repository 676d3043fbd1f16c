//! The page: Yew wired to [`crate::state`]. The reducer, the query and the links live there
//! (native, tested by `cargo test`); this module dispatches the components' actions to it, writes
//! every change back to the address bar with `history.replaceState` (never push: in an iframe a
//! push floods the host page's back button), applies the theme, and lays the components out.
//! The iframe height messages and the crash notice are [`crate::web::iframe`] and
//! [`crate::web::crash`].

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{guide, view, Field, Framework, RawInputs, Release};
use crate::components::{
    Compare, Config, Examples, Explain, Form, Later, Legacy, Memory, Notices, Picker, PlanView,
    Results, Run, ScaleView, Share, Summary,
};
use crate::page::markup;
use crate::state::{plan_url, scale_url, url_with, Action, State, Urls};
use crate::web::{base_url, crash, iframe};
use wasm_bindgen::JsValue;

pub use crate::web::crash::show_crash;

/// Yew's reducer is [`State::reduce`]; an action that changes nothing keeps the same state
/// (no render).
impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        match State::reduce(&self, action) {
            Some(next) => Rc::new(next),
            None => self,
        }
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| {
        let search = gloo::utils::window()
            .location()
            .search()
            .unwrap_or_default();
        State::from_query(&search)
    });
    let view = state.link.view;

    // `State::query` is the link already encoded; it is both the key and the URL's query.
    use_effect_with(state.query.clone(), |q| show_link(q));
    {
        // static/boot.js asks the app to read the link again (typed in the first view while
        // the app loaded)
        let state = state.dispatcher();
        use_effect_with((), move |_| listen_for_load(state));
    }
    use_effect_with(view.theme, |theme| {
        if let Some(root) = gloo::utils::document().document_element() {
            let _ = root.set_attribute("data-theme", theme.name());
        }
    });
    use_effect_with(view.embed, |&embed| {
        if embed {
            iframe::observe_height();
        }
    });
    use_effect(iframe::post_height);

    // stable callbacks (the same across renders), so the form's rows re-render only when their
    // own value, messages or fixes change
    let on_input = use_callback(
        state.dispatcher(),
        |(field, value): (Field, String), state| state.dispatch(Action::Set(field, value)),
    );
    let on_framework = {
        let state = state.dispatcher();
        Callback::from(move |fw| state.dispatch(Action::Framework(fw)))
    };
    let on_release = {
        let state = state.dispatcher();
        Callback::from(move |id| state.dispatch(Action::Release(id)))
    };
    let on_import = {
        let state = state.dispatcher();
        Callback::from(move |(fw, release, inputs)| {
            state.dispatch(Action::Import(fw, release, inputs))
        })
    };
    // read-only documents one configuration: an explorer row does not change it
    let on_apply = use_callback(
        (state.dispatcher(), view.readonly),
        |pairs: Vec<(Field, String)>, (state, readonly)| {
            if !*readonly {
                state.dispatch(Action::SetMany(pairs))
            }
        },
    );
    let fw = state.link.framework;
    let release = state.link.release();
    let picker = html! {
        <Picker framework={fw} {release} {on_framework} {on_release} readonly={view.readonly} note={state.link.unversioned_note()} />
    };
    let urls = state.urls(&base_url());
    let notices = html! { <Notices unknown={state.link.unknown.clone()} link={state.link.notices.clone()} /> };

    if view.embed {
        return embedded_page(&state, picker, notices, urls, on_input, on_apply);
    }
    full_page(&state, picker, notices, urls, on_input, on_apply, on_import)
}

/// Writes the link `q` (the state's query) to the address bar and tells static/boot.js.
fn show_link(q: &str) {
    let url = url_with(&base_url(), q);
    if let Ok(history) = gloo::utils::window().history() {
        // The current URL may already be this one (first render); replacing is harmless.
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
    // tells static/boot.js which link the app shows (it swaps the app in for the first
    // view when that is the first view's link)
    if let Some(root) = gloo::utils::document().document_element() {
        let _ = root.set_attribute("data-app-query", q);
    }
}

/// Reads the link again on static/boot.js's `dpcalc:load`; gives what stops listening.
fn listen_for_load(state: UseReducerDispatcher<State>) -> impl FnOnce() {
    let listener =
        gloo::events::EventListener::new(&gloo::utils::window(), "dpcalc:load", move |_| {
            let search = gloo::utils::window()
                .location()
                .search()
                .unwrap_or_default();
            state.dispatch(Action::Load(search));
        });
    move || drop(listener)
}

/// The page in an iframe (`embed`): the form and the results, a link to the full page.
fn embedded_page(
    state: &State,
    picker: Html,
    notices: Html,
    urls: Urls,
    on_input: Callback<(Field, String)>,
    on_apply: Callback<Vec<(Field, String)>>,
) -> Html {
    let view = state.link.view;
    let fw = state.link.framework;
    let release = state.link.release();
    let inputs = state.link.inputs.clone();
    let report = state.report.clone();
    html! {
        <main class={markup::PAGE_EMBED}>
            <h1 class={markup::SR_ONLY}>{ markup::EMBED_HEADING }</h1>
            { notices }
            <div class={markup::LAYOUT}>
                <div class={markup::MAIN}>
                    { picker }
                    <Form framework={fw} release={release.id} {inputs} report={report.clone()} {on_input} {on_apply} readonly={view.readonly} compact=true />
                </div>
                <div class={markup::SIDE}>
                    <Results framework={fw} release={release.id} inputs={state.inputs.clone()} report={report.clone()} />
                    <p class={markup::FULL_LINK}>
                        <a href={urls.full.clone()} target="_blank" rel="noopener" data-output={markup::FULL_URL} data-value={urls.full.clone()}>
                            { markup::FULL_LINK_TEXT }
                        </a>
                    </p>
                    <span hidden=true data-output={markup::SHARE_URL} data-value={urls.share.clone()}></span>
                </div>
            </div>
        </main>
    }
}

/// The full page: the form, the results and the panels below them.
fn full_page(
    state: &State,
    picker: Html,
    notices: Html,
    urls: Urls,
    on_input: Callback<(Field, String)>,
    on_apply: Callback<Vec<(Field, String)>>,
    on_import: Callback<(Framework, Option<&'static Release>, RawInputs)>,
) -> Html {
    let view = state.link.view;
    let fw = state.link.framework;
    let release = state.link.release();
    let inputs = state.link.inputs.clone();
    let report = state.report.clone();
    // a plan's link: the page with the plan's assignments, opened on the results
    // (the link alone, no computation: the planner computed each plan's report as this link's)
    let href = {
        let current = state.link.clone();
        Callback::from(move |pairs: Vec<(Field, String)>| plan_url(&base_url(), &current, &pairs))
    };
    // a size's plan link in the scaling view: the page at that size with its best plan
    let scale_href = {
        let current = state.link.clone();
        Callback::from(move |row: crate::calc::scaling::ScaleRow| {
            scale_url(&base_url(), &current, &row)
        })
    };
    // `view=plan` and `view=scale` put their view in the first screen, under the summary bar
    // and above the form; else the planner follows the run and the scaling view the planner
    let plan = html! {
        <PlanView framework={fw} release={release.id} inputs={state.inputs.clone()} open={view.plan} on_apply={on_apply.clone()} {href} />
    };
    let scale = html! {
        <ScaleView framework={fw} release={release.id} inputs={state.inputs.clone()} open={view.scale} href={scale_href} />
    };
    // the other release's comparison, only when it says something about these inputs
    let legacy =
        view::legacy(fw, release.id).zip(guide::legacy_why(fw, release.id, &state.inputs, &report));
    html! {
        <main class={markup::PAGE}>
            <header class={markup::TOP}>
                <h1>{ markup::HEADING }</h1>
                <p class={markup::LEDE}>
                    { markup::LEDE_BEFORE }
                    <strong>{ crate::page::lede(fw, release.id) }</strong>
                    { markup::LEDE_AFTER }
                </p>
                <Examples />
            </header>
            <Summary framework={fw} inputs={state.inputs.clone()} report={report.clone()} />
            if view.plan { { plan.clone() } }
            if view.scale { { scale.clone() } }
            { notices }
            <div class={markup::LAYOUT}>
                <div class={markup::MAIN}>
                    { picker }
                    <Form framework={fw} release={release.id} inputs={inputs.clone()} report={report.clone()} {on_input} on_apply={on_apply.clone()} readonly={view.readonly} compact=false />
                </div>
                <div class={markup::SIDE}>
                    <Results framework={fw} release={release.id} inputs={state.inputs.clone()} report={report.clone()} />
                    <Share framework={fw} release={release.id} urls={urls} {inputs} report={report.clone()} />
                    <Memory framework={fw} report={report.clone()} />
                    <Later>
                        if let Some((legacy, why)) = legacy { <Legacy framework={fw} {legacy} {why} inputs={state.inputs.clone()} report={report.clone()} /> }
                        <Explain report={report.clone()} />
                    </Later>
                </div>
            </div>
            <Run framework={fw} release={release.id} inputs={state.inputs.clone()} report={report.clone()} on_apply={on_apply.clone()} />
            if !view.plan { { plan } }
            if !view.scale { { scale } }
            <Config framework={fw} release={release.id} inputs={state.link.inputs.clone()} report={report.clone()}
                {on_import} readonly={view.readonly} />
            <Compare framework={fw} inputs={state.link.inputs.clone()} {report} />
        </main>
    }
}

/// Mounts the app on `#app` (the root `static/boot.js` makes, hidden while the first view is
/// shown), or on `<body>` without it.
pub fn mount() {
    yew::set_custom_panic_hook(Box::new(crash::on_panic));
    match gloo::utils::document().get_element_by_id("app") {
        Some(root) => yew::Renderer::<App>::with_root(root).render(),
        None => yew::Renderer::<App>::new().render(),
    };
}
