#!/usr/bin/env bash
# Writes the fuzz targets' seed inputs into fuzz/corpus/<target>/seed-* from the test fixtures
# (`make fuzz` runs it first, so a new fixture becomes a seed). Each seed is the target's input
# format: a first byte that picks (framework, outputs, files), then the text. libFuzzer adds its
# own inputs beside them (named by their SHA-1). Neither is checked in (.gitignore).
#   import: every config of tests/fixtures/configs/ (detected; and forced as its framework)
#   shell:  the bash scripts and command lines of tests/fixtures/configs/ and tests/fixtures/shell/
#   cli:    every config as the one file of `dpcalc check` (text, --json, --card)
#   query:  every link of tests/links.txt
set -euo pipefail
cd "$(dirname "$0")/.."
C=fuzz/corpus
mkdir -p "$C/import" "$C/shell" "$C/cli" "$C/query"
rm -f "$C"/*/seed-*

seed() { # target name pick-byte file
  { printf "\\x$3"; cat "$4"; } >"$C/$1/seed-$2"
}

configs=$(find tests/fixtures/configs -type f ! -name '*.md' ! -name '*.expect' | sort)
for f in $configs; do
  name=$(echo "${f#tests/fixtures/configs/}" | tr '/' '-')
  seed import "$name" 00 "$f"
  seed cli "$name" 08 "$f"
  seed cli "$name.json" 0d "$f" # --json, --card, one file
done
for f in $(echo "$configs" | grep '\.sh$') tests/fixtures/shell/*.bash-words; do
  seed shell "$(basename "$f")" 00 "$f"
done
n=0
grep -v '^#' tests/links.txt | grep '=>' | sed 's/ *=>.*//' | while IFS= read -r q; do
  n=$((n + 1))
  printf '%s' "$q" >"$C/query/seed-link-$n"
done
echo "fuzz seeds: $(ls $C/*/seed-* | wc -l) files in $C/{import,shell,cli,query}"
