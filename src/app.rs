//! The page: one reducer holds the link (the state), the core computes a report from it, and
//! the components render that report. Every change is written back to the address bar with
//! `history.replaceState` (never push: in an iframe a push floods the host page's back button).

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{framework, Field, Framework, Report};
use crate::components::{
    Compare, Config, Explain, Form, Later, Legacy, Notices, Picker, Results, Run, Share,
};
use crate::query::{self, Link, View};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The whole state: the link and the report computed from it.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub link: Link,
    /// `link.inputs`, shared with the components that only read them.
    pub inputs: Rc<crate::calc::RawInputs>,
    pub query: String,
    pub report: Rc<Report>,
}

impl State {
    pub fn from_query(q: &str) -> Self {
        Self::from_link(query::decode(q))
    }

    fn from_link(link: Link) -> Self {
        let report = Rc::new(link.report());
        let query = query::encode(&link);
        State {
            inputs: Rc::new(link.inputs.clone()),
            link,
            query,
            report,
        }
    }
}

pub enum Action {
    Set(Field, String),
    /// Several fields at once (an explorer row: its sizes and the accumulation that keeps the batch).
    SetMany(Vec<(Field, String)>),
    /// Another framework: the values carry across by meaning, the release is its newest.
    Framework(Framework),
    Release(&'static str),
    /// A pasted config: its framework and inputs replace the current ones (the view stays).
    Import(Framework, crate::calc::RawInputs),
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        match action {
            Action::Set(field, value) => {
                if self.link.inputs.get(field) == value
                    && self.link.inputs.conflict(field).is_none()
                {
                    return self; // nothing changed: no recomputation, no render
                }
                let mut link = self.link.clone();
                link.inputs.set(field, value);
                Rc::new(State::from_link(link))
            }
            Action::SetMany(pairs) => {
                let mut link = self.link.clone();
                for (field, value) in pairs {
                    link.inputs.set(field, value);
                }
                if link.inputs == self.link.inputs {
                    return self;
                }
                Rc::new(State::from_link(link))
            }
            Action::Framework(fw) => {
                if fw == self.link.framework {
                    return self;
                }
                let mut link = self.link.clone();
                link.inputs = framework::carry(link.framework, &link.inputs, fw);
                link.framework = fw;
                link.release = None;
                Rc::new(State::from_link(reread(link, &["framework", "version"])))
            }
            Action::Import(fw, mut inputs) => {
                // A config file rarely says the cluster shape: keep the current one unless it does.
                for &f in framework::CLUSTER {
                    let given = !inputs.get(f).trim().is_empty();
                    if !given && !self.link.inputs.get(f).trim().is_empty() {
                        inputs.set(f, self.link.inputs.get(f));
                    }
                }
                let link = Link {
                    framework: fw,
                    inputs,
                    view: self.link.view,
                    ..Link::default()
                };
                Rc::new(State::from_link(link))
            }
            Action::Release(id) => {
                let mut link = self.link.clone();
                link.release = link.framework.release(id);
                Rc::new(State::from_link(reread(link, &["version"])))
            }
        }
    }
}

/// The link as a fresh load of its own canonical query would read it, after a choice in the page
/// replaced `chosen` (a kept unknown `framework=`/`version=` is dropped, not re-read). A kept
/// parameter the new framework knows becomes its input (unless the switch already carried one
/// there), and the notices are those of the new framework.
fn reread(mut link: Link, chosen: &[&str]) -> Link {
    let fw = link.framework;
    link.unknown.retain(|(k, _)| {
        !chosen.contains(&k.as_str())
            && fw
                .field(k)
                .is_none_or(|f| link.inputs.get(f).trim().is_empty())
    });
    query::decode(&query::encode(&link))
}

/// The page URL without its query and fragment.
fn base_url() -> String {
    let location = gloo::utils::window().location();
    let origin = location.origin().unwrap_or_default();
    let path = location.pathname().unwrap_or_default();
    format!("{origin}{path}")
}

