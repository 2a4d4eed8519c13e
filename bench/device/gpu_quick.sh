#!/usr/bin/env bash
# One short device call (when little device time is left): libladle_cuda and the
# conformance suite (copies through 1 MiB staging chunks, both ways), then the
# demo's ETL step by step on the GPU engine (bench/device/etl_breakdown.py).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/cmake.log" 2>&1 \
  && cmake --build build-gpu -j16 --target ladle ladle_cuda test_conformance > "$OUT/build.log" 2>&1 \
  || { grep -E "error" -A3 "$OUT/build.log" | head -30; tail -5 "$OUT/cmake.log"; exit 2; }
. tools/devcarry_unpack.sh
unpack_pydeps "$PWD/devcarry" /tmp/pydeps
export PYTHONPATH=$PWD/python:/tmp/pydeps
(rm -f python/ladle/_native*.so && python3 bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1) &
LADLE_CUDA_LIB=$PWD/build-gpu/libladle_cuda.so LADLE_REQUIRE_CUDA=1 LADLE_CUDA_STAGING_BYTES=1048576 \
  build-gpu/test_conformance > "$OUT/conformance.log" 2>&1
echo "conformance exit $?"; tail -3 "$OUT/conformance.log"
wait
cp build-gpu/libladle_cuda.so python/ladle/
python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 "${ROWS:-25000000}" 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
LADLE_TRACE=1 python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 > "$OUT/trace-cuda.txt" 2>&1
grep -E 'SCAN rows=25000000' "$OUT/trace-cuda.txt" | head -3
