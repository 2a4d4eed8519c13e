#!/usr/bin/env bash
# Issue 20 on the device machine (one H200, 16 cores): the GPU tests of the torch side
# and the loader's throughput, then the main job.
#   bash bench/device/torch.sh tests    make test-gpu (memcheck off) + the loader bench
#   bash bench/device/torch.sh demo     make demo at MovieLens-25M size: on the CPU (16
#                                       threads, 2 gloo ranks) and with --gpus 1
# Results under $OUT (or build-gpu/out).
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
DEPS=${PYDEPS:-/tmp/pydeps}
if [ ! -f "$DEPS/.unpacked" ] && [ -f "$ROOT/devcarry/polars.tar.xz" ]; then
  rm -rf "$DEPS" && mkdir -p "$DEPS" && tar -xJf "$ROOT/devcarry/polars.tar.xz" -C "$DEPS" && touch "$DEPS/.unpacked"
fi
export PYTHONPATH="$ROOT/python:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
case "${1:-tests}" in
  tests)
    # torch's DataLoader makes batches row by row (about 5k rows/s into a GPU): a
    # short run of it
    LADLE_GPU_MEMCHECK=0 OUT="$OUT" bash tools/gpu/test_gpu.sh > "$OUT/test-gpu.log" 2>&1
    tail -25 "$OUT/test-gpu.log"
    $PY bench/loader_bench.py --device cuda --runs 3 --torch-rows 4096 --batch-sizes ${BATCHES:-4096,65536,262144,1048576} \
      --out "$OUT/loader-cuda.json" > "$OUT/loader-cuda.log" 2>&1; tail -12 "$OUT/loader-cuda.log"
    $PY bench/loader_bench.py --device cpu --runs 3 --torch-rows 20000 --out "$OUT/loader-cpu16.json" \
      > "$OUT/loader-cpu16.log" 2>&1; tail -10 "$OUT/loader-cpu16.log"
    ;;
  demo)
    ROWS=${ROWS:-25000000}
    [ -f python/ladle/_native*.so ] || $PY bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1
    [ -f build-gpu/libladle_cuda.so ] && cp build-gpu/libladle_cuda.so python/ladle/
    $PY examples/demo.py --rows "$ROWS" --out /tmp/demo-cpu --threads 16 --epochs 2 --max-steps ${STEPS:-150} ${DEMO_FLAGS:-} \
      2>&1 | grep -v "^\[train" | tail -30
    cp /tmp/demo-cpu/demo.json "$OUT/demo-cpu.json"; cp /tmp/demo-cpu/demo.png "$OUT/demo-cpu.png"
    if [ "${GPU_DEMO:-1}" = 1 ] && [ -f /tmp/demo-cpu/demo.png ]; then
      $PY examples/demo.py --rows "$ROWS" --out /tmp/demo-gpu --threads 16 --gpus 1 --epochs 2 \
        --batch-size 65536 --no-baseline 2>&1 | grep -v "^\[train" | tail -30
      cp /tmp/demo-gpu/demo.json "$OUT/demo-gpu.json"; cp /tmp/demo-gpu/demo.png "$OUT/demo-gpu.png"
    fi
    ;;
esac
