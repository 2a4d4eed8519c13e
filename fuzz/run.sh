#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60) from a corpus seeded with ../shared's test files.
# A crash leaves its input in fuzz/crashes/; turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=build-fuzz
mkdir -p "$OUT" fuzz/crashes
SRC=$(find src -name '*.c' | sort)
DEFS="-DLADLE_HAVE_ZLIB -DLADLE_HAVE_ZSTD -DLADLE_HAVE_SNAPPY -DLADLE_HAVE_LZ4 -DLADLE_HAVE_BROTLI -DLADLE_HAVE_LIBDEFLATE"
LIBS="-lz -lzstd -lsnappy -llz4 -lbrotlidec -ldeflate -lm -lpthread"
FLAGS="-std=gnu11 -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc $DEFS"
for target in parquet csv; do
  if [ ! -x "$OUT/fuzz_$target" ] || [ -n "$(find src include fuzz -newer "$OUT/fuzz_$target" -name '*.[ch]' | head -1)" ]; then
    clang $FLAGS -o "$OUT/fuzz_$target" "fuzz/fuzz_$target.c" $SRC $LIBS
  fi
done
SHARED=../shared/data
rm -rf "$OUT/corpus_parquet" "$OUT/corpus_csv"
mkdir -p "$OUT/corpus_parquet" "$OUT/corpus_csv"
find "$SHARED/parquet-testing" -name '*.parquet' -exec cp {} "$OUT/corpus_parquet/" \;
cp tests/data/fuzz/parquet-* "$OUT/corpus_parquet/" 2>/dev/null || true  # past crashes
printf '\001a,b\n1,"x,y"\n2,\n' > "$OUT/corpus_csv/seed1"
printf '\010d,t\n2020-01-01,2020-01-01 10:00:00\n' > "$OUT/corpus_csv/seed2"
printf '\004' > "$OUT/corpus_csv/seed3"; head -c 4000 <(zstd -dc "$SHARED/tpch/sf0.1/nation.tbl.zst" 2>/dev/null || true) >> "$OUT/corpus_csv/seed3"
status=0
for target in parquet csv; do
  echo "fuzzing $target for ${SECONDS_EACH}s"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$OUT/fuzz_$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -max_len=1048576 \
    -artifact_prefix=fuzz/crashes/$target- -print_final_stats=1 "$OUT/corpus_$target" 2>&1 | tail -4 || status=1
done
exit $status
