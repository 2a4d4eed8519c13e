#!/usr/bin/env bash
# TPC-H thread scaling of ladle, Polars and DuckDB on the device machine.
# Run from the repository root with devcarry/ carried:
#
#   bash bench/device/scaling.sh [scaling.py options, e.g. --runs 2 --queries 1-11]
#
# 1. unpacks devcarry/pydeps.tar.xz (Polars 2.1.0 and DuckDB for Python 3.12)
#    into /tmp/pydeps, once;
# 2. builds ladle's extension for the system python3 in place (python/ladle),
#    the C sources compiled in parallel; codecs whose headers are missing
#    (snappy there) are left out by setup.py; Python's headers come from the
#    carry where the machine lacks them (setuptools is in the device image);
# 3. runs bench/scaling.py at SF1, threads 1,2,4,8,16, 3 runs, in memory, with a
#    budget so that the whole call ends within TOTAL_S (450 s) seconds: past it
#    the subprocess running is cut, no more start, and the JSON (written after
#    every subprocess), the tables and, with matplotlib, the PNG still come back
#    in $OUT (the device image has matplotlib; where it has not, draw the PNG
#    afterwards: python bench/scaling.py --plot-only <the JSON>). Peak memory:
#    VmHWM through /proc/self/clear_refs where writable, else (gVisor, the
#    one-GPU kind) the RSS sampled every 2 ms during each query's warm-up.
# Exit status: scaling.py's (0; 1 a wrong answer or an engine error; 3 cut by
# the budget), or 2 when the set-up failed.
set -uo pipefail
export PYTHONUNBUFFERED=1
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-450}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the carried folder with pydeps.tar.xz (Polars and DuckDB wheels for the
# device's Python, unpacked) and COMMIT; ignored by git, made by hand
CARRY=${CARRY:-$(pwd)/devcarry}
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench/results}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/dev_scaling.log") 2>&1
PY=${PYTHON:-python3}
DEPS=${PYDEPS:-/tmp/pydeps}
JOBS=$(nproc 2>/dev/null || echo 4)
elapsed() { echo $(( $(date +%s) - T0 )); }
say() { echo "[dev_scaling +$(elapsed)s] $*"; }

# the copy of the tree has no .git: the commit, where the caller wrote it
# (git rev-parse HEAD > devcarry/COMMIT), goes into the JSON
if [ -z "${LADLE_COMMIT:-}" ] && [ -f "$CARRY/COMMIT" ]; then export LADLE_COMMIT=$(cat "$CARRY/COMMIT"); fi
test -f "$ROOT/bench/scaling.py" || { echo "run from the repository root (bench/scaling.py not found)"; exit 2; }
say "$(uname -srm), $JOBS cores, $($PY -V 2>&1), gcc $(gcc -dumpfullversion 2>/dev/null || echo missing)"

# 1. Polars and DuckDB
. "$ROOT/tools/devcarry_unpack.sh"
unpack_pydeps "$CARRY" "$DEPS" || { echo "unpacking $CARRY/pydeps.tar.xz failed"; exit 2; }
[ -n "$PYDEPS_PACK" ] && say "unpacked $(basename "$PYDEPS_PACK") into $DEPS"
export PYTHONPATH="$ROOT/python:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
$PY -c "import polars, duckdb, pyarrow, numpy; print('polars', polars.__version__, 'duckdb', duckdb.__version__, 'pyarrow', pyarrow.__version__, 'numpy', numpy.__version__)" \
  || { echo "polars/duckdb/pyarrow/numpy not importable"; exit 2; }

# 2. ladle's extension for this python3
$PY -c "import setuptools" 2>/dev/null || { echo "no setuptools for $PY: ladle cannot be built"; exit 2; }
PYINC=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
if [ ! -f "$PYINC/Python.h" ]; then
  # headers of CPython 3.12.1: the 3.12 ABI is stable across patch releases
  export C_INCLUDE_PATH="$DEPS/_ladle_build/include/python3.12${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
  say "no Python.h in $PYINC: using the carried 3.12 headers"
fi
say "codec headers: $(for h in zlib.h zstd.h snappy-c.h lz4.h brotli/decode.h libdeflate.h; do test -e /usr/include/$h && printf '%s ' $h; done)"
build() {
  $PY "$HERE/build_ext_parallel.py" > "$OUT/build.log" 2>&1
}
if ! build; then
  tail -20 "$OUT/build.log"
  say "build failed; again without -march (LADLE_MARCH=)"
  rm -rf build/temp.*
  LADLE_MARCH="" build || { tail -40 "$OUT/build.log"; echo "ladle's extension did not build"; exit 2; }
fi
say "linked with:$(grep -E -- "-shared .*_native" "$OUT/build.log" | grep -oE -- " -l[a-z0-9_]+" | tr -d '\n'); \
$(grep -m1 -oE -- "-march=[^ ]+" "$OUT/build.log" || echo "no -march")"
$PY -c "import ladle; print('ladle', ladle.__version__, ladle.__file__)" || { echo "import ladle failed"; exit 2; }
say "ladle built"

# 3. a script of the caller's instead (DEV_SCRIPT=path: run with this python,
#    the arguments given, SF1 generated first when missing), e.g. a profile
if [ -n "${DEV_SCRIPT:-}" ]; then
  if [ ! -f "$ROOT/bench/data/tpch-sf1/lineitem.parquet" ]; then
    $PY bench/tpch_gen.py --sf 1 --out "$ROOT/bench/data/tpch-sf1" > /dev/null || { echo "tpch_gen failed"; exit 2; }
    say "SF1 generated"
  fi
  $PY "$DEV_SCRIPT" "$@"
  exit $?
fi

# 4. the benchmark, within what is left of TOTAL_S (20 s kept for the report)
LEFT=$(( TOTAL_S - $(elapsed) - 20 ))
if [ "$LEFT" -lt 60 ]; then echo "only ${LEFT}s left for the benchmark: not started"; exit 2; fi
say "scaling.py with a budget of ${LEFT}s"
timeout -k 10 $(( LEFT + 30 )) $PY bench/scaling.py --sf 1 --threads 1,2,4,8,16 --runs 3 \
  --data "$ROOT/bench/data" --out "$OUT" --budget "$LEFT" "$@"
rc=$?
say "scaling.py exited with $rc; files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit $rc
