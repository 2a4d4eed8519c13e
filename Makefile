# ladle — build, test and run the demo. Each target installs what it needs on a
# fresh Debian machine (apt-get for system packages, pip into the project venv
# .venv), skipping what is already there.
#
#   make          the C library, C tests and demos (build/), and the Python
#                 package built into .venv (`.venv/bin/python -c "import ladle"`)
#   make test     C unit tests (release, then ASan+UBSan), the Python tests, and
#                 the fuzzers (Parquet files and pages, CSV bytes and records, and
#                 differential against pyarrow) for FUZZ_SECONDS (60) each, and the
#                 random differential query tester for QFUZZ_SECONDS (60)
#   make fuzz-queries  random Polars queries on ladle and on Polars for QFUZZ_SECONDS
#                 (QFUZZ_SEED, default: the time); reproducers in build-fuzz/qfuzz/
#   make demo     the main job: MovieLens-shaped ETL in Polars on ladle, vs Polars
#   make demo-c   the same shape of job through the C API only
#   make bench    ladle vs Polars, DuckDB and pyarrow: TPC-H SF1 (Parquet and in memory),
#                 db-benchmark group-by/join (1e7 rows), the demo's ETL (25M ratings),
#                 Parquet scans; medians, checked answers, JSON + PNG in bench/results/
#   make bench-quick  the same at SF0.1 / 1e6 rows (about a minute)
#   make bench-io Parquet decode and CSV parse throughput against Polars and pyarrow
#   make format   clang-format every C source

SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_ARGS ?=
VENV ?= .venv
PY := $(VENV)/bin/python
# The one Polars release ladle's translator is written against (see
# python/ladle/_version.py); the rest are the test and demo dependencies.
PY_DEPS := polars==2.1.0 pyarrow numpy pytest hypothesis duckdb matplotlib setuptools wheel
C_SOURCES := $(shell find src include -name '*.[ch]' 2>/dev/null)
EXT_SOURCES := $(C_SOURCES) python/ladle/_native.c setup.py pyproject.toml

.PHONY: all build deps python test test-c test-asan test-python test-gpu fuzz fuzz-queries bench bench-quick bench-io demo demo-c format clean
BENCH_ARGS ?=
FUZZ_SECONDS ?= 60
QFUZZ_SECONDS ?= 60
ifndef QFUZZ_SEED
QFUZZ_SEED := $(shell date +%s)
endif
QFUZZ_JOBS ?= $(JOBS)
QFUZZ_GATE ?= all
FUZZ_DIFF_GATE ?= all

all: build python

deps:
	@need=""; \
	for tool in cmake:cmake gcc:gcc make:make; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || need="$$need $${tool##*:}"; \
	done; \
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need="$$need python3-venv"; \
	python3 -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
	  >/dev/null 2>&1 || need="$$need python3-dev"; \
	command -v mpicc >/dev/null 2>&1 || need="$$need openmpi-bin libopenmpi-dev"; \
	for hdr in zlib.h:zlib1g-dev zstd.h:libzstd-dev snappy-c.h:libsnappy-dev lz4.h:liblz4-dev \
	           brotli/decode.h:libbrotli-dev libdeflate.h:libdeflate-dev; do \
	  test -e /usr/include/$${hdr%%:*} || need="$$need $${hdr##*:}"; \
	done; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; \
	fi

build/CMakeCache.txt: | deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release

build: build/CMakeCache.txt
	cmake --build build -j $(JOBS)

$(VENV)/.deps: Makefile | deps
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check $(PY_DEPS)
	@# torch from PyPI is a large CUDA build (it runs on the CPU too): once per venv
	$(PY) -c 'import torch' >/dev/null 2>&1 || $(PY) -m pip install -q --disable-pip-version-check torch
	touch $@

$(VENV)/.ladle-ext: $(VENV)/.deps $(EXT_SOURCES)
	$(PY) -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e .
	$(PY) -c 'import ladle'
	touch $@

