//! The first view with torchtitan's rules (see `src/first.rs`); its functions are the library's
//! wasm exports, called by `static/boot.js`.

use dpcalc as _;

fn main() {}
