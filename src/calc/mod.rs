//! The calculation core: inputs in, every number a framework would compute out, with the reasons.
//!
//! This module tree is plain Rust. It never imports a web crate (Yew, web-sys, wasm-bindgen), so
//! it compiles and is tested natively, and the page renders exactly what it returns: the UI holds
//! no arithmetic of its own. It does not know URLs either (see `crate::query`).
//!
//! This file only declares the modules and re-exports the vocabulary. The modules form layers,
//! each using only the ones before it (`tests/architecture.rs` holds the exact order and checks
//! it):
//! 1. vocabulary: [`num`] (Python's int/float semantics), [`field`] (every config key,
//!    [`RawInputs`], the cluster and throughput groups), [`gpu`] (the GPUs dpcalc knows and their
//!    figures), [`plan`] (the resolved plan: what a framework's rules decided, typed, for every
//!    later stage), [`estimated`] (what the model stage estimated, typed), [`report`] (outputs,
//!    messages, refusals, stages: [`Report`]), [`parse`] (typed reading of what was typed),
//!    [`spec`] (what a framework description holds: [`Spec`], release tables, concepts, parallel
//!    dimensions), [`first_view`] (what a first view's build leaves out of a Spec: the one place
//!    the build variant is decided), [`cluster`] (nodes × GPUs per node or world size, and the
//!    node shape);
//! 2. the model stage's parts: [`model`] (an architecture under config.json's keys, its parameter
//!    counts and the Hub presets), [`memory`] (DeepSpeed's ZeRO model-state estimators, Megatron's
//!    theoretical memory), [`estimate`] (memory per GPU by the published formulas of the ZeRO and
//!    activation-recomputation papers), [`flops`] (FLOPs per token in each framework's convention)
//!    and [`lora`] (LoRA's trainable parameters as PEFT counts them for axolotl's LoraConfig);
//!    [`fit`] runs them as the model stage of every report, and [`schedule`] (tokens and time,
//!    dpcalc's own arithmetic over any framework's report) follows it;
//! 3. the frameworks: [`frameworks`], one folder each with its rules and its `SPEC`, and the
//!    registry ([`Framework`]) that lists them and runs [`fit`] and [`schedule`] after a
//!    framework's rules;
//! 4. the machinery, generic over a [`Spec`]: [`layout`] (the layout explorer), [`compare`],
//!    [`export`], [`import`] (pasted configs, and a bash launch script read as bash would), then
//!    [`planner`] (every plan the framework accepts that fits, ranked by estimated step time),
//!    [`mesh`] (the GPU map) and [`fixes`] (one-click fixes under an error);
//! 5. what the page says beyond the numbers: [`view`] (what the components show besides values),
//!    then [`card`] (the summary card) and [`guide`] (the first visit: what a value still needs,
//!    the phone summary, the examples).

pub mod card;
pub mod cluster;
pub mod compare;
pub mod estimate;
pub mod estimated;
pub mod export;
pub mod field;
pub mod first_view;
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
pub mod planner;
pub mod report;
pub mod scaling;
pub mod schedule;
pub mod spec;
pub mod view;

pub use field::{Field, Kind, RawInputs};
pub use frameworks::{axolotl, deepspeed, hf, megatron, nanotron, torchtitan};
pub use frameworks::{Framework, Release};
pub use num::Num;
pub use parse::Param;
pub use report::{Diag, Grid, Level, Output, Refusal, Report, Stage, Step};
pub use spec::Spec;
