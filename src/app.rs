//! The page: one reducer holds the link (the state), the core computes a report from it, and
//! the components render that report. Every change is written back to the address bar with
//! `history.replaceState` (never push: in an iframe a push floods the host page's back button).

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::{axolotl, Field, Report};
use crate::components::{Explain, Form, Legacy, Notices, Results, Share};
use crate::query::{self, Link};

/// The whole state: the link and the report computed from it.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub link: Link,
    pub query: String,
    pub report: Rc<Report>,
}

impl State {
    pub fn from_query(q: &str) -> Self {
        Self::from_link(query::decode(q))
    }

    fn from_link(link: Link) -> Self {
        let report = Rc::new(axolotl::compute(&link.inputs));
        let query = query::encode(&link);
        State {
            link,
            query,
            report,
        }
    }
}

pub enum Action {
    Set(Field, String),
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
        }
    }
}

/// The page URL without its query and fragment.
fn base_url() -> String {
    let location = gloo::utils::window().location();
    let origin = location.origin().unwrap_or_default();
    let path = location.pathname().unwrap_or_default();
    format!("{origin}{path}")
}

fn share_url(query: &str) -> String {
    if query.is_empty() {
        base_url()
    } else {
        format!("{}?{query}", base_url())
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

    {
        let q = state.query.clone();
        use_effect_with(q, move |q| {
            let url = share_url(q);
            if let Ok(history) = gloo::utils::window().history() {
                // The current URL may already be this one (first render); replacing is harmless.
                let _ =
                    history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        });
    }

    let on_input = {
        let state = state.dispatcher();
        Callback::from(move |(field, value): (Field, String)| {
            state.dispatch(Action::Set(field, value))
        })
    };
    let url = share_url(&state.query);

    html! {
        <main class="page">
            <header class="top">
                <h1>{ "dpcalc" }</h1>
                <p class="lede">
                    { "What batch size and how many optimizer steps your distributed " }
                    <strong>{ "axolotl 0.19.0" }</strong>
                    { " run gets: computed in your browser, exactly as axolotl does it." }
                </p>
            </header>
            <Notices unknown={state.link.unknown.clone()} />
            <div class="layout">
                <Form inputs={state.link.inputs.clone()} report={state.report.clone()} {on_input} />
                <div class="side">
                    <Results report={state.report.clone()} />
                    <Share url={url} />
                    <Legacy report={state.report.clone()} />
                    <Explain report={state.report.clone()} />
                </div>
            </div>
        </main>
    }
}

/// Mounts the app on `<body>`.
pub fn mount() {
    yew::Renderer::<App>::new().render();
}
