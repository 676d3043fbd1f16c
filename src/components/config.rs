//! Export (the selected framework's config fragment, from `calc::export`, with a Copy button)
//! and import (paste a config; `calc::import` reads it, the form fills in, ignored keys are
//! listed). Both are computed only while the panel is open. The "Read as" choices are
//! `calc::view::importable`. A file (a config, a training log, a profiler trace of one step)
//! can be chosen (`input#import-file`) or dropped on the text area instead: it is read in the
//! browser, nothing is uploaded, and imported at once without filling the text area.

use std::rc::Rc;

use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
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
    let status = copy_status(*copied);
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
                <ImportPanel framework={props.framework} inputs={props.inputs.clone()} on_import={props.on_import.clone()} />
            }
        </details>
    }
}

#[derive(Properties, PartialEq)]
struct ImportProps {
    framework: Framework,
    inputs: RawInputs,
    on_import: Callback<(Framework, Option<&'static Release>, RawInputs)>,
}

/// The import: a text area to paste into or drop a file on, a file chooser, "Read as" and the
/// outcome of the last import.
#[function_component(ImportPanel)]
fn import_panel(props: &ImportProps) -> Html {
    let result = use_state(|| None::<Rc<Imported>>);
    let pasted = use_state(String::new);
    let as_ref = use_node_ref();
    let on_paste = {
        let pasted = pasted.clone();
        Callback::from(move |e: InputEvent| {
            let area: HtmlTextAreaElement = e.target_unchecked_into();
            pasted.set(area.value());
        })
    };
    let on_import = {
        let run = importer(props, as_ref.clone(), result.clone());
        let text = (*pasted).clone();
        Callback::from(move |_: MouseEvent| run.emit(text.clone()))
    };
    let run = importer(props, as_ref.clone(), result.clone());
    let on_file = {
        let run = run.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            read_file(input.files().and_then(|f| f.get(0)), run.clone());
        })
    };
    let on_drop = Callback::from(move |e: DragEvent| {
        e.prevent_default();
        let file = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0));
        read_file(file, run.clone());
    });
    let on_drag_over = Callback::from(|e: DragEvent| e.prevent_default());
    let import_result = (*result).as_ref().map(|r| import_outcome(r));
    html! {
        <>
            <h3><label for="import-text">{ "Import" }</label></h3>
            <p class="help">
                { "Paste what you have: an axolotl or nanotron YAML, a DeepSpeed JSON, Hugging Face TrainingArguments \
                   (JSON, --flags or the Python call), a torchtitan TOML, a Megatron command line, an accelerate config \
                   or a torchrun line (the cluster), or a model's config.json (the model); the form fills in. \
                   Keys dpcalc does not read are listed and ignored." }
            </p>
            <textarea id="import-text" rows="6" spellcheck="false" value={(*pasted).clone()} oninput={on_paste}
                ondrop={on_drop} ondragover={on_drag_over} />
            <p class="help">
                <label for="import-file">{ "Or a file (read here, not uploaded): " }</label>
                <input type="file" id="import-file" onchange={on_file} />
            </p>
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
        </>
    }
}

/// Reads a chosen or dropped file's text in the browser and imports it; a file that cannot be
/// read as text is said as an import error.
fn read_file(file: Option<web_sys::File>, run: Callback<String>) {
    let Some(file) = file else { return };
    wasm_bindgen_futures::spawn_local(async move {
        let text = wasm_bindgen_futures::JsFuture::from(file.text()).await;
        match text.ok().and_then(|t| t.as_string()) {
            Some(t) => run.emit(t),
            // unreadable as text: read as a binary file's (a NUL), which the import refuses
            // with its own message
            None => run.emit(String::from("\0")),
        }
    });
}

/// The import: reads a text (as the "Read as" choice says) and applies what was read.
fn importer(
    props: &ImportProps,
    as_ref: NodeRef,
    result: UseStateHandle<Option<Rc<Imported>>>,
) -> Callback<String> {
    let apply = props.on_import.clone();
    let (current, inputs) = (props.framework, props.inputs.clone());
    Callback::from(move |text: String| {
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
