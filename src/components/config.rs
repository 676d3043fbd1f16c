//! Export (the selected framework's config fragment, from `calc::export`, with a Copy button)
//! and import (paste a config; `calc::import` reads it, the form fills in, ignored keys are
//! listed). Both are computed only while the panel is open. The "Read as" choices are
//! `calc::view::importable`.

use std::rc::Rc;

use web_sys::{HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

use super::share::copy;
use crate::calc::import::{self, Imported};
use crate::calc::{export, view, Framework, RawInputs, Release, Report};

#[derive(Properties, PartialEq)]
pub struct ConfigProps {
    pub framework: Framework,
    pub release: &'static str,
    pub inputs: RawInputs,
    pub report: Rc<Report>,
    /// Applies an import: its framework and inputs replace the current ones.
    /// A pasted config: its framework, the release it names, the inputs after it.
    pub on_import: Callback<(Framework, Option<&'static Release>, RawInputs)>,
    pub readonly: bool,
}

#[function_component(Config)]
pub fn config(props: &ConfigProps) -> Html {
    let open = use_state(|| false);
    let copied = use_state(|| None::<bool>);
    let result = use_state(|| None::<Rc<Imported>>);
    let pasted = use_state(String::new);
    let as_ref = use_node_ref();
    let ontoggle = {
        let open = open.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlDetailsElement = e.target_unchecked_into();
            open.set(el.open());
        })
    };
    let exported = (*open)
        .then(|| export::export(props.framework, props.release, &props.inputs, &props.report));
    {
        let copied = copied.clone();
        use_effect_with(props.inputs.clone(), move |_| copied.set(None));
    }
    let on_copy = {
        let text = exported
            .as_ref()
            .map(|e| e.text.clone())
            .unwrap_or_default();
        let copied = copied.clone();
        Callback::from(move |_: MouseEvent| {
            let text = text.clone();
            let copied = copied.clone();
            wasm_bindgen_futures::spawn_local(async move {
                copied.set(Some(copy(&text).await));
            });
        })
    };
    let on_paste = {
        let pasted = pasted.clone();
        Callback::from(move |e: InputEvent| {
            let area: HtmlTextAreaElement = e.target_unchecked_into();
            pasted.set(area.value());
        })
    };
    let on_import = import_on_click(props, as_ref.clone(), (*pasted).clone(), result.clone());
    let status = copy_status(*copied);
    let import_result = (*result).as_ref().map(|r| import_outcome(r));
    html! {
        <details class="config" {ontoggle} open={*open}>
            <summary>{ "Export or import a config" }</summary>
            if let Some(e) = exported {
                <h3>{ format!("{} config", props.framework.name()) }</h3>
                <pre class="export" data-export={e.lang}><code>{ e.text.clone() }</code></pre>
                if e.lang == "json" {
                    { for e.notes.iter().map(|n| html! { <p class="help">{ n.clone() }</p> }) }
                }
                <button type="button" onclick={on_copy}>{ "Copy config" }</button>
                { status }
            }
            if !props.readonly {
                <h3><label for="import-text">{ "Import" }</label></h3>
                <p class="help">
                    { "Paste what you have: an axolotl or nanotron YAML, a DeepSpeed JSON, Hugging Face TrainingArguments \
                       (JSON, --flags or the Python call), a torchtitan TOML, a Megatron command line, an accelerate config \
                       or a torchrun line (the cluster), or a model's config.json (the model); the form fills in. \
                       Keys dpcalc does not read are listed and ignored." }
                </p>
                <textarea id="import-text" rows="6" spellcheck="false" value={(*pasted).clone()} oninput={on_paste} />
                <div class="import-row">
                    <label for="import-as">{ "Read as" }</label>
                    <select id="import-as" ref={as_ref}>
                        <option value="" selected=true>{ "detect" }</option>
                        { for view::importable().iter().map(|f| html! {
                            <option value={f.id()}>{ f.name() }</option>
                        }) }
                    </select>
                    <button type="button" onclick={on_import}>{ "Import" }</button>
                </div>
                { for import_result }
            }
        </details>
    }
}

/// The Import button: reads the pasted text (as the "Read as" choice says) and applies what
/// was read.
fn import_on_click(
    props: &ConfigProps,
    as_ref: NodeRef,
    text: String,
    result: UseStateHandle<Option<Rc<Imported>>>,
) -> Callback<MouseEvent> {
    let apply = props.on_import.clone();
    let (current, inputs) = (props.framework, props.inputs.clone());
    Callback::from(move |_: MouseEvent| {
        let forced = as_ref
            .cast::<HtmlSelectElement>()
            .and_then(|s| Framework::from_id(&s.value()));
        // a model's config.json fills the model, an accelerate config or a launcher line
        // the cluster, of the current framework; any other config replaces the inputs
        let mut imported = import::read(current, forced, &text);
        // a cluster value from the default of an unset variable gives way to the page's own
        imported.settle(&inputs);
        // what was read is applied; a value that could not be read is named below
        if imported.applicable() {
            apply.emit((
                imported.framework,
                imported.release,
                imported.merged_into(&inputs),
            ));
        }
        result.set(Some(Rc::new(imported)));
    })
}

/// Whether the Copy button's copy worked (`None`: not copied since the inputs changed).
fn copy_status(copied: Option<bool>) -> Html {
    match copied {
        None => html! {},
        Some(true) => html! { <span class="copied" role="status">{ "Copied." }</span> },
        Some(false) => html! {
            <span class="copied" role="status">{ "The browser refused the clipboard here; select the text and copy it." }</span>
        },
    }
}

/// What an import read: its summary, errors, warnings and the keys it ignored.
fn import_outcome(r: &Imported) -> Html {
    html! {
        <div class="import-result" data-import-framework={r.framework.id()}>
            if r.is_config() {
                <p class="msg note" role="status" data-import-applied={r.applicable().to_string()}>{ r.summary() }</p>
            }
            { for r.errors.iter().map(|e| html! { <p class="msg error" role="alert" data-import-error="">{ e.clone() }</p> }) }
            { for r.warnings.iter().map(|w| html! { <p class="msg warning" data-import-warning="">{ w.clone() }</p> }) }
            if !r.unknown.is_empty() {
                <p class="msg hint" data-import-ignored={r.unknown.join(" ")}>
                    { format!("Ignored (not batch or step settings dpcalc reads): {}", r.unknown.join(", ")) }
                </p>
            }
        </div>
    }
}
