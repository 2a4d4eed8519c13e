#!/usr/bin/env bash
# One device call for a session with little device time: the GPU test set without
# memcheck (tools/gpu/test_gpu.sh, LADLE_GPU_MEMCHECK=0; Python tests named by
# LADLE_GPU_PYTESTS), then the demo's ETL step by step, same run, on the GPU engine,
# ladle's CPU engine and Polars at 16 threads (bench/device/gpu_quick.sh STEP=etl,
# pages compressed on the host), as long as DEADLINE seconds from the start allow.
# Carry a folder with pydeps.tar.xz (tools/make_devcarry.sh --gpu) as CARRY:
#   CARRY=devpy DEADLINE=560 bash bench/device/session_gpu.sh      (carry ["devpy"])
set -uo pipefail
T0=$(date +%s)
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
LADLE_GPU_MEMCHECK=${LADLE_GPU_MEMCHECK:-0} bash tools/gpu/test_gpu.sh > "$OUT/test-gpu.txt" 2>&1
echo "test-gpu exit $?"
grep -E "^\[test-gpu\]|passed|failed|FAIL|differs|wrong" "$OUT/test-gpu.txt" | tail -30
cp build-gpu/out/*.log "$OUT/" 2>/dev/null
left=$(( ${DEADLINE:-560} - ($(date +%s) - T0) ))
echo "[session] ${left}s left for the ETL"
[ "$left" -gt 150 ] || exit 0
STEP=etl NVCOMP=0 ENGINES=${ENGINES:-'cuda cpu polars'} timeout $(( left - 10 )) bash bench/device/gpu_quick.sh 2>&1 | tail -12
