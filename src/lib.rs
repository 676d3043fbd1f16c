//! dpcalc: what batch size and how many optimizer steps a distributed training run gets.
//!
//! - [`calc`]: the calculation core, plain Rust, no web dependency (the single source of truth);
//! - [`query`]: the link format, the only place that knows URL parameter names;
//! - [`state`]: the page's state and reducer (the link, its report, the query and links it
//!   writes), native so `cargo test` covers it;
//! - [`page`]: the first screen's view model (picker, form, results, summary, notices), which
//!   both renderers draw: the Yew components and [`first`], the Yew-free first view (escaped
//!   HTML) a cold visit paints before the app arrives;
//! - `app`, `components` and `web` (wasm only): the Yew page wired to [`state`], rendering a
//!   [`calc::Report`] and `calc::view`'s derivations; `web` holds the iframe height messages and
//!   the crash notice;
//! - [`cli`] (native only): `dpcalc check`, the same core on configs in files, for CI and docs.

pub mod calc;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod embed;
// before `first` and the components: `page::markup`'s `markup!` is in textual scope after it
#[macro_use]
pub mod page;
pub mod first;
pub mod query;
pub mod state;

#[cfg(all(target_arch = "wasm32", feature = "app"))]
pub mod app;
#[cfg(all(target_arch = "wasm32", feature = "app"))]
pub mod components;
#[cfg(all(target_arch = "wasm32", feature = "app"))]
pub mod web;

#[cfg(all(target_arch = "wasm32", feature = "app"))]
pub use app::{mount, App};
