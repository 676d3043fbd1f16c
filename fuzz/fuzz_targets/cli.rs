//! `dpcalc check` and `dpcalc plan` (`--scale`, `--expect-within-best`) as library calls
//! (`dpcalc::cli::check`, `dpcalc::cli::plan::plan`): files, links and flags built from the
//! input. The first byte says which command, which outputs (`--json`, `--link`, `--card`) and how many files;
//! the rest is split at NUL bytes: the files' texts (written to a scratch directory), then one
//! argument per part, its first character naming it (`f` --framework, `v` --version, `n`
//! --nodes, `g` --gpus-per-node, `s` --set, `e` --expect, `b` --base, `l` a link). Checked on
//! every input:
//! - the check takes under 100 ms (`checks::in_time`);
//! - the exit status is 0, 1 or 2, and with 2 nothing is printed on standard output;
//! - standard output and error are UTF-8 with no control character but line ends; `--json`
//!   prints one JSON document;
//! - the summary card holds only the card's own elements and attributes.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod checks;

// what the checks learn once (the pages' vocabulary, the fresh pages) is learned before the
// first input, so libFuzzer's `-timeout` never counts it
fuzz_target!(init: checks::warm(), |data: &[u8]| checks::cli(data));
