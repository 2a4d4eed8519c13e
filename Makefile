# ladle — build, test and run the demo. Each target installs what it needs on a
# fresh Debian machine (skipping what is already there).
#
#   make        build the library, tests and demo (release, build/)
#   make test   C unit tests twice: release, and ASan+UBSan (build-asan/)
#   make demo   the main job on the CPU engine
#   make format clang-format every C source

SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_ARGS ?=

.PHONY: all build deps test test-c test-asan demo format clean

all: build

deps:
	@need=""; \
	for tool in cmake:cmake gcc:gcc make:make; do \
	  cmd=$${tool%%:*}; pkg=$${tool##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || need="$$need $$pkg"; \
	done; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; \
	fi

build/CMakeCache.txt: | deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release

build: build/CMakeCache.txt
	cmake --build build -j $(JOBS)

build-asan/CMakeCache.txt: | deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLADLE_SANITIZE=ON

test-c: build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan/CMakeCache.txt
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

test: test-c test-asan

demo: build
	./build/ladle_demo $(DEMO_ARGS)

format:
	clang-format -i include/*.h src/*/*.[ch] src/backend/cpu/*.[ch] tests/c/*.[ch] examples/*.c

clean:
	rm -rf build build-asan
