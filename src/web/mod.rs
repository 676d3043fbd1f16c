//! The page's few direct uses of the browser that are not Yew components (wasm only): the page's
//! own address, the iframe height messages ([`iframe`]) and the crash notice ([`crash`]).

pub mod crash;
pub mod iframe;

/// The page URL without its query and fragment.
pub fn base_url() -> String {
    let location = gloo::utils::window().location();
    let origin = location.origin().unwrap_or_default();
    let path = location.pathname().unwrap_or_default();
    format!("{origin}{path}")
}
