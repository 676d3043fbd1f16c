//! Messages at a field, and notices about the link itself (which unknown parameters are listed:
//! `calc::view::unlisted`).

use yew::prelude::*;

use crate::calc::fixes::{names_key, Fix};
use crate::calc::parse::shorten;
use crate::calc::{view, Diag, Field, Level};

/// The id of the n-th message at a field, for `aria-describedby`.
pub fn message_id(field: Field, n: usize) -> String {
    format!("msg-{}-{n}", field.key())
}

#[derive(Properties, PartialEq)]
pub struct FieldMessagesProps {
    pub field: Field,
    pub diags: Vec<Diag>,
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
/// last error, the fixes: `button[data-fix=KEY]`, `data-fix-set` the query fragment it sets.
#[function_component(FieldMessages)]
pub fn field_messages(props: &FieldMessagesProps) -> Html {
    let key = props.field.key();
    let last_error = props.diags.iter().rposition(|d| d.level == Level::Error);
    let fixes = html! {
        if !props.fixes.is_empty() {
            <div class="fixes" role="group" aria-label={format!("Fixes for {key}")}>
                { for props.fixes.iter().map(|fix| {
                    let set = fix.set.clone();
                    let cb = props.on_fix.clone();
                    let query = fix.set.iter().map(|(f, v)| format!("{}={v}", f.key())).collect::<Vec<_>>().join("&");
                    html! {
                        <button type="button" class="fix" data-fix={key} data-fix-set={query}
                            onclick={Callback::from(move |_: MouseEvent| cb.emit(set.clone()))}>
                            { fix.label.clone() }
                        </button>
                    }
                }) }
            </div>
        }
    };
    props
        .diags
        .iter()
        .enumerate()
        .map(|(n, d)| {
            let id = message_id(props.field, n);
            let text = d.message.clone();
            match d.level {
                Level::Error => {
                    let named = names_key(props.field, &text);
                    html! {
                        <>
                            <p {id} class="msg error" data-error={key} role="alert">
                                if !named { <code class="key">{ key }</code>{ ": " } }
                                { text }
                            </p>
                            if Some(n) == last_error { { fixes.clone() } }
                        </>
                    }
                }
                Level::Warning => {
                    html! { <p {id} class="msg warning" data-warning={key}>{ text }</p> }
                }
                Level::Note => html! { <p {id} class="msg note" data-note={key}>{ text }</p> },
                Level::Hint => html! { <p {id} class="msg hint" data-hint={key}>{ text }</p> },
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
        <section class="notices" aria-label="Link notices">
            { for props.link.iter().map(|(k, text)| html! {
                <p class="msg notice" data-notice={k.clone()}>{ text.clone() }</p>
            }) }
            { for view::unlisted(&props.unknown, &props.link).map(|(k, v)| html! {
                <p class="msg notice" data-notice={k.clone()}>
                    { format!("Unknown parameter \u{201c}{k}\u{201d}") }
                    { if v.is_empty() { String::new() } else { format!(" (value \u{201c}{}\u{201d})", shorten(v)) } }
                    { " is ignored, and kept in the link you share." }
                </p>
            }) }
        </section>
    }
}
