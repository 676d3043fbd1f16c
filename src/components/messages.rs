//! Messages at a field, and notices about the link itself (which unknown parameters are listed:
//! `calc::view::unlisted`).

use yew::prelude::*;

use super::fixes::fixes;
use crate::calc::fixes::Fix;
use crate::calc::Field;
use crate::page::{self, markup};

#[derive(Properties, PartialEq)]
pub struct FieldMessagesProps {
    pub field: Field,
    /// The field's messages (`crate::page::messages`).
    pub messages: Vec<page::Message>,
    /// One-click changes that make the framework accept the inputs at this field
    /// (`calc::fixes`), shown after its last error.
    #[prop_or_default]
    pub fixes: Vec<Fix>,
    /// Applies a fix's assignments (one action for all its fields).
    #[prop_or_default]
    pub on_fix: Callback<Vec<(Field, String)>>,
}

/// Every message at one field: errors carry `data-error` and `role="alert"`, warnings
/// `data-warning`, notes `data-note`, hints `data-hint` (the attribute value is the field key).
/// An error whose text does not name the field's key shows the key in front of it. After the
/// last error, the fixes (`fixes.rs`).
#[function_component(FieldMessages)]
pub fn field_messages(props: &FieldMessagesProps) -> Html {
    let key = props.field.key();
    let fixes = fixes(key, &props.fixes, &props.on_fix);
    props
        .messages
        .iter()
        .map(|m| {
            let (id, level) = (m.id.clone(), m.level);
            let class = classes!(markup::MSG, level);
            let p = match level {
                markup::LEVEL_ERROR => html! {
                    <p {id} {class} data-error={key} role={markup::ALERT}>
                        if m.show_key { <code class={markup::KEY}>{ key }</code>{ markup::KEY_SEP } }
                        { m.text.clone() }
                    </p>
                },
                markup::LEVEL_WARNING => html! { <p {id} {class} data-warning={key}>{ m.text.clone() }</p> },
                markup::LEVEL_NOTE => html! { <p {id} {class} data-note={key}>{ m.text.clone() }</p> },
                _ => html! { <p {id} {class} data-hint={key}>{ m.text.clone() }</p> },
            };
            html! {
                <>
                    { p }
                    if m.last_error { { fixes.clone() } }
                </>
            }
        })
        .collect()
}

#[derive(Properties, PartialEq)]
pub struct NoticesProps {
    pub unknown: Vec<(String, String)>,
    /// Notices about the link's own parameters (`v`, `theme`, …).
    pub link: Vec<(String, String)>,
}

/// Parameters of the link that dpcalc does not know: kept in the share link, otherwise ignored.
#[function_component(Notices)]
pub fn notices(props: &NoticesProps) -> Html {
    if props.unknown.is_empty() && props.link.is_empty() {
        return html! {};
    }
    html! {
        <section class={markup::NOTICES} aria-label={markup::NOTICES_ARIA}>
            { for page::notices(&props.unknown, &props.link).into_iter().map(|n| html! {
                <p class={markup::NOTICE} data-notice={n.key}>{ n.text }</p>
            }) }
        </section>
    }
}
