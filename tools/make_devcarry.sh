#!/usr/bin/env bash
# Makes devcarry/ (ignored by git), what device runs carry: the device machine
# has Python 3.12, torch, numpy and pyarrow but no Polars, DuckDB or pytest and
# no network. From the repository root, on a machine that reaches PyPI:
#
#   bash tools/make_devcarry.sh          (about 3 minutes: xz -9 of ~250 MB)
#   bash tools/make_devcarry.sh --gpu    (devcarry-gpu/: the same without DuckDB,
#                                         plus nvCOMP for the GPU's Parquet pages)
#
# --gpu makes devcarry-gpu/ instead: pydeps.tar.xz without DuckDB and
# hypothesis (the GPU runs need Polars and pytest only; with the checkout it
# must stay under the device tool's 64 MiB) and nvcomp.tar.xz, the headers and library
# of the PyPI wheel nvidia-libnvcomp-cu13 (about 22 MB), which
# tools/gpu/test_gpu.sh unpacks into /tmp/nvcomp before CMake looks for it.
# Carry it as ["devcarry-gpu"] and run CARRY=devcarry-gpu bash tools/gpu/test_gpu.sh.
#
# 1. downloads the wheels for CPython 3.12 on x86-64 Linux: Polars (the pinned
#    release and its runtime), DuckDB, pytest and hypothesis with their
#    pure-Python dependencies;
# 2. unpacks them into one folder and packs it as devcarry/pydeps.tar.xz
#    (about 49 MB: with the checkout, under the device tool's 64 MiB carry);
#    bench/device/*.sh and tools/gpu/test_gpu.sh unpack it into /tmp/pydeps
#    (tools/devcarry_unpack.sh);
# 3. writes devcarry/COMMIT (git rev-parse HEAD: the benchmark JSONs name it;
#    re-run `git rev-parse HEAD > devcarry/COMMIT` after committing);
# 4. adds devcarry/ to .git/info/exclude, so that it travels only when named
#    in the device call's carry (["devcarry"]).
set -euo pipefail
[ -f Makefile ] && [ -d src ] || { echo "run from the repository root"; exit 2; }
POLARS=$(sed -n 's/.*polars==\([0-9.]*\).*/\1/p' Makefile | head -1)
[ -n "$POLARS" ] || { echo "no pinned Polars version in the Makefile"; exit 2; }
PY=${PYTHON:-python3}
GPU=0
[ "${1:-}" = "--gpu" ] && GPU=1
DIR=devcarry
[ $GPU = 1 ] && DIR=devcarry-gpu
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$W/whl" \
  "polars==$POLARS" "polars-runtime-32==$POLARS" pytest pluggy iniconfig packaging \
  $([ $GPU = 1 ] || echo duckdb hypothesis sortedcontainers attrs)
mkdir -p "$W/u"
for w in "$W"/whl/*.whl; do $PY -m zipfile -e "$w" "$W/u"; done
find "$W/u" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p $DIR
tar -C "$W/u" -cf - . | xz -9e -T0 > $DIR/pydeps.tar.xz
if [ $GPU = 1 ]; then
  $PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$W/nv" nvidia-libnvcomp-cu13
  mkdir -p "$W/nvu"
  for w in "$W"/nv/*.whl; do $PY -m zipfile -e "$w" "$W/nvu"; done
  tar -C "$W/nvu" -cf - nvidia/libnvcomp/include nvidia/libnvcomp/lib64/libnvcomp.so.6 \
    | xz -9e -T0 > $DIR/nvcomp.tar.xz
fi
git rev-parse HEAD > $DIR/COMMIT
grep -qx "$DIR/" .git/info/exclude 2> /dev/null || echo "$DIR/" >> .git/info/exclude
echo "$DIR: $(du -ch $DIR/*.tar.xz | tail -1 | cut -f1) (Polars $POLARS)"
