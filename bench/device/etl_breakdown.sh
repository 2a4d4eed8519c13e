#!/usr/bin/env bash
# Issue 20 on the device machine: where the demo's ETL spends its time, step by
# step, on the GPU engine, ladle's CPU engine (16 threads) and Polars (16 threads),
# then one traced GPU run. Run from the checkout with devcarry/ carried; it builds
# libladle_cuda and the extension unless LADLE_SKIP_BUILD=1 (test_gpu.sh built them).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
. tools/devcarry_unpack.sh
unpack_pydeps "$PWD/devcarry" /tmp/pydeps
export PYTHONPATH=$PWD/python:/tmp/pydeps
if [ "${LADLE_SKIP_BUILD:-0}" != 1 ]; then
  (cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/c.log 2>&1 \
    && cmake --build build-gpu -j16 --target ladle ladle_cuda > /tmp/b.log 2>&1) \
    || { tail -30 /tmp/c.log /tmp/b.log; exit 2; }
  rm -f python/ladle/_native*.so
  python3 bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1 || { tail -20 "$OUT/ext.log"; exit 2; }
  cp build-gpu/libladle_cuda.so python/ladle/
fi
ROWS=${ROWS:-25000000}
python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cpu 16 "$ROWS" > /dev/null 2>&1  # generates
for rep in 1 2; do
  for d in ${ENGINES:-cuda cpu polars}; do
    python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo-$d $d 16 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
  done
done
LADLE_TRACE=1 python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo-t cuda 16 > "$OUT/trace-cuda.txt" 2>&1
