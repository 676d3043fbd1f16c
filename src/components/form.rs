//! The form: the selected framework's fields under its own config keys, in its groups. Which
//! fields the compact form shows, how a flag reads and whether a field is invalid are
//! `calc::view`'s.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::messages::FieldMessages;
use crate::calc::fixes::{fixes, Fix};
use crate::calc::{Field, Framework, RawInputs, Report};
use crate::page::{self, markup};

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
    let groups = page::groups(
        props.framework,
        &props.inputs,
        &props.report,
        props.compact,
        *opened,
    );
    html! {
        <form class={markup::INPUTS} aria-label={markup::INPUTS_ARIA} onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
            { for groups.into_iter().map(|g| {
                let rows = html! { { for g.fields.iter().map(|&f| field_row(f, props, fixes_at(f))) } };
                match g.fold {
                    // folded until something in it is given (or has a message)
                    Some(open) => html! {
                        <details class={markup::GROUP_FOLD} {open} ontoggle={ontoggle.clone()}>
                            <summary>{ g.title }</summary>
                            { rows }
                        </details>
                    },
                    None => html! {
                        <fieldset class={markup::GROUP}>
                            <legend>{ g.title }</legend>
                            { rows }
                        </fieldset>
                    },
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
    let row = page::field_row(props.framework, field, &props.value, &props.diags);
    let key = row.key;
    let id = markup::id(markup::IN, key);
    let described = row.described_by();
    let on_input = props.on_input.clone();
    let readonly = props.readonly;

    let control = if row.flag {
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
            <input type="checkbox" id={id.clone()} name={key} checked={row.checked} {onchange} disabled={readonly}
                aria-invalid={row.invalid.to_string()} aria-describedby={described} />
        }
    } else {
        let oninput = Callback::from(move |e: InputEvent| {
            let el: HtmlInputElement = e.target_unchecked_into();
            on_input.emit((field, el.value()));
        });
        let list = (row.list.as_ref()).map(|_| markup::id(markup::LIST_ID, key));
        html! {
            <>
                <input type="text" id={id.clone()} name={key} value={row.value.clone()} placeholder={row.placeholder} inputmode={row.mode} {readonly}
                    autocomplete="off" spellcheck="false" {oninput} list={list.clone()}
                    aria-invalid={row.invalid.to_string()} aria-describedby={described} />
                if let (Some(list), Some(values)) = (list, row.list.clone()) {
                    <datalist id={list}>{ for values.into_iter().map(|v| html! { <option value={v} /> }) }</datalist>
                }
            </>
        }
    };
    html! {
        <div class={row.class()}>
            <label for={id}>
                <span class={markup::LABEL}>{ row.label }</span>
                <code class={markup::KEY}>{ key }</code>
            </label>
            { control }
            <p id={markup::id(markup::HELP_ID, key)} class={markup::HELP}>{ row.help }</p>
            <FieldMessages {field} messages={row.messages} fixes={props.fixes.clone()} on_fix={props.on_apply.clone()} />
        </div>
    }
}
