#!/usr/bin/env bash
# The GPU test set, run on a machine with an NVIDIA GPU (the device machine):
#   bash tools/gpu/test_gpu.sh        (or: make test-gpu)
# 1. builds libladle and the CUDA backend (sm_90; LADLE_CUDA_ARCH to change);
# 2. the kernel conformance suite and the column-kernel engine tests against the
#    CPU engine, with LADLE_REQUIRE_CUDA=1 (no GPU is a failure);
# 3. the same under compute-sanitizer memcheck (leaks included);
# 4. where Polars imports (devcarry/pydeps.tar.xz, made by tools/make_devcarry.sh,
#    unpacked into /tmp/pydeps: the device machine has no network) and Python's
#    headers are there, ladle's extension and the Python tests of the GPU path
#    with LADLE_TEST_DEVICE=cuda.
# Exit status: 0 when every step that ran passed.
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
JOBS=$(nproc 2>/dev/null || echo 4)
ARCH=${LADLE_CUDA_ARCH:-90}
export NCCL_NVLS_ENABLE=0
rc=0
say() { echo "[test-gpu] $*"; }
step() { say "$1"; shift; "$@" || { say "FAILED: $*"; rc=1; }; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || say "no nvidia-smi"
# CARRY: the folder carried to the device (devcarry/, or devcarry-gpu/ from
# tools/make_devcarry.sh --gpu: Polars without DuckDB, and nvCOMP's headers and
# library as nvcomp.tar.xz, unpacked into /tmp/nvcomp where CMake finds it)
CARRY=${CARRY:-$ROOT/devcarry}
if [ -f "$CARRY/nvcomp.tar.xz" ] && [ ! -f /tmp/nvcomp/.unpacked ]; then
  rm -rf /tmp/nvcomp && mkdir -p /tmp/nvcomp && tar -xJf "$CARRY/nvcomp.tar.xz" -C /tmp/nvcomp \
    && touch /tmp/nvcomp/.unpacked && say "nvCOMP unpacked into /tmp/nvcomp"
fi
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" > "$OUT/cmake.log" 2>&1 \
  || { tail -30 "$OUT/cmake.log"; exit 2; }
cmake --build build-gpu -j "$JOBS" --target ladle ladle_cuda test_conformance test_columns_engine \
  > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 2; }
export LADLE_CUDA_LIB=$ROOT/build-gpu/libladle_cuda.so LADLE_REQUIRE_CUDA=1
# copies to the device in 1 MiB chunks through the pinned staging buffers, so that the
# large cases take many (the default chunk is 32 MiB)
export LADLE_CUDA_STAGING_BYTES=1048576
step "conformance suite" build-gpu/test_conformance
step "column-kernel engine against the CPU engine" build-gpu/test_columns_engine
if [ "${LADLE_GPU_MEMCHECK:-1}" = 0 ]; then
  say "memcheck skipped (LADLE_GPU_MEMCHECK=0)"
elif command -v compute-sanitizer > /dev/null; then
  for t in test_conformance test_columns_engine; do
    # the conformance suite's large case at 300k rows there (its joins and string
    # matches at 4.2M took over five minutes under the sanitizer)
    step "memcheck $t" env LADLE_CONFORMANCE_LARGE=300007 compute-sanitizer --tool memcheck \
      --leak-check full --error-exitcode 9 build-gpu/$t > "$OUT/memcheck-$t.log" 2>&1
    tail -3 "$OUT/memcheck-$t.log"
  done
else
  say "no compute-sanitizer on PATH: memcheck skipped"; rc=1
fi

unset LADLE_CUDA_STAGING_BYTES
PY=${PYTHON:-python3}
DEPS=${PYDEPS:-/tmp/pydeps}
. "$ROOT/tools/devcarry_unpack.sh"
unpack_pydeps "$CARRY" "$DEPS"
export PYTHONPATH="$ROOT/python:$DEPS${PYTHONPATH:+:$PYTHONPATH}"
PYINC=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
if ! $PY -c "import polars, pytest" 2> /dev/null; then
  say "Python tests skipped: polars or pytest does not import (carry devcarry/: bash tools/make_devcarry.sh)"; rc=1
elif [ ! -f "$PYINC/Python.h" ] && [ ! -f "$DEPS/include/Python.h" ]; then
  say "Python tests skipped: no Python.h for $($PY -V) ($PYINC)"; rc=1
else
  [ -f "$PYINC/Python.h" ] || export C_INCLUDE_PATH="$DEPS/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
  if $PY bench/device/build_ext_parallel.py > "$OUT/ext.log" 2>&1; then
    cp build-gpu/libladle_cuda.so python/ladle/
    # LADLE_GPU_PYTESTS: other test files (a re-run of one, say)
    step "Python tests on the GPU" env LADLE_TEST_DEVICE=cuda $PY -m pytest -q -p no:cacheprovider \
      ${LADLE_GPU_PYTESTS:-tests/python/test_column_kernels.py tests/python/test_torch_gpu.py tests/python/test_loader.py}
  else
    tail -20 "$OUT/ext.log"; say "ladle's extension did not build"; rc=1
  fi
fi
say "exit $rc"
exit $rc
