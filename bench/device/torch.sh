#!/usr/bin/env bash
# Issue 20 on the device machine (one H200, 16 cores): the GPU tests of the torch side
# and the loader's throughput, then the main job.
#   bash bench/device/torch.sh tests    make test-gpu (memcheck off) + the loader bench
#   bash bench/device/torch.sh demo     make demo at MovieLens-25M size: on the CPU (16
#                                       threads, 2 gloo ranks) and with --gpus 1
#   bash bench/device/torch.sh etl      the demo's ETL alone (25M ratings) against Polars,
#                                       on the CPU (16 threads) and on the GPU
# Results under $OUT (or build-gpu/out).
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
DEPS=${PYDEPS:-/tmp/pydeps}
. "$ROOT/tools/devcarry_unpack.sh"
unpack_pydeps "$ROOT/devcarry" "$DEPS"
# pytest where the machine lacks it: devcarry/pytest.tar.gz (pure-Python wheels unpacked)
if ! python3 -c "import pytest" 2> /dev/null && [ -f "$ROOT/devcarry/pytest.tar.gz" ]; then
  mkdir -p /tmp/pydeps2 && tar -xzf "$ROOT/devcarry/pytest.tar.gz" -C /tmp/pydeps2
  export PYTHONPATH="/tmp/pydeps2${PYTHONPATH:+:$PYTHONPATH}"
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
  etl)
    # the ETL alone at MovieLens-25M size, ladle against the Polars baseline: on the
    # CPU (16 threads) and with the engine on the GPU
    ROWS=${ROWS:-25000000}
    [ -f python/ladle/_native*.so ] || $PY bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1
    [ -f build-gpu/libladle_cuda.so ] && cp build-gpu/libladle_cuda.so python/ladle/
    for dev in cpu gpu; do
      flags="--threads 16 --etl-only"; [ $dev = gpu ] && flags="$flags --gpus 1"
      $PY examples/demo.py --rows "$ROWS" --out /tmp/demo-etl-$dev $flags > "$OUT/demo-etl-$dev.log" 2>&1
      tail -12 "$OUT/demo-etl-$dev.log"; cp /tmp/demo-etl-$dev/demo.json "$OUT/demo-etl-$dev.json" 2> /dev/null
    done
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
