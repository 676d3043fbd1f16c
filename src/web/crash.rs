//! A panic must never leave a blank or frozen page: [`on_panic`] (installed as Yew's panic hook
//! by `app::mount`) logs it and shows [`show_crash`], a notice with the link the user had and a
//! way back to the defaults.

use wasm_bindgen::JsValue;

use super::base_url;

/// The panic hook: logs the panic and shows [`show_crash`].
pub fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    web_sys::console::error_1(&JsValue::from_str(&format!("dpcalc panicked: {info}")));
    show_crash();
}

/// Puts a message at the top of the page saying that dpcalc stopped, with the link the user had
/// (nothing typed is lost) and a link that resets to the defaults. Text only; nothing from the
/// link is parsed as HTML. Public so the browser tests can check it without panicking.
pub fn show_crash() {
    let document = gloo::utils::document();
    let Some(body) = document.body() else { return };
    let href = gloo::utils::window().location().href().unwrap_or_default();
    let make = |tag: &str, text: &str| {
        let el = document.create_element(tag).ok()?;
        el.set_text_content(Some(text));
        Some(el)
    };
    let (Some(notice), Some(title), Some(link), Some(kept)) = (
        make("section", ""),
        make("p", "dpcalc hit an internal error and stopped computing. This is a bug; your link is kept here:"),
        make("a", "Start again with the defaults"),
        document.create_element("input").ok(),
    ) else {
        return;
    };
    let _ = notice.set_attribute("class", "crashed");
    let _ = notice.set_attribute("role", "alert");
    let _ = notice.set_attribute("data-crash", "");
    let _ = kept.set_attribute("readonly", "");
    let _ = kept.set_attribute("value", &href);
    let _ = kept.set_attribute("aria-label", "The link you had");
    let _ = link.set_attribute("href", &base_url());
    for child in [&title, &kept, &link] {
        let _ = notice.append_child(child);
    }
    let _ = body.insert_before(&notice, body.first_child().as_ref());
}