fn url_of(link: &Link) -> String {
    url_with(&query::encode(link))
}

/// This page with a query string (already encoded).
fn url_with(q: &str) -> String {
    if q.is_empty() {
        base_url()
    } else {
        format!("{}?{q}", base_url())
    }
}

/// The links the page offers for the current state.
#[derive(Clone, PartialEq)]
pub struct Urls {
    /// Reproduces this view: `embed`, `theme` and `readonly` as given.
    pub share: String,
    /// The full calculator in a new tab: same inputs and theme, without embed and readonly.
    pub full: String,
    /// What an iframe should load: this view with `embed=1`.
    pub embed: String,
}

fn urls(link: &Link) -> Urls {
    let view = link.view;
    Urls {
        share: url_of(link),
        full: url_of(&link.with_view(View {
            theme: view.theme,
            ..View::default()
        })),
        embed: url_of(&link.with_view(View {
            embed: true,
            ..view
        })),
    }
}

/// Tells a host page (when framed) how tall the content is:
/// `{ type: "dpcalc:height", height: <CSS px>, href: <this page> }`.
fn post_height() {
    let window = gloo::utils::window();
    let Ok(Some(parent)) = window.parent() else {
        return;
    };
    if js_sys::Object::is(&parent, &window) {
        return;
    }
    let Some(root) = gloo::utils::document().document_element() else {
        return;
    };
    let message = js_sys::Object::new();
    let set = |k: &str, v: JsValue| js_sys::Reflect::set(&message, &JsValue::from_str(k), &v);
    let _ = set("type", JsValue::from_str("dpcalc:height"));
    let _ = set("height", JsValue::from_f64(f64::from(root.scroll_height())));
    let _ = set(
        "href",
        JsValue::from_str(&window.location().href().unwrap_or_default()),
    );
    let _ = parent.post_message(&message, "*");
}

