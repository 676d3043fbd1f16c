# dpcalc: the two commands a newcomer runs are `make serve` and `make test`.
SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver

.PHONY: serve test dist tools tools-test native browser e2e lint clean bench baseline fuzz install

## serve: install what is missing, build, and serve at http://127.0.0.1:8080
serve: tools
	trunk serve

## test: native core and property tests, browser tests (headless Chromium and Firefox ESR),
## end-to-end tests of the release build (links, embed under CSP, hostile links, axe-core; Firefox too)
test: tools-test native browser e2e

## dist: the optimized release (LTO, opt-level z, wasm-opt -Oz) into dist/, relative asset paths:
## the app (Trunk), then the six first views (scripts/first.sh)
dist: tools
	trunk build --release
	scripts/first.sh

tools:
	@scripts/tools.sh build

tools-test:
	@scripts/tools.sh test

native:
	cargo test

browser:
	cargo test --target wasm32-unknown-unknown --test web --test web_layout
	env -u CHROMEDRIVER GECKODRIVER=$$(command -v geckodriver) cargo test --target wasm32-unknown-unknown --test web --test web_layout

e2e: dist
	node tests/e2e/run.mjs
	GECKODRIVER=$$(command -v geckodriver) node tests/e2e/firefox.mjs

## fuzz: the cargo-fuzz targets, one per door (query: a link; import: a paste, every format;
## shell: a bash launch script; cli: `dpcalc check` and `dpcalc plan`), one after the other,
## FUZZ_SECONDS each (default 120: 8 minutes for the four, after a build of about 2 minutes),
## under `nice -n 19`. 10^6 executions take about 2 (query), 4 (import), 6 (shell) and
## 8 (cli) minutes on the shared 2-core machine (2026-12-05, docs/testing.md has the figures).
## Installs cargo-fuzz on first use (scripts/tools.sh fuzz); the stable toolchain with
## RUSTC_BOOTSTRAP=1; release, no sanitizer (the crate is safe Rust). Each target's corpus is
## fuzz/corpus/<target>/ (not checked in): the seeds (seed-*, written from the fixtures before each run by scripts/fuzz-seeds.sh) and what
## libFuzzer adds (kept between runs, not checked in); a failing input lands in fuzz/artifacts/.
## One target for longer: make fuzz FUZZ_TARGETS=import FUZZ_SECONDS=3600
FUZZ_TARGETS ?= query import shell cli
fuzz:
	@scripts/tools.sh fuzz
	scripts/fuzz-seeds.sh
	cd fuzz && RUSTC_BOOTSTRAP=1 nice -n 19 cargo fuzz build -s none $(if $(filter 1,$(words $(FUZZ_TARGETS))),$(FUZZ_TARGETS))
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  dict=""; [ -f dict/$$t.dict ] && dict="-dict=dict/$$t.dict"; \
	  RUSTC_BOOTSTRAP=1 nice -n 19 cargo fuzz run -s none $$t -- -max_total_time=$${FUZZ_SECONDS:-120} \
	    -max_len=16384 -timeout=1 -rss_limit_mb=2048 -print_final_stats=1 $$dict || exit 1; \
	done

## bench: release sizes, cold load, interaction latency, against the minimal Yew baseline;
## then the command line's wall time per check (bench/cli.sh)
bench: tools-test dist baseline
	node bench/run.mjs
	bench/cli.sh

## install: the command line, `dpcalc check`, into ~/.cargo/bin (same as `cargo install --path .`)
install:
	cargo install --locked --path .

baseline: tools
	cd bench/baseline && trunk build --release

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --target wasm32-unknown-unknown --all-targets -- -D warnings
	cargo clippy --target wasm32-unknown-unknown --no-default-features --features first-megatron --lib --bins -- -D warnings

clean:
	cargo clean
	rm -rf dist
