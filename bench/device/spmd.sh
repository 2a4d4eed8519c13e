#!/usr/bin/env bash
# SPMD weak scaling of ladle (bench/spmd_bench.py) on the device machine's CPU:
# 1, 2, 4 ranks under mpirun at a fixed size per rank, 4 ranks x 4 threads
# against 1 rank x 16 and Polars x 16, and the exchanges' throughput against the
# raw alltoall of the same communicator. Run from the repository root with
# devcarry/ carried:
#
#   bash bench/device/spmd.sh [spmd_bench.py drive options, e.g. --queries 1-11 --runs 2]
#
# 1. unpacks devcarry/pydeps.tar.xz or devcarry/polars.tar.xz (Polars 2.1.0 for
#    Python 3.12) into /tmp/pydeps, once; numpy must be the image's (tpch_gen),
#    matplotlib is used where the image has it (else: spmd_bench.py plot <JSON>);
# 2. builds ladle's extension for the system python3 in place (python/ladle),
#    the C sources compiled in parallel (build_ext_parallel.py), Python's headers
#    from the carry where the machine lacks them;
# 3. builds libladle_mpi.so (CMake target ladle_mpi, src/dist/mpi/shim.c, against
#    the machine's MPI: mpi.h and mpirun must be there) into build-dev/ and copies
#    it beside the extension;
# 4. checks that two ranks start and exchange (mpirun -np 2, an SPMDEngine and an
#    alltoallv); where the default transport fails (a container without
#    process_vm_readv, gVisor), again with the shared-memory BTL's single-copy
#    mechanism off (Open MPI 4's vader, 5's sm), then with TCP alone (loopback
#    included); the working mpirun arguments go to the benchmark (and its JSON);
# 5. runs spmd_bench.py drive: SF_PER_RANK (1) TPC-H and ROWS_PER_RANK (1e7)
#    group-by/join rows per rank, ranks 1,2,4 x 4 threads, then 1 x 16 and
#    Polars x 16 on the SF4 data, RUNS (3) timed runs, with a budget so that the
#    whole call ends within TOTAL_S (540 s): generating SF1, SF2 and SF4 at once
#    takes about 2 minutes on a fresh machine (kept in bench/data/spmd while the
#    machine stays warm), the five runs about 25 s each; past its share a run
#    starts no more queries, and the JSON, the tables and the PNG still come back
#    in $OUT as <date>-spmd-weak-device[-<commit>].json/.png. CHECK=0 skips the
#    answers' checks (Polars' answers for each size, numpy's for the shuffles).
# Exit status: spmd_bench.py's (0; 1 a wrong answer or a failed run; 3 cut by the
# budget), or 2 when the set-up failed.
set -uo pipefail
export PYTHONUNBUFFERED=1
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-540}
SF_PER_RANK=${SF_PER_RANK:-1}
ROWS_PER_RANK=${ROWS_PER_RANK:-10000000}
RUNS=${RUNS:-3}
RANKS=${RANKS:-1,2,4}
CHECK=${CHECK:-1}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CARRY=${CARRY:-$(pwd)/devcarry}
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench/results}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/dev_spmd.log") 2>&1
PY=${PYTHON:-python3}
DEPS=${PYDEPS:-/tmp/pydeps}
JOBS=$(nproc 2>/dev/null || echo 4)
elapsed() { echo $(( $(date +%s) - T0 )); }
say() { echo "[dev_spmd +$(elapsed)s] $*"; }

if [ -z "${LADLE_COMMIT:-}" ] && [ -f "$CARRY/COMMIT" ]; then export LADLE_COMMIT=$(cat "$CARRY/COMMIT"); fi
test -f "$ROOT/bench/spmd_bench.py" || { echo "run from the repository root (bench/spmd_bench.py not found)"; exit 2; }
say "$(uname -srm), $JOBS cores, $($PY -V 2>&1), gcc $(gcc -dumpfullversion 2>/dev/null || echo missing), \
$(free -g 2>/dev/null | awk '/Mem:/ {print $2 " GiB"}')"

# 1. Polars (and what else the carry has)
. "$ROOT/tools/devcarry_unpack.sh"
unpack_pydeps "$CARRY" "$DEPS"
case $? in
  0) [ -n "$PYDEPS_PACK" ] && say "unpacked $(basename "$PYDEPS_PACK") into $DEPS" ;;
  1) say "no devcarry/pydeps.tar.xz or polars.tar.xz: Polars must be the image's" ;;
  *) echo "unpacking $PYDEPS_PACK failed"; exit 2 ;;
esac
export PYTHONPATH="$ROOT/python:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
$PY -c "import polars, numpy; print('polars', polars.__version__, 'numpy', numpy.__version__)" \
  || { echo "polars/numpy not importable"; exit 2; }
$PY -c "import matplotlib; print('matplotlib', matplotlib.__version__)" 2>/dev/null \
  || say "no matplotlib: no PNG (draw it afterwards: python bench/spmd_bench.py plot <the JSON>)"

# 2. ladle's extension for this python3
$PY -c "import setuptools" 2>/dev/null || { echo "no setuptools for $PY: ladle cannot be built"; exit 2; }
PYINC=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
if [ ! -f "$PYINC/Python.h" ]; then
  for inc in "$DEPS/_ladle_build/include/python3.12" "$DEPS/include"; do
    if [ -f "$inc/Python.h" ]; then
      export C_INCLUDE_PATH="$inc${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
      say "no Python.h in $PYINC: using $inc"
      break
    fi
  done