# the CUDA backend and the MPI shim, when CMake built them, beside the module
# that loads them
python: $(VENV)/.ladle-ext
	@if [ -f build/libladle_cuda.so ]; then cmp -s build/libladle_cuda.so python/ladle/libladle_cuda.so || cp build/libladle_cuda.so python/ladle/; fi
	@if [ -f build/libladle_mpi.so ]; then cmp -s build/libladle_mpi.so python/ladle/libladle_mpi.so || cp build/libladle_mpi.so python/ladle/; fi

build-asan/CMakeCache.txt: | deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLADLE_SANITIZE=ON

test-c: build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan/CMakeCache.txt
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# the GPU test set, on a machine with an NVIDIA GPU (README: "Running on a GPU")
test-gpu:
	bash tools/gpu/test_gpu.sh

test-python: python
	$(PY) -m pytest tests/python -p no:cacheprovider

# libFuzzer targets for the Parquet and CSV readers (clang, ASan + UBSan) and the
# differential fuzzer against pyarrow, run for FUZZ_SECONDS each, one at a time,
# from a corpus seeded with ../shared's files and tests/data/fuzz/; then the
# random differential query tester for QFUZZ_SECONDS
fuzz: | deps
	@command -v clang >/dev/null 2>&1 && test -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev zstd)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_DIFF_GATE=$(FUZZ_DIFF_GATE) bash fuzz/run.sh
	$(MAKE) --no-print-directory fuzz-queries QFUZZ_GATE=$(QFUZZ_GATE)

# random Polars queries over random tables on ladle and on Polars' CPU engine
# (tests/python/qfuzz); failures shrunk into reproducers, summary.json beside them.
# QFUZZ_GATE=all (the default): any failure fails the target; QFUZZ_GATE=crash
# (what `make test` uses): the campaign's seed is new each run, so a differing
# answer is reported with its reproducer while only a crash or a hang fails; the
# fixed-seed test in the Python suite (test_random_queries) gates answers.
fuzz-queries: python
	$(PY) tests/python/qfuzz --seconds $(QFUZZ_SECONDS) --seed $(QFUZZ_SEED) --jobs $(QFUZZ_JOBS) \
	  --shrink-total-seconds 120 --out build-fuzz/qfuzz/$(QFUZZ_SEED) --gate $(QFUZZ_GATE)

test: QFUZZ_GATE := crash
test: FUZZ_DIFF_GATE := crash
test: test-c test-asan test-python fuzz

# ladle against its peers, same data, machine and threads (bench/bench.py --help)
bench: python
	$(PY) bench/bench.py $(BENCH_ARGS)

# SPMD weak scaling under mpirun: TPC-H and a shuffle-heavy group-by and join at a
# fixed size per rank on 1, 2, 4 ranks, against 1 rank x every core and Polars, and
# the exchanges against the raw alltoall (bench/spmd_bench.py --help; e.g.
# BENCH_ARGS="--sf-per-rank 0.1 --rows-per-rank 1e6 --budget-s 600")
.PHONY: bench-spmd
bench-spmd: build python
	@if [ -f build/libladle_mpi.so ]; then cmp -s build/libladle_mpi.so python/ladle/libladle_mpi.so || cp build/libladle_mpi.so python/ladle/; fi
	$(PY) bench/spmd_bench.py drive $(BENCH_ARGS)

bench-quick: python
	$(PY) bench/bench.py --quick $(BENCH_ARGS)

# I/O throughput against Polars and pyarrow (results in bench/results/)
bench-io: python
	$(PY) bench/io_bench.py $(BENCH_ARGS)

demo: python
	$(PY) examples/demo.py $(DEMO_ARGS)

demo-c: build
	./build/ladle_demo $(DEMO_ARGS)

format:
	clang-format -i include/*.h src/*/*.[ch] src/backend/cpu/*.[ch] src/dist/mpi/*.[ch] tests/c/*.[ch] examples/*.c python/ladle/_native.c

clean:
	rm -rf build build-asan build-fuzz python/ladle/*.so $(VENV)/.ladle-ext
