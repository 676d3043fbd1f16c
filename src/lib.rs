//! dpcalc: what batch size and how many optimizer steps a distributed training run gets.
//!
//! - [`calc`]: the calculation core, plain Rust, no web dependency (the single source of truth);
//! - [`query`]: the link format, the only place that knows URL parameter names;
//! - [`state`]: the page's state and reducer (the link, its report, the query and links it
//!   writes), native so `cargo test` covers it;
//! - `app`, `components` and `web` (wasm only): the Yew page wired to [`state`], rendering a
//!   [`calc::Report`] and `calc::view`'s derivations; `web` holds the iframe height messages and
//!   the crash notice.

pub mod calc;
pub mod embed;
pub mod query;
pub mod state;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(target_arch = "wasm32")]
pub mod components;
#[cfg(target_arch = "wasm32")]
pub mod web;

#[cfg(target_arch = "wasm32")]
pub use app::{mount, App};
