//! When the page is framed (`embed=1` in a host page), it tells the host how tall its content is
//! so the iframe can fit it: `{ type: "dpcalc:height", height: <CSS px>, href: <this page> }`,
//! posted after every render and whenever the content box changes size.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Tells a host page (when framed) how tall the content is:
/// `{ type: "dpcalc:height", height: <CSS px>, href: <this page> }`.
pub fn post_height() {
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
pub fn observe_height() {
    let callback = Closure::<dyn FnMut()>::new(post_height);
    if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
        if let Some(body) = gloo::utils::document().body() {
            observer.observe(&body);
        }
    }
    callback.forget(); // lives as long as the page
}