fi
build() { $PY "$HERE/build_ext_parallel.py" > "$OUT/build.log" 2>&1; }
if ! build; then
  tail -20 "$OUT/build.log"
  say "build failed; again without -march (LADLE_MARCH=)"
  rm -rf build/temp.*
  LADLE_MARCH="" build || { tail -40 "$OUT/build.log"; echo "ladle's extension did not build"; exit 2; }
fi
$PY -c "import ladle; print('ladle', ladle.__version__, ladle.__file__)" || { echo "import ladle failed"; exit 2; }
say "ladle's extension built"

# 3. the MPI shim, against this machine's MPI
command -v mpirun > /dev/null || { echo "no mpirun on this machine (Open MPI: openmpi-bin, libopenmpi-dev)"; exit 2; }
command -v cmake > /dev/null || { echo "no cmake: libladle_mpi.so cannot be built"; exit 2; }
say "$(mpirun --version 2>&1 | head -1)"
cmake -S . -B build-dev -DLADLE_NO_CUDA=ON -DCMAKE_BUILD_TYPE=Release > "$OUT/cmake-mpi.log" 2>&1 \
  || { tail -30 "$OUT/cmake-mpi.log"; echo "cmake failed"; exit 2; }
grep -q "building libladle_mpi.so" "$OUT/cmake-mpi.log" \
  || { grep -i "mpi" "$OUT/cmake-mpi.log" | tail -5; echo "CMake found no MPI (mpi.h, libmpi): libladle_mpi.so is not built"; exit 2; }
cmake --build build-dev --target ladle_mpi -j "$JOBS" >> "$OUT/cmake-mpi.log" 2>&1 \
  || { tail -30 "$OUT/cmake-mpi.log"; echo "building ladle_mpi failed"; exit 2; }
cp build-dev/libladle_mpi.so python/ladle/ || exit 2
say "libladle_mpi.so built"

# 4. two ranks, an engine each and an alltoallv of 16 MiB per pair under each
#    set of mpirun arguments; the fastest that works is used (in a gVisor
#    sandbox Open MPI's shared-memory single copy may not work, or be slow)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SMOKE='import ladle; e = ladle.SPMDEngine(threads=1, timeout=30); ms = e._engine.bench_alltoall(16 << 20, 3); print(f"rank {e.rank}/{e.nranks} {e.comm}: 16 MiB per pair in {ms:.3f} ms", flush=True); print(f"MS {ms:.3f}") if e.rank == 0 else None'
MPIARGS=""
ok=0
best=""
: > "$OUT/mpi-smoke.log"
for try_args in "" "--mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism cma" \
    "--mca btl_vader_single_copy_mechanism none" "--mca btl_sm_single_copy_mechanism none" \
    "--mca btl self,tcp" "--mca btl self,tcp --mca btl_tcp_if_include lo"; do
  if timeout -k 5 45 mpirun -np 2 --oversubscribe --allow-run-as-root --bind-to none $try_args \
       $PY -c "$SMOKE" > "$OUT/mpi-try.log" 2>&1; then
    ms=$(grep '^MS ' "$OUT/mpi-try.log" | cut -d' ' -f2)
    echo "args [${try_args:-defaults}]: rank 0 16 MiB per pair in ${ms} ms" | tee -a "$OUT/mpi-smoke.log"
    if [ -n "$ms" ] && { [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $ms < $best else 1)"; }; then
      best=$ms; MPIARGS=$try_args; ok=1
    fi
  else
    say "mpirun ${try_args:-with its defaults} failed: $(tail -3 "$OUT/mpi-try.log" | tr '\n' ' ' | cut -c1-300)"
  fi
done
[ "$ok" = 1 ] || { tail -30 "$OUT/mpi-try.log"; echo "two MPI ranks did not run"; exit 2; }
say "mpirun arguments: ${MPIARGS:-none} (fastest alltoall: ${best} ms for 16 MiB per pair)"

# 5. the benchmark, within what is left of TOTAL_S (20 s kept for the report)
LEFT=$(( TOTAL_S - $(elapsed) - 20 ))
if [ "$LEFT" -lt 90 ]; then echo "only ${LEFT}s left for the benchmark: not started"; exit 2; fi
LABEL=device${LADLE_COMMIT:+-${LADLE_COMMIT:0:7}}
EXTRA=()
[ "$CHECK" = 0 ] && EXTRA+=(--no-check)
say "spmd_bench.py drive: SF$SF_PER_RANK and $ROWS_PER_RANK rows per rank, ranks $RANKS, budget ${LEFT}s"
timeout -k 10 $(( LEFT + 30 )) $PY bench/spmd_bench.py drive --sf-per-rank "$SF_PER_RANK" --ranks "$RANKS" \
  --rows-per-rank "$ROWS_PER_RANK" --runs "$RUNS" --budget-s "$LEFT" --data "$ROOT/bench/data/spmd" \
  --out "$OUT" --label "$LABEL" --mpirun-args="$MPIARGS" "${EXTRA[@]}" "$@"
rc=$?
say "spmd_bench.py exited with $rc; files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit $rc
