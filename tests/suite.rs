//! The native tests, as one test binary: each file of `tests/` is a module of it (`tests/card.rs`
//! is `card`, its tests `card::...`), compiled and linked once, its tests run in parallel with all
//! the others. Run one file's tests with `cargo test --test suite card::`. The helpers they share
//! are in `tests/common/`. The browser tests (`tests/web.rs`, `tests/web_layout.rs`) are test
//! binaries of their own, for wasm32 (`Cargo.toml`).
#![cfg(not(target_arch = "wasm32"))]

mod common;

mod architecture;
mod axolotl;
mod card;
mod cli;
mod compare;
mod deepspeed;
mod edges;
mod edges_every_framework;
mod estimate;
mod explorer_memory;
mod export;
mod first;
mod fit;
mod fixes;
mod guide;
mod hf;
mod import;
mod layout;
mod links;
mod lora;
mod markup;
mod megatron;
mod mesh;
mod model;
mod nanotron;
mod properties;
mod readme;
mod real_configs;
mod real_configs_megatron;
mod registry;
mod roundtrip;
mod schedule;
mod stages;
mod torchtitan;
