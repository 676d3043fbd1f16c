//! The share link and its Copy button (Clipboard API, with a selectable fallback when the
//! clipboard is refused, as in cross-origin iframes).

use wasm_bindgen::JsValue;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ShareProps {
    pub url: String,
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
    let field = use_node_ref();
    {
        let status = status.clone();
        use_effect_with(props.url.clone(), move |_| status.set(Copied::Idle));
    }
    let onclick = {
        let url = props.url.clone();
        let status = status.clone();
        let field = field.clone();
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
    };
    let onfocus = Callback::from(|e: FocusEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        input.select();
    });
    let message = match *status {
        Copied::Idle => html! {},
        Copied::Done => html! { <span class="copied" role="status">{ "Copied." }</span> },
        Copied::Refused => html! {
            <span class="copied" role="status">{ "The browser refused the clipboard here; the link is selected: press Ctrl+C (⌘C)." }</span>
        },
    };
    html! {
        <section class="share" aria-label="Share">
            <h2><label for="share-url">{ "Link to these inputs" }</label></h2>
            <div class="share-row" data-output="share_url" data-value={props.url.clone()}>
                <input id="share-url" type="text" readonly=true value={props.url.clone()} ref={field} {onfocus} />
                <button type="button" {onclick}>{ "Copy link" }</button>
            </div>
            { message }
        </section>
    }
}

/// Writes to the clipboard; false when the API is missing or the browser refuses.
async fn copy(text: &str) -> bool {
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
