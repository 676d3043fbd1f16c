//! The visible parts of the page. Each renders what the core computed and emits input changes;
//! none computes a number.

mod compare;
mod config;
mod explain;
mod explorer;
mod fixes;
mod form;
mod gpumap;
mod later;
mod memory;
mod messages;
mod picker;
mod planner;
mod results;
mod run;
mod scale;
mod share;
mod summary;
mod timeline;

pub use compare::Compare;
pub use config::Config;
pub use explain::{Explain, Legacy};
pub use explorer::{ExplorerProps, LayoutExplorer};
pub use form::Form;
pub use gpumap::{GpuMap, GpuMapProps};
pub use later::Later;
pub use memory::Memory;
pub use messages::{FieldMessages, Notices};
pub use picker::Picker;
pub use planner::PlanView;
pub use results::Results;
pub use run::Run;
pub use scale::ScaleView;
pub use share::Share;
pub use summary::{Examples, Summary};
pub use timeline::{TimelineProps, TokensTime};
