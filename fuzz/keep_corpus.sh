#!/usr/bin/env bash
# Keeps what a fuzzing campaign found: each target's corpus (FUZZ_OUT, default
# build-fuzz, plus any folders given as arguments) and the kept corpus in
# tests/data/fuzz/corpus/ are minimized together with libFuzzer's -merge=1, and
# the inputs under 8 KB (the large ones are ../shared's seed files, copied in by
# run.sh anyway) are packed back into tests/data/fuzz/corpus/<target>.tar.gz,
# which run.sh unpacks into the next campaign's corpus.
#   FUZZ_TARGETS   targets (default: parquet parquet_pages csv csv_gen)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${FUZZ_OUT:-build-fuzz}
mkdir -p tests/data/fuzz/corpus
for target in ${FUZZ_TARGETS:-parquet parquet_pages csv csv_gen}; do
  [ -x "$OUT/fuzz_$target" ] || { echo "$target: $OUT/fuzz_$target not built (FUZZ_BUILD_ONLY=1 bash fuzz/run.sh)"; continue; }
  tmp=$(mktemp -d)
  mkdir -p "$tmp/old" "$tmp/min"
  [ -f "tests/data/fuzz/corpus/$target.tar.gz" ] && tar -xzf "tests/data/fuzz/corpus/$target.tar.gz" -C "$tmp/old"
  dirs=("$tmp/old")
  [ -d "$OUT/corpus_$target" ] && dirs+=("$OUT/corpus_$target")
  for extra in "$@"; do [ -d "$extra/corpus_$target" ] && dirs+=("$extra/corpus_$target"); done
  ASAN_OPTIONS=detect_leaks=0 "$OUT/fuzz_$target" -merge=1 -max_len=1048576 "$tmp/min" "${dirs[@]}" > "$tmp/log" 2>&1
  (cd "$tmp/min" && find . -type f -size -8k -printf '%f\n' | sort > ../list)
  tar -czf "tests/data/fuzz/corpus/$target.tar.gz" -C "$tmp/min" -T "$tmp/list"
  echo "$target: $(wc -l < "$tmp/list") inputs kept, $(du -h "tests/data/fuzz/corpus/$target.tar.gz" | cut -f1)"
  rm -rf "$tmp"
done
