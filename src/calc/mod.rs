//! The calculation core: inputs in, every number a framework would compute out, with the reasons.
//!
//! This module tree is plain Rust. It never imports a web crate (Yew, web-sys, wasm-bindgen), so
//! it compiles and is tested natively, and the page renders exactly what it returns: the UI holds
//! no arithmetic of its own. It does not know URLs either (see `crate::query`).
//!
//! Its modules form layers; each uses only the layers below it:
//! 1. vocabulary: this file (outputs, messages, [`RawInputs`], [`Report`]), [`field`] (every
//!    config key, its parsing, the cluster and throughput groups), [`num`] (Python's int/float
//!    semantics), [`cluster`] (nodes × GPUs per node or world size), [`spec`] (what a framework
//!    description holds: [`Spec`], releases, concepts, parallel dimensions);
//! 2. the frameworks: [`frameworks`], one folder each with its rules and its `SPEC`, and the
//!    registry ([`Framework`]) that lists them; [`schedule`] (tokens and time, dpcalc's own
//!    arithmetic over any framework's report) sits beside the registry, which calls it;
//! 3. the machinery, generic over a [`Spec`]: [`layout`] (the layout explorer), [`mesh`] (the
//!    GPU map), [`compare`], [`export`], [`import`].
//!
//! Beside them, the model stage's parts: [`model`] (an architecture under config.json's keys,
//! its parameter counts and the Hub presets), [`memory`] (DeepSpeed's ZeRO model-state estimators,
//! Megatron's theoretical memory), [`estimate`] (memory per GPU by the published formulas of the
//! ZeRO and activation-recomputation papers), [`flops`] (FLOPs per token in each framework's
//! convention) and [`lora`] (LoRA's trainable parameters as PEFT counts them for axolotl's
//! LoraConfig). [`fit`] runs them as the model stage of every report.

pub mod card;
pub mod cluster;
pub mod compare;
pub mod estimate;
pub mod export;
pub mod field;
pub mod fit;
pub mod fixes;
pub mod flops;
pub mod frameworks;
pub mod gpu;
pub mod guide;
pub mod import;
pub mod layout;
pub mod lora;
pub mod memory;
pub mod mesh;
pub mod model;
pub mod num;
pub mod parse;
pub mod plan;
pub mod report;
pub mod schedule;
pub mod shell;
pub mod spec;
pub mod view;

pub use field::{Field, Kind, RawInputs};
pub use frameworks::{axolotl, deepspeed, hf, megatron, nanotron, torchtitan};
pub use frameworks::{Framework, Release};
pub use num::Num;
pub use parse::Param;
pub use report::{Diag, Grid, Level, Output, Refusal, Report, Stage, Step};
pub use spec::Spec;
