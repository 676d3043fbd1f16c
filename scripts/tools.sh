#!/usr/bin/env bash
# Installs what the build and the tests need, skipping what is already there at the right version.
#   scripts/tools.sh build   -> wasm32 target, the pinned nightly with rust-src (first views), trunk,
#                               wasm-bindgen-cli (= Cargo.lock), wasm-opt (binaryen 132, npm)
#   scripts/tools.sh test    -> the above, plus Debian's chromium, chromium-driver and firefox-esr, geckodriver
#                               (cargo), playwright-core and axe-core (npm)
#   scripts/tools.sh fuzz    -> cargo-fuzz (only; `make fuzz` calls it, `make test` never does)
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/.tools"
TRUNK_VERSION=0.21.14
BINARYEN_VERSION=132.0.0
PLAYWRIGHT_VERSION=1.65.1
AXE_VERSION=4.11.4
CARGO_FUZZ_VERSION=0.13.2
what="${1:-build}"

say() { printf '\033[1m[tools]\033[0m %s\n' "$*"; }

# Fuzzing needs only cargo-fuzz (the fuzz targets build with the stable toolchain and
# RUSTC_BOOTSTRAP=1, see the Makefile): nothing else of the build's or the tests' tools.
if [ "$what" = fuzz ]; then
  if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
    say "installing cargo-fuzz $CARGO_FUZZ_VERSION (about a minute, once)"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
  fi
  say "fuzz tools ready ($(cargo fuzz --version))"
  exit 0
fi

# The wasm-bindgen the crate is locked to; the CLI must be exactly this version.
[ -f Cargo.lock ] || cargo generate-lockfile --offline 2>/dev/null || cargo generate-lockfile
WBG=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The first views (scripts/first.sh) rebuild std for size with a pinned nightly and its sources;
# without it they are built with stable Rust, only larger.
NIGHTLY=$(cat scripts/nightly-version)
if ! rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1 \
  || [ ! -d "$(rustup run "$NIGHTLY" rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
  say "installing $NIGHTLY with rust-src (for the first views' -Zbuild-std; under a minute)"
  rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src \
    || say "could not install $NIGHTLY: the first views will be built with stable Rust (larger)"
fi

if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (about 10 minutes, once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WBG" ] || ! command -v wasm-bindgen-test-runner >/dev/null; then
  say "installing wasm-bindgen-cli $WBG (matches Cargo.lock)"
  cargo install wasm-bindgen-cli --version "$WBG" --force
fi

npm_tool() { # package version
  local dir="$TOOLS/node_modules/$1"
  if [ ! -f "$dir/package.json" ] || ! grep -q "\"version\": \"$2\"" "$dir/package.json"; then
    say "installing $1@$2 (npm, into .tools)"
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund "$1@$2" >/dev/null
  fi
}
npm_tool binaryen "$BINARYEN_VERSION"

if [ "$what" = test ]; then
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    say "installing chromium and chromium-driver (Debian)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  if ! command -v firefox-esr >/dev/null; then
    say "installing firefox-esr (Debian)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq firefox-esr >/dev/null
  fi
  if ! command -v geckodriver >/dev/null; then
    say "installing geckodriver (cargo, a few minutes once)"
    cargo install geckodriver --locked
  fi
  npm_tool playwright-core "$PLAYWRIGHT_VERSION"
  npm_tool axe-core "$AXE_VERSION"
fi
say "tools ready (wasm-bindgen $WBG, $(trunk --version), wasm-opt $("$TOOLS/node_modules/.bin/wasm-opt" --version | awk '{print $3}'))"