/// Posts the height again whenever the content box changes size (a details element opening, a
/// message appearing, the iframe getting narrower).
fn observe_height() {
    let callback = Closure::<dyn FnMut()>::new(post_height);
    if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
        if let Some(body) = gloo::utils::document().body() {
            observer.observe(&body);
        }
    }
    callback.forget(); // lives as long as the page
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

    {
        // `State::query` is the link already encoded; it is both the key and the URL's query.
        use_effect_with(state.query.clone(), |q| {
            let url = url_with(q);
            if let Ok(history) = gloo::utils::window().history() {
                // The current URL may already be this one (first render); replacing is harmless.
                let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
            }
        });
    }
    use_effect_with(view.theme, |theme| {
        if let Some(root) = gloo::utils::document().document_element() {
            let _ = root.set_attribute("data-theme", theme.name());
        }
    });
    use_effect_with(view.embed, |&embed| {
        if embed {
            observe_height();
        }
    });
    use_effect(post_height);

    let on_input = {
        let state = state.dispatcher();
        Callback::from(move |(field, value): (Field, String)| {
            state.dispatch(Action::Set(field, value))
        })
    };
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
        Callback::from(move |(fw, inputs)| state.dispatch(Action::Import(fw, inputs)))
    };
    // read-only documents one configuration: an explorer row does not change it
    let on_apply = if view.readonly {
        Callback::noop()
    } else {
        let state = state.dispatcher();
        Callback::from(move |pairs| state.dispatch(Action::SetMany(pairs)))
    };
    let fw = state.link.framework;
    let release = state.link.release();
    let picker = html! {
        <Picker framework={fw} {release} {on_framework} {on_release} readonly={view.readonly} />
    };
    let urls = urls(&state.link);
    let inputs = state.link.inputs.clone();
    let report = state.report.clone();
    let notices = html! { <Notices unknown={state.link.unknown.clone()} link={state.link.notices.clone()} /> };

    if view.embed {
        return html! {
            <main class="page embed">
                <h1 class="sr-only">{ "dpcalc: batch size and optimizer steps" }</h1>
                { notices }
                <div class="layout">
                    <div class="main">
                        { picker }
                        <Form framework={fw} {inputs} report={report.clone()} {on_input} readonly={view.readonly} compact=true />
                    </div>
                    <div class="side">
                        <Results framework={fw} release={release.id} report={report.clone()} />
                        <p class="full-link">
                            <a href={urls.full.clone()} target="_blank" rel="noopener" data-output="full_url" data-value={urls.full.clone()}>
                                { "Open full calculator \u{2197}" }
                            </a>
                        </p>
                        <span hidden=true data-output="share_url" data-value={urls.share.clone()}></span>
                    </div>
                </div>
            </main>
        };
    }

    html! {
        <main class="page">
            <header class="top">
                <h1>{ "dpcalc" }</h1>
                <p class="lede">
                    { "What batch size and how many optimizer steps your distributed " }
                    <strong>{ format!("{} {}", fw.name(), release.id) }</strong>
                    { " run gets: computed in your browser, exactly as the framework does it." }
                </p>
            </header>
            { notices }
            <div class="layout">
                <div class="main">
                    { picker }
                    <Form framework={fw} inputs={inputs.clone()} report={report.clone()} {on_input} readonly={view.readonly} compact=false />
                </div>
                <div class="side">
                    <Results framework={fw} release={release.id} report={report.clone()} />
                    <Share framework={fw} urls={urls} {inputs} report={report.clone()} />
                    <Later>
                        if fw.spec().legacy { <Legacy release={release.id} report={report.clone()} /> }
                        <Explain report={report.clone()} />
                    </Later>
                </div>
            </div>
            <Run framework={fw} release={release.id} inputs={state.inputs.clone()} report={report.clone()} {on_apply} />
            <Config framework={fw} release={release.id} inputs={state.link.inputs.clone()} report={report.clone()}
                {on_import} readonly={view.readonly} />
            <Compare framework={fw} inputs={state.link.inputs.clone()} {report} />
        </main>
    }
}

/// Mounts the app on `<body>`.
pub fn mount() {
    yew::set_custom_panic_hook(Box::new(on_panic));
    yew::Renderer::<App>::new().render();
}

/// A panic must never leave a blank or frozen page: the hook logs it and shows [`show_crash`].
fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    web_sys::console::error_1(&JsValue::from_str(&format!("dpcalc panicked: {info}")));
    show_crash();
}

/// Puts a message at the top of the page saying that dpcalc stopped, with the link the user had
/// (nothing typed is lost) and a link that resets to the defaults. Text only; nothing from the
/// link is parsed as HTML. Public so the browser tests can check it without panicking.
pub fn show_crash() {
    let document = gloo::utils::document();
    let Some(body) = document.body() else { return };
    let href = gloo::utils::window().location().href().unwrap_or_default();
    let make = |tag: &str, text: &str| {
        let el = document.create_element(tag).ok()?;
        el.set_text_content(Some(text));
        Some(el)
    };
    let (Some(notice), Some(title), Some(link), Some(kept)) = (
        make("section", ""),
        make("p", "dpcalc hit an internal error and stopped computing. This is a bug; your link is kept here:"),
        make("a", "Start again with the defaults"),
        document.create_element("input").ok(),
    ) else {
        return;
    };
    let _ = notice.set_attribute("class", "crashed");
    let _ = notice.set_attribute("role", "alert");
    let _ = notice.set_attribute("data-crash", "");
    let _ = kept.set_attribute("readonly", "");
    let _ = kept.set_attribute("value", &href);
    let _ = kept.set_attribute("aria-label", "The link you had");
    let _ = link.set_attribute("href", &base_url());
    for child in [&title, &kept, &link] {
        let _ = notice.append_child(child);
    }
    let _ = body.insert_before(&notice, body.first_child().as_ref());
}
