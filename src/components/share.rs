//! The share link and its Copy button (Clipboard API, with a selectable fallback when the
//! clipboard is refused, as in cross-origin iframes), and the Embed dialog: the iframe, Markdown
//! and text snippets, and the summary card (`[data-card]`, src/calc/card.rs) for docs that strip
//! iframes: an SVG file to download (`a[data-card-download]`, a `data:` URL: a download is no
//! fetch, so the strict CSP allows it), its inline preview (the markup itself: the CSP allows no
//! `data:` image) and the Markdown that links the committed picture (`[data-card-markdown]`).

use std::rc::Rc;

use wasm_bindgen::JsValue;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::calc::{card, Framework, RawInputs, Report};
use crate::embed;
use crate::state::Urls;

#[derive(Properties, PartialEq)]
pub struct ShareProps {
    pub framework: Framework,
    /// The release computed (an id of the framework's releases), for the summary card.
    pub release: &'static str,
    pub urls: Urls,
    pub inputs: RawInputs,
    pub report: Rc<Report>,
}

#[derive(Clone, Copy, PartialEq)]
enum Copied {
    Idle,
    Done,
    Refused,
}

#[function_component(Share)]
pub fn share(props: &ShareProps) -> Html {
    let status = use_state(|| Copied::Idle);
    let show_embed = use_state(|| false);
    let field = use_node_ref();
    let url = props.urls.share.clone();
    {
        let status = status.clone();
        use_effect_with(url.clone(), move |_| status.set(Copied::Idle));
    }
    let onclick = copy_on_click(url.clone(), status.clone(), field.clone());
    let onfocus = Callback::from(|e: FocusEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        input.select();
    });
    let message = copy_message(*status);
    let toggle = {
        let show_embed = show_embed.clone();
        Callback::from(move |_: MouseEvent| show_embed.set(!*show_embed))
    };
    let snippets = show_embed.then(|| embed_snippets(props));
    html! {
        <section class="share" aria-label="Share">
            <h2><label for="share-url">{ "Link to these inputs" }</label></h2>
            <div class="share-row" data-output="share_url" data-value={url.clone()}>
                <input id="share-url" type="text" readonly=true value={url} ref={field} {onfocus} />
                <button type="button" {onclick}>{ "Copy link" }</button>
                <button type="button" class="secondary" onclick={toggle} aria-expanded={show_embed.to_string()}
                    aria-controls="embed-snippets">{ "Embed" }</button>
            </div>
            { message }
            { for snippets }
            <p class="full-link">
                <a href={props.urls.full.clone()} target="_blank" rel="noopener" data-output="full_url"
                    data-value={props.urls.full.clone()}>{ "Open in a new tab \u{2197}" }</a>
            </p>
        </section>
    }
}

/// The Copy link button: copies the link, or selects it when the browser refuses.
fn copy_on_click(
    url: String,
    status: UseStateHandle<Copied>,
    field: NodeRef,
) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        let url = url.clone();
        let status = status.clone();
        let field = field.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let ok = copy(&url).await;
            if !ok {
                if let Some(input) = field.cast::<HtmlInputElement>() {
                    let _ = input.focus();
                    input.select();
                }
            }
            status.set(if ok { Copied::Done } else { Copied::Refused });
        });
    })
}

/// Whether the Copy link button's copy worked.
fn copy_message(status: Copied) -> Html {
    match status {
        Copied::Idle => html! {},
        Copied::Done => html! { <span class="copied" role="status">{ "Copied." }</span> },
        Copied::Refused => html! {
            <span class="copied" role="status">{ "The browser refused the clipboard here; the link is selected: press Ctrl+C (⌘C)." }</span>
        },
    }
}

/// The Embed dialog: the iframe, Markdown and text snippets, and the summary card.
fn embed_snippets(props: &ShareProps) -> Html {
    let s = embed::snippets(
        props.framework,
        &props.urls.embed,
        &props.urls.full,
        &props.inputs,
        &props.report,
    );
    let (fw, release, url) = (props.framework, props.release, &props.urls.share);
    let svg = card::svg(fw, release, &props.inputs, &props.report, url);
    let preview = card::preview(fw, release, &props.inputs, &props.report, url);
    let markdown = card::markdown(fw, release, &props.report, url);
    let onfocus = Callback::from(|e: FocusEvent| {
        let area: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
        area.select();
    });
    html! {
        <div class="snippets" id="embed-snippets">
            <Snippet id="snippet-iframe" label="HTML (iframe)" text={s.iframe} />
            <Snippet id="snippet-markdown" label="Markdown link" text={s.markdown} />
            <Snippet id="snippet-text" label="Plain text" text={s.text} />
            <p class="help">
                { "To size the iframe to its content, add to the host page: " }
                <code>{ HOST_SNIPPET }</code>
            </p>
            <section class="summary-card" data-card="" aria-labelledby="card-title">
                <h3 id="card-title">{ "Summary card (SVG)" }</h3>
                <p class="help">
                    { "For READMEs and wikis that strip iframes (GitHub, GitLab): download the picture, commit it next to the page, and paste the Markdown below: the picture links to these inputs. It reads in light and dark themes and loads nothing." }
                </p>
                <div class="card-preview">{ Html::from_html_unchecked(AttrValue::from(preview)) }</div>
                <p class="card-download">
                    <a download={card::FILE_NAME} href={card::data_url(&svg)} data-card-download="">
                        { format!("Download {}", card::FILE_NAME) }
                    </a>
                </p>
                <div class="snippet">
                    <label for="snippet-card">{ "Markdown (the committed picture, linked to the calculator)" }</label>
                    <textarea id="snippet-card" readonly=true rows="3" value={markdown} {onfocus}
                        data-snippet="snippet-card" data-card-markdown="" />
                </div>
            </section>
        </div>
    }
}

/// The host-page script that sizes `iframe.dpcalc` from dpcalc's height messages.
pub const HOST_SNIPPET: &str = "<script>addEventListener(\"message\", (e) => { if (e.data && e.data.type === \"dpcalc:height\") \
for (const f of document.querySelectorAll(\"iframe.dpcalc\")) if (f.contentWindow === e.source) f.style.height = e.data.height + \"px\"; });</script>";

#[derive(Properties, PartialEq)]
struct SnippetProps {
    id: &'static str,
    label: &'static str,
    text: String,
}

/// A read-only text area that selects itself on focus.
#[function_component(Snippet)]
fn snippet(props: &SnippetProps) -> Html {
    let onfocus = Callback::from(|e: FocusEvent| {
        let area: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
        area.select();
    });
    html! {
        <div class="snippet">
            <label for={props.id}>{ props.label }</label>
            <textarea id={props.id} readonly=true rows="3" value={props.text.clone()} {onfocus} data-snippet={props.id} />
        </div>
    }
}

/// Writes to the clipboard; false when the API is missing or the browser refuses.
pub(crate) async fn copy(text: &str) -> bool {
    let navigator = gloo::utils::window().navigator();
    let has_clipboard = js_sys::Reflect::get(&navigator, &JsValue::from_str("clipboard"))
        .map(|c| !c.is_undefined() && !c.is_null())
        .unwrap_or(false);
    if !has_clipboard {
        return false;
    }
    let promise = navigator.clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}
