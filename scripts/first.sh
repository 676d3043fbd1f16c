#!/usr/bin/env bash
# Builds the six first views (src/first.rs) into dist/, after `trunk build --release` (which
# replaces dist/): for each framework, `cargo build --no-default-features --features first-<id>
# --bin first-<id>`, then wasm-bindgen (--target web) and wasm-opt -Oz, as Trunk does for the app.
#
# With the pinned nightly and its rust-src (scripts/tools.sh installs them when it can), std is
# rebuilt for size inside the LTO (-Zbuild-std, optimize_for_size), without panic messages,
# panic locations or Debug formatting: a first view that fails stands aside for the app
# (static/boot.js), which keeps the crash notice. That saves about 15–25 KB gzip per module
# (sizes: docs/benchmark.md). Without the nightly the same modules are built with stable Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
NIGHTLY=$(cat scripts/nightly-version)
DIST=${DIST:-dist}
FRAMEWORKS=${FRAMEWORKS:-"axolotl hf deepspeed megatron torchtitan nanotron"}
OPT_FLAGS="--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue"
export PATH="$PWD/.tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# their own target directory: other flags than the app's, and the app's cache stays warm
export CARGO_TARGET_DIR="$PWD/target/first"

toolchain=(cargo)
std_flags=()
if rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1 \
  && [ -d "$(rustup run "$NIGHTLY" rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
  toolchain=(cargo "+$NIGHTLY")
  std_flags=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size)
  export RUSTFLAGS="-Zlocation-detail=none -Zfmt-debug=none -Zunstable-options -Cpanic=immediate-abort"
  echo "[first] building with $NIGHTLY and -Zbuild-std"
else
  echo "[first] $NIGHTLY with rust-src not found: building with stable Rust (larger modules)"
fi
mkdir -p "$DIST"
for fw in $FRAMEWORKS; do
  "${toolchain[@]}" build --release --target wasm32-unknown-unknown "${std_flags[@]}" \
    --no-default-features --features "first-$fw" --bin "first-$fw"
  wasm-bindgen --target web --no-typescript --out-dir "$DIST" --out-name "first-$fw" \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/first-$fw.wasm"
  # shellcheck disable=SC2086
  wasm-opt "$DIST/first-${fw}_bg.wasm" -Oz --low-memory-unused --strip-producers --strip-target-features \
    $OPT_FLAGS -o "$DIST/first-${fw}_bg.wasm"
done
# boot.js as served: its whole-line comments (the documentation, in static/boot.js) left out
node -e 'const fs = require("fs"); const f = process.argv[1];
  fs.writeFileSync(f, fs.readFileSync(f, "utf8").split("\n").filter((l) => !/^\s*\/\//.test(l)).join("\n"));' "$DIST/boot.js"
# the first views' JS as served: without the JSDoc blocks wasm-bindgen writes above each export
# (the exports' documentation is in src/first.rs)
for fw in $FRAMEWORKS; do
  node -e 'const fs = require("fs"); const f = process.argv[1];
    fs.writeFileSync(f, fs.readFileSync(f, "utf8").replace(/^\/\*\*\n(?: \*.*\n)*? \*\/\n/gm, ""));' "$DIST/first-$fw.js"
done
ls -l "$DIST"/first-* "$DIST/boot.js"
