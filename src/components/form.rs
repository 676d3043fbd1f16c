//! The form: the selected framework's fields under its own config keys, in its groups. Which
//! fields the compact form shows, how a flag reads and whether a field is invalid are
//! `calc::view`'s.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::messages::{message_id, FieldMessages};
use crate::calc::field::ARCHITECTURE_TITLE;
use crate::calc::fixes::{fixes, Fix};
use crate::calc::frameworks::THROUGHPUT;
use crate::calc::{view, Field, Framework, Kind, RawInputs, Report};

#[derive(Properties, PartialEq)]
pub struct FormProps {
    pub framework: Framework,
    /// The release the report is computed by (the fixes are verified by it).
    pub release: &'static str,
    pub inputs: RawInputs,
    pub report: Rc<Report>,
    pub on_input: Callback<(Field, String)>,
    /// Applies several fields at once (a fix under an error message).
    pub on_apply: Callback<Vec<(Field, String)>>,
    /// `readonly=1`: shown, not editable.
    pub readonly: bool,
    /// `embed=1`: the key inputs, plus any other field that is given or has a message.
    pub compact: bool,
}

fn shown(field: Field, props: &FormProps) -> bool {
    view::shown(
        props.framework,
        &props.inputs,
        &props.report,
        field,
        props.compact,
    )
}

#[function_component(Form)]
pub fn form(props: &FormProps) -> Html {
    // computed only when there is an error (and something can be changed)
    let fixes = use_memo(
        (
            props.framework,
            props.release,
            props.inputs.clone(),
            props.report.clone(),
            props.readonly,
        ),
        |(fw, release, inputs, report, readonly)| {
            if *readonly || !report.has_errors() {
                Vec::new()
            } else {
                fixes(*fw, release, inputs, report)
            }
        },
    );
    let fixes_at = |f: Field| -> Vec<Fix> {
        fixes
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    };
    // the architecture group: opened by the user, or open because something in it is used; its
    // twenty fields are built only while it is open (they would cost every keystroke otherwise)
    let opened = use_state(|| false);
    let ontoggle = {
        let opened = opened.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlDetailsElement = e.target_unchecked_into();
            if el.open() != *opened {
                opened.set(el.open());
            }
        })
    };
    html! {
        <form class="inputs" aria-label="Run configuration" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { for props.framework.groups().iter().chain(std::iter::once(&THROUGHPUT)).map(|(title, fields)| {
                if *title == ARCHITECTURE_TITLE {
                    // folded until something in it is given (or has a message)
                    let open = *opened || !view::folded(title, fields, &props.inputs, &props.report);
                    let rows = if open {
                        html! { { for fields.iter().filter(|&&f| shown(f, props)).map(|&f| field_row(f, props, fixes_at(f))) } }
                    } else {
                        html! {}
                    };
                    return html! {
                        <details class="group architecture" {open} ontoggle={ontoggle.clone()}>
                            <summary>{ *title }</summary>
                            { rows }
                        </details>
                    };
                }
                html! {
                    <fieldset class="group">
                        <legend>{ *title }</legend>
                        { for fields.iter().filter(|&&f| shown(f, props)).map(|&f| field_row(f, props, fixes_at(f))) }
                    </fieldset>
                }
            }) }
        </form>
    }
}

/// One row, as a component: a keystroke re-renders only the rows whose value, messages or fixes
/// changed (the callbacks are stable, see `app.rs`).
fn field_row(field: Field, props: &FormProps, fixes: Vec<Fix>) -> Html {
    html! {
        <FieldRow
            key={field.key()}
            framework={props.framework}
            {field}
            value={AttrValue::from(props.inputs.get(field).to_string())}
            diags={props.report.diags_for(field).cloned().collect::<Vec<_>>()}
            {fixes}
            readonly={props.readonly}
            on_input={props.on_input.clone()}
            on_apply={props.on_apply.clone()}
        />
    }
}

#[derive(Properties, PartialEq)]
struct FieldRowProps {
    framework: Framework,
    field: Field,
    value: AttrValue,
    diags: Vec<crate::calc::Diag>,
    fixes: Vec<Fix>,
    readonly: bool,
    on_input: Callback<(Field, String)>,
    on_apply: Callback<Vec<(Field, String)>>,
}

#[function_component(FieldRow)]
fn field_row_view(props: &FieldRowProps) -> Html {
    let field = props.field;
    let fixes = props.fixes.clone();
    let (label, placeholder, help) = props.framework.describe(field);
    let key = field.key();
    let id = format!("in-{key}");
    let diags: Vec<_> = props.diags.clone();
    let invalid = view::invalid(&diags);
    let help_id = format!("help-{key}");
    let described: Vec<String> = std::iter::once(help_id.clone())
        .chain((0..diags.len()).map(|n| message_id(field, n)))
        .collect();
    let described = described.join(" ");
    let value = props.value.to_string();
    let on_input = props.on_input.clone();
    let readonly = props.readonly;

    let control = if field.kind() == Kind::Flag {
        let checked = view::checked(field, &value);
        let onchange = Callback::from(move |e: Event| {
            let el: HtmlInputElement = e.target_unchecked_into();
            on_input.emit((
                field,
                if el.checked() {
                    "true".into()
                } else {
                    String::new()
                },
            ));
        });
        html! {
            <input type="checkbox" id={id.clone()} name={key} {checked} {onchange} disabled={readonly}
                aria-invalid={invalid.to_string()} aria-describedby={described} />
        }
    } else {
        let oninput = Callback::from(move |e: InputEvent| {
            let el: HtmlInputElement = e.target_unchecked_into();
            on_input.emit((field, el.value()));
        });
        let mode = match props.framework.kind(field) {
            Kind::Count => "numeric",
            Kind::Text => "text",
            _ => "decimal",
        };
        let suggest = view::suggestions(field);
        let list = suggest.as_ref().map(|_| format!("list-{key}"));
        html! {
            <>
                <input type="text" id={id.clone()} name={key} {value} {placeholder} inputmode={mode} {readonly}
                    autocomplete="off" spellcheck="false" {oninput} list={list.clone()}
                    aria-invalid={invalid.to_string()} aria-describedby={described} />
                if let (Some(list), Some((_, values))) = (list, suggest) {
                    <datalist id={list}>{ for values.into_iter().map(|v| html! { <option value={v} /> }) }</datalist>
                }
            </>
        }
    };
    let class = classes!(
        "field",
        (field.kind() == Kind::Flag).then_some("flag"),
        invalid.then_some("invalid")
    );
    html! {
        <div {class}>
            <label for={id}>
                <span class="label">{ label }</span>
                <code class="key">{ key }</code>
            </label>
            { control }
            <p id={help_id} class="help">{ help }</p>
            <FieldMessages {field} {diags} {fixes} on_fix={props.on_apply.clone()} />
        </div>
    }
}
