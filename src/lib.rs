//! dpcalc: what batch size and how many optimizer steps a distributed training run gets.
//!
//! - [`calc`]: the calculation core, plain Rust, no web dependency (the single source of truth);
//! - [`query`]: the link format, the only place that knows URL parameter names;
//! - `app` and `components` (wasm only): the Yew page, which renders a [`calc::Report`].

pub mod calc;
pub mod embed;
pub mod query;
pub mod state;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(target_arch = "wasm32")]
pub mod components;

#[cfg(target_arch = "wasm32")]
pub use app::{mount, App};
