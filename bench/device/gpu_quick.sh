#!/usr/bin/env bash
# Short device calls (when little device time is left). STEP=build: libladle_cuda
# (with nvCOMP where $CARRY/nvcomp.tar.xz is carried: unpacked into /tmp/nvcomp)
# and the conformance suite (copies through 1 MiB staging chunks, both ways).
# STEP=etl: the demo's ETL step by step on the GPU engine
# (bench/device/etl_breakdown.py; Polars from $CARRY/pydeps.tar.xz), pages
# compressed on the host and (LADLE_DEVICE_COMPRESS=1) on the GPU by nvCOMP. STEP=all
# (default): both, for a carry holding both packs. Two calls on one warm machine
# carry one pack each (the checkout and both packs exceed the carry limit):
#   STEP=build CARRY=devnv bash bench/device/gpu_quick.sh     (carry ["devnv"])
#   STEP=etl CARRY=devpy bash bench/device/gpu_quick.sh       (carry ["devpy"])
set -uo pipefail
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/build-gpu/out}
STEP=${STEP:-all}
CARRY=${CARRY:-devcarry}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
if [ "$STEP" != etl ]; then
  if [ -f "$CARRY/nvcomp.tar.xz" ] && [ ! -f /tmp/nvcomp/.unpacked ]; then
    rm -rf /tmp/nvcomp && mkdir -p /tmp/nvcomp && tar -xJf "$CARRY/nvcomp.tar.xz" -C /tmp/nvcomp \
      && touch /tmp/nvcomp/.unpacked
  fi
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/cmake.log" 2>&1 \
    && cmake --build build-gpu -j16 --target ladle ladle_cuda test_conformance > "$OUT/build.log" 2>&1 \
    || { grep -E "error" -A3 "$OUT/build.log" | head -30; tail -5 "$OUT/cmake.log"; exit 2; }
  grep -i nvcomp "$OUT/cmake.log"
  if [ "${SKIP_CONFORMANCE:-0}" != 1 ]; then
    LADLE_CUDA_LIB=$PWD/build-gpu/libladle_cuda.so LADLE_REQUIRE_CUDA=1 LADLE_CUDA_STAGING_BYTES=1048576 \
      build-gpu/test_conformance > "$OUT/conformance.log" 2>&1
    echo "conformance exit $?"; grep -E "FAIL|failed:|wrong" "$OUT/conformance.log" | head -20; tail -3 "$OUT/conformance.log"
  fi
fi
[ "$STEP" = build ] && exit 0
[ -f build-gpu/libladle_cuda.so ] || { echo "no build-gpu/libladle_cuda.so: run STEP=build first"; exit 2; }
. tools/devcarry_unpack.sh
unpack_pydeps "$PWD/$CARRY" /tmp/pydeps
export PYTHONPATH=$PWD/python:/tmp/pydeps
rm -f python/ladle/_native*.so && python3 bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1
cp build-gpu/libladle_cuda.so python/ladle/
# ENGINES: which engines each round runs (cuda, cpu, polars: Polars' baseline);
# NVCOMP=1 adds a GPU round with the pages compressed by nvCOMP
ENGINES=${ENGINES:-cuda}
python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 "${ROWS:-25000000}" 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
for i in 1 2; do
  for e in $ENGINES; do
    python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo $e 16 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
  done
  [ "${NVCOMP:-1}" = 1 ] && LADLE_DEVICE_COMPRESS=1 python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 2>&1 | tail -1 | tee -a "$OUT/breakdown.txt"
done
LADLE_TRACE=2 python3 bench/device/etl_breakdown.py /tmp/etlcsv /tmp/etlo cuda 16 > "$OUT/trace-cuda.txt" 2>&1
grep -E "write|SCAN rows=25000000" "$OUT/trace-cuda.txt" | head -40
