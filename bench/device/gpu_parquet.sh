#!/usr/bin/env bash
# One device call for the GPU's Parquet decoding: the GPU test set (without
# memcheck), a traced scan (LADLE_TRACE=2: each column's bytes up, decompressed
# and decoded, with rates), TPC-H from Parquet on the GPU against the host's
# decoding and Polars (bench/device/gpu_parquet.py), then memcheck of the
# conformance suite while time is left. Run from the checkout with devcarry-gpu
# carried:   CARRY=$PWD/devcarry-gpu OUT=$OUT DEADLINE=570 bash bench/device/gpu_parquet.sh
set -uo pipefail
ROOT=$(pwd)
T0=$(date +%s)
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - T0) )); }
say() { echo "[gpu-parquet +$(( $(date +%s) - T0 ))s] $*"; }
export CARRY=${CARRY:-$ROOT/devcarry-gpu}
LADLE_GPU_MEMCHECK=0 timeout $(( $(left) - 60 )) bash tools/gpu/test_gpu.sh > "$OUT/test_gpu.log" 2>&1
say "test_gpu exit $?"; grep -E "^\[test-gpu\]|passed|failed|FAIL|nvCOMP" "$OUT/test_gpu.log" | tail -25
export PYTHONPATH=$ROOT/python:/tmp/pydeps
SF=${SF:-1}
[ -f "bench/data/tpch-sf$SF/lineitem.parquet" ] || timeout $(( $(left) - 30 )) python3 bench/tpch_gen.py --sf "$SF" --out "bench/data/tpch-sf$SF" > /dev/null
say "SF$SF ready"
LADLE_TRACE=2 timeout 60 python3 -c "
import polars as pl, ladle
e = ladle.Engine(device='cuda')
lf = pl.scan_parquet('bench/data/tpch-sf$SF/lineitem.parquet').select(
    pl.col('l_quantity').sum(), pl.col('l_shipdate').max(), pl.col('l_orderkey').sum(),
    pl.col('l_extendedprice').sum(), pl.col('l_shipmode').n_unique())
e.collect(lf); print(e.collect(lf)); print(lf.collect())" > "$OUT/trace.log" 2>&1
grep -iE "parquet on|parquet dec|error|host after|shape|│" "$OUT/trace.log" | head -24
[ "$(left)" -gt 60 ] && timeout $(( $(left) - 40 )) python3 bench/device/gpu_parquet.py --data "bench/data/tpch-sf$SF" \
  --runs 5 --out "$OUT" 2>&1 | tail -14
if [ "$(left)" -gt 90 ] && command -v compute-sanitizer > /dev/null; then
  LADLE_CUDA_LIB=$ROOT/build-gpu/libladle_cuda.so LADLE_REQUIRE_CUDA=1 LADLE_CONFORMANCE_LARGE=300007 \
    timeout $(( $(left) - 10 )) compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    build-gpu/test_conformance > "$OUT/memcheck.log" 2>&1
  say "memcheck exit $?"; tail -4 "$OUT/memcheck.log"
fi
say done
