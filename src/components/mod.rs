//! The visible parts of the page. Each renders what the core computed and emits input changes;
//! none computes a number.

mod compare;
mod config;
mod explain;
mod form;
mod messages;
mod picker;
mod results;
mod share;

pub use compare::Compare;
pub use config::Config;
pub use explain::{Explain, Legacy};
pub use form::Form;
pub use messages::{FieldMessages, Notices};
pub use picker::Picker;
pub use results::Results;
pub use share::Share;
