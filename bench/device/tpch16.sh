#!/usr/bin/env bash
# TPC-H at 16 threads on the device's CPU in one call, for sessions whose device
# time is short: what a run needs is unpacked and built once per machine, then
# each mode named in MODES runs within DEADLINE seconds of the start. From the
# repository root with devcarry/ carried (ignored by git, made by hand:
# polars.tar.xz, or pydeps.tar.xz with DuckDB too, unpacked into /tmp/pydeps;
# COMMIT, `git rev-parse HEAD` at the time):
#
#   MODES="mem parquet phase" DEADLINE=500 bash bench/device/tpch16.sh
#
# Modes: mem / parquet (SF1 in memory / from Parquet, 5 runs), sf10 /
# sf10-parquet (SF10, 3 runs; generating SF10 takes about 90 s), phase
# (bench/device/phase_scaling.py, 1 against 16 threads, of $PHASE_QUERIES),
# diag (bench/device/parquet_diag.py: SF10 scans and traced queries from
# Parquet, $DIAG_QUERIES), stream (bench/device/stream_ab.py: $STREAM_QUERIES from
# Parquet at SF $STREAM_SF, default 10, with the streamed scan off and on), joinab
# (the same with streamed joins off and on, $JOIN_QUERIES), memjoinab (streamed
# joins over Parquet only, LADLE_STREAM_JOIN=1, against the default, on the tables
# in memory, $JOIN_QUERIES), markab (semi and anti joins marked by their right side,
# LADLE_MARK_JOIN=0 against the default, $MARK_QUERIES from Parquet), splitab
# (column chunks of a scan of few row groups split by pages, LADLE_SPLIT_PAGES=0
# against the default, $SPLIT_QUERIES from Parquet), joindiag
# (bench/device/join_diag.py: $DIAG_QUERIES in memory and from Parquet, plans,
# traces, perf where installed). Engines: ladle, Polars, and DuckDB when it imports.
# The JSON, PNG and logs land in $OUT (the device tool's folder, else
# build-gpu/out).
set -uo pipefail
ROOT=$(pwd)
T0=$(date +%s)
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
CARRY=${CARRY:-$ROOT/devcarry}
DEPS=${PYDEPS:-/tmp/pydeps}
left() { echo $(( ${DEADLINE:-500} - ($(date +%s) - T0) )); }
say() { echo "[tpch16 +$(( $(date +%s) - T0 ))s] $*"; }
. "$ROOT/tools/devcarry_unpack.sh"
unpack_pydeps "$CARRY" "$DEPS" || { echo "cannot unpack $CARRY/pydeps.tar.xz or polars.tar.xz"; exit 2; }
export PYTHONPATH="$ROOT/python:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
[ -f "$CARRY/COMMIT" ] && export LADLE_COMMIT=$(cat "$CARRY/COMMIT")
if ! ls python/ladle/_native*.so > /dev/null 2>&1; then
  python3 bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1 || { tail -30 "$OUT/ext.log"; exit 2; }
fi
say "ladle built"
ENGINES=ladle,polars
# engines take turns query by query (scaling.py --interleave); INTERLEAVE=0: one engine after another
IL=$([ "${INTERLEAVE:-1}" = 1 ] && echo --interleave)
python3 -c "import duckdb" 2>/dev/null && ENGINES=ladle,polars,duckdb
gen() {
  [ -f "bench/data/tpch-sf$1/lineitem.parquet" ] && return 0
  python3 bench/tpch_gen.py --sf "$1" --out "bench/data/tpch-sf$1" > /dev/null && say "SF$1 generated"
}
bench() { # sf runs [--parquet]
  local l; l=$(left)
  [ "$l" -lt 40 ] && { say "no time left for SF$1 ${3:-}"; return; }
  timeout $(( l - 5 )) python3 bench/scaling.py --sf "$1" --threads 16 --runs "$2" --engines "$ENGINES" ${3:-} $IL \
    --data bench/data --out "$OUT" --budget $(( l - 25 )) 2>&1 | grep -v "x16  q" | tail -25
}
for m in ${MODES:-mem parquet}; do
  case $m in
    mem) gen 1 && bench 1 5 ;;
    parquet) gen 1 && bench 1 5 --parquet ;;
    sf10) gen 10 && bench 10 3 ;;
    sf10-parquet) gen 10 && bench 10 3 --parquet ;;
    phase) gen 1 && timeout $(( $(left) - 5 )) python3 bench/device/phase_scaling.py ${PHASE_QUERIES:-q3 q7 q16 q1} 2>&1 | tee "$OUT/phase.log" ;;
    stream) gen "${STREAM_SF:-10}" && timeout $(( $(left) - 5 )) python3 bench/device/stream_ab.py "${STREAM_SF:-10}" ${STREAM_QUERIES:-q1,q22} 2>&1 | tee "$OUT/stream.log" ;;
    joinab) gen "${STREAM_SF:-10}" && AB_ENV=LADLE_STREAM_JOIN timeout $(( $(left) - 5 )) python3 bench/device/stream_ab.py "${STREAM_SF:-10}" ${JOIN_QUERIES:-q5,q9,q8,q17,q2} 2>&1 | tee "$OUT/joinab.log" ;;
    diag) gen 10 && timeout $(( $(left) - 5 )) python3 bench/device/parquet_diag.py 10 ${DIAG_QUERIES:-q12,q3} 2>&1 | tee "$OUT/diag.log" ;;
    markab) gen "${STREAM_SF:-10}" && AB_ENV=LADLE_MARK_JOIN AB_A=0 timeout $(( $(left) - 5 )) python3 bench/device/stream_ab.py "${STREAM_SF:-10}" ${MARK_QUERIES:-q4,q21,q22} 2>&1 | tee "$OUT/markab.log" ;;
    splitab) gen "${STREAM_SF:-10}" && AB_ENV=LADLE_SPLIT_PAGES AB_A=0 timeout $(( $(left) - 5 )) python3 bench/device/stream_ab.py "${STREAM_SF:-10}" ${SPLIT_QUERIES:-q9,q13,q16,q20,q22} 2>&1 | tee "$OUT/splitab-sf${STREAM_SF:-10}.log" ;;
    memjoinab) gen "${STREAM_SF:-10}" && AB_ENV=LADLE_STREAM_JOIN AB_A=1 AB_MEM=1 timeout $(( $(left) - 5 )) python3 bench/device/stream_ab.py "${STREAM_SF:-10}" ${JOIN_QUERIES:-q3,q5,q9,q8,q17,q2} 2>&1 | tee "$OUT/memjoinab.log" ;;
    joindiag) gen "${STREAM_SF:-10}" && timeout $(( $(left) - 5 )) python3 bench/device/join_diag.py "${STREAM_SF:-10}" ${DIAG_QUERIES:-q3,q9} > "$OUT/join_diag.txt" 2>&1; head -20 "$OUT/join_diag.txt" ;;
    *) echo "unknown mode $m" ;;
  esac
  say "$m done"
done
