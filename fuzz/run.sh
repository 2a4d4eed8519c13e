#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60), one process at a time, from a corpus seeded with
# ../shared's test files and the inputs kept in tests/data/fuzz/; then the
# differential fuzzer against pyarrow (fuzz/diff_pyarrow.py --fast, FUZZ_JOBS
# workers) for as long.
#   fuzz_parquet        whole files (most mutations stop at the footer)
#   fuzz_parquet_pages  pages wrapped in a well-formed file: reaches the decoders
#   fuzz_csv            a file and an options byte
#   fuzz_csv_gen        a generator of CSV records and options, structure-aware
# A crash leaves its input in fuzz/crashes/; turn it into a regression test
# and a file in tests/data/fuzz/. FUZZ_TARGETS picks targets (default: all),
# FUZZ_OUT the build folder (build-fuzz), FUZZ_BUILD_ONLY=1 only builds,
# FUZZ_DIFF_GATE=crash makes the differential fuzzer fail only on a crash, a hang
# or an unclean error (what `make test` uses: its seed is new each run).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"parquet parquet_pages csv csv_gen diff_pyarrow"}
OUT=${FUZZ_OUT:-build-fuzz}
mkdir -p "$OUT" fuzz/crashes
SRC=$(find src -name '*.c' -not -path 'src/backend/cuda/*' -not -path 'src/dist/mpi/*' | sort) # the CUDA backend and the MPI shim are libraries of their own
DEFS="-DLADLE_HAVE_ZLIB -DLADLE_HAVE_ZSTD -DLADLE_HAVE_SNAPPY -DLADLE_HAVE_LZ4 -DLADLE_HAVE_BROTLI -DLADLE_HAVE_LIBDEFLATE"
LIBS="-lz -lzstd -lsnappy -llz4 -lbrotlidec -ldeflate -lm -lpthread"
FLAGS="-std=gnu11 -g -O1 -ffp-contract=off -fno-sanitize-recover=undefined -Iinclude -Isrc -Itests/c $DEFS"
# the library once (instrumented for the fuzzer, not linked with its main),
# then each target's harness linked against it
mkdir -p "$OUT/obj"
OBJS=""
for c in $SRC; do OBJS="$OBJS $OUT/obj/$(echo "$c" | tr / _).o"; done
for c in $SRC; do
  o="$OUT/obj/$(echo "$c" | tr / _).o"
  if [ ! -f "$o" ] || [ -n "$(find "$c" src include -newer "$o" -name '*.[ch]' | head -1)" ]; then
    echo "clang $FLAGS -fsanitize=fuzzer-no-link,address,undefined -c $c -o $o"
  fi
done | xargs -P "${FUZZ_JOBS:-2}" -I{} sh -c '{}'
for target in $TARGETS; do
  [ "$target" = diff_pyarrow ] && continue
  if [ ! -x "$OUT/fuzz_$target" ] || [ -n "$(find src include fuzz tests/c/pq_craft.h tests/c/utf8_reference.h -newer "$OUT/fuzz_$target" -name '*.[ch]' | head -1)" ]; then
    clang $FLAGS -fsanitize=fuzzer,address,undefined -o "$OUT/fuzz_$target" "fuzz/fuzz_$target.c" $OBJS $LIBS
  fi
done
[ -n "${FUZZ_BUILD_ONLY:-}" ] && exit 0
SHARED=../shared/data
for target in $TARGETS; do
  [ "$target" = diff_pyarrow ] && continue
  rm -rf "$OUT/corpus_$target"
  mkdir -p "$OUT/corpus_$target"
  cp tests/data/fuzz/"$target"-* "$OUT/corpus_$target/" 2>/dev/null || true # kept inputs and past crashes
  # the corpus kept from earlier campaigns (fuzz/keep_corpus.sh)
  if [ -f "tests/data/fuzz/corpus/$target.tar.gz" ]; then
    tar -xzf "tests/data/fuzz/corpus/$target.tar.gz" -C "$OUT/corpus_$target"
  fi
done
if [ -d "$OUT/corpus_parquet" ]; then
  find "$SHARED/parquet-testing" -name '*.parquet' -exec cp {} "$OUT/corpus_parquet/" \;
fi
if [ -d "$OUT/corpus_csv" ]; then
  printf '\001a,b\n1,"x,y"\n2,\n' > "$OUT/corpus_csv/seed1"
  printf '\010d,t\n2020-01-01,2020-01-01 10:00:00\n' > "$OUT/corpus_csv/seed2"
  printf '\004' > "$OUT/corpus_csv/seed3"; head -c 4000 <(zstd -dc "$SHARED/tpch/sf0.1/nation.tbl.zst" 2>/dev/null || true) >> "$OUT/corpus_csv/seed3"
fi
status=0
for target in $TARGETS; do
  echo "fuzzing $target for ${SECONDS_EACH}s"
  if [ "$target" = diff_pyarrow ]; then
    PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
    if ! PYTHONPATH="$PWD/python" "$PY" -c 'import polars, pyarrow, ladle' >/dev/null 2>&1; then
      echo "diff_pyarrow skipped: $PY cannot import polars, pyarrow and ladle (make python, or set PYTHON)"
      continue
    fi
    # the fast mode (ladle's native module and pyarrow, thousands of mutants a
    # second per job), then its slow check with Polars of what it kept
    PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" fuzz/diff_pyarrow.py --fast --jobs "${FUZZ_JOBS:-2}" --gate "${FUZZ_DIFF_GATE:-all}" \
      --seconds "$SECONDS_EACH" --recheck-seconds "$SECONDS_EACH" > "$OUT/diff_pyarrow.log" 2>&1 || status=1
    grep -E "^(FAILURE|diff_pyarrow:)" "$OUT/diff_pyarrow.log" | tail -6
    continue
  fi
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$OUT/fuzz_$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -max_len=1048576 \
    -artifact_prefix=fuzz/crashes/$target- -print_final_stats=1 "$OUT/corpus_$target" 2>&1 | tail -4 || status=1
done
exit $status
