#!/usr/bin/env bash
# make bench (last part): the wall time of `dpcalc check` on one config, the release binary,
# with hyperfine (Debian's package) when it is there, else a plain loop of RUNS runs. Prints the
# figures and writes them into docs/benchmark.md's `cli` section (bench/doc.mjs).
#   RUNS (default 100): runs per case
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-100}"
cargo build --release --quiet --bin dpcalc
BIN="$PWD/target/release/dpcalc"
C=tests/fixtures/configs
# the largest pastes the import reads: 20,001 keys (it reads 20,000 and names the rest)
H=$(mktemp -d)
trap 'rm -rf "$H"' EXIT
{ echo 'parallelism:'; echo '  dp: 2'; for i in $(seq 0 20000); do echo "k$i: 1"; done; } >"$H/nanotron-20001-keys.yaml"
{ echo "[training]"; echo "steps = 10"; for i in $(seq 0 20000); do echo "k$i = 1"; done; } >"$H/torchtitan-20001-keys.toml"
cases=(
  "a YAML of 20,001 keys (nanotron)|$BIN check --framework nanotron $H/nanotron-20001-keys.yaml"
  "a TOML of 20,001 keys (torchtitan)|$BIN check --framework torchtitan $H/torchtitan-20001-keys.toml"
  "axolotl YAML|$BIN check $C/axolotl.yml"
  "DeepSpeed JSON|$BIN check $C/deepspeed.json"
  "Megatron script|$BIN check $C/megatron.sh"
  "torchtitan TOML, --json|$BIN check --json $C/torchtitan.toml"
  "axolotl + accelerate + config.json|$BIN check $C/axolotl.yml $C/accelerate.yaml $C/llama-3.1-8b.config.json"
  "a refused link (fixes computed)|$BIN check ?framework=megatron&nodes=4&tensor_model_parallel_size=3&micro_batch_size=2&global_batch_size=256"
)
echo "dpcalc check, wall time per run ($RUNS runs each, release build, $(nproc) cores)"
rows=()
if command -v hyperfine >/dev/null; then
  how="hyperfine, $RUNS runs each after 5 warm-up runs"
  for c in "${cases[@]}"; do
    name="${c%%|*}"; cmd="${c#*|}"
    json=$(mktemp)
    hyperfine -N -i --style none --warmup 5 --runs "$RUNS" --export-json "$json" "$cmd" >/dev/null 2>&1
    # median p95 max, in ms
    read -r med p95 max < <(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s).results[0];
        const t=r.times.slice().sort((a,b)=>a-b);const q=p=>t[Math.min(t.length-1,Math.floor(p*t.length))]*1000;
        console.log(`${q(0.5).toFixed(2)} ${q(0.95).toFixed(2)} ${(r.max*1000).toFixed(2)}`)})' <"$json")
    rm -f "$json"
    printf '  %-38s %s\n' "$name" "median $med ms, p95 $p95 ms, max $max ms"
    rows+=("| $name | $med / $p95 / $max ms |")
  done
else
  how="no hyperfine: a shell loop of $RUNS runs each, fork included"
  for c in "${cases[@]}"; do
    name="${c%%|*}"; cmd="${c#*|}"
    times=()
    for _ in $(seq "$RUNS"); do
      s=$(date +%s%N); $cmd >/dev/null 2>&1 || true; e=$(date +%s%N)
      times+=($(( (e - s) / 1000 )))
    done
    sorted=($(printf '%s\n' "${times[@]}" | sort -n))
    n=${#sorted[@]}
    med=$(awk "BEGIN{printf \"%.2f\", ${sorted[$((n / 2))]}/1000}")
    p95=$(awk "BEGIN{printf \"%.2f\", ${sorted[$((n * 95 / 100))]}/1000}")
    max=$(awk "BEGIN{printf \"%.2f\", ${sorted[$((n - 1))]}/1000}")
    printf '  %-38s median %s ms, p95 %s ms (no hyperfine: a shell loop, fork included)\n' "$name" "$med" "$p95"
    rows+=("| $name | $med / $p95 / $max ms |")
  done
fi
{
  echo '## The command line (`bench/cli.sh`)'
  echo
  echo "MEASURED_AT: \`dpcalc check\` on the files of \`tests/fixtures/configs/\`, release build, wall time per run ($how)."
  echo
  echo '| case | median / p95 / max |'
  echo '| --- | --- |'
  printf '%s\n' "${rows[@]}"
} | node bench/doc.mjs cli
