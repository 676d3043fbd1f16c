//! The first view with megatron's rules (see `src/first.rs`); its functions are the library's
//! wasm exports, called by `static/boot.js`.

use dpcalc as _;

fn main() {}
