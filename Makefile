# corun — top-level commands. `make demo` runs the main job, `make test` the
# tests (plus an AddressSanitizer/UBSan build and the fuzz targets), `make
# gpu-check` everything GPU-side on a machine with an NVIDIA GPU.
BUILD      ?= build
BUILD_SAN  ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all setup build build-asan test test-fast fuzz demo gpu-check bench clean help

all: build

help:
	@echo "make demo       run the LS+batch scenario (GPU if present, else the simulator)"
	@echo "make test       build, run all tests, then the ASan+UBSan build's tests, then fuzz"
	@echo "make fuzz       each libFuzzer target for FUZZ_SECONDS (60) s (skipped without clang)"
	@echo "make test-fast  run the tests of the normal build only"
	@echo "make gpu-check  build, test and benchmark everything GPU-side (needs a GPU)"
	@echo "make bench      CPU benchmarks (scheduler decision cost)"
	@echo "make clean      remove build folders"

setup:
	@scripts/setup.sh

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD_SAN)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DCORUN_SANITIZE=ON -DCORUN_CUDA=OFF $(CMAKE_ARGS)

build-asan: setup $(BUILD_SAN)/CMakeCache.txt
	cmake --build $(BUILD_SAN) -j $(JOBS)

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test: build build-asan
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(BUILD_SAN) --output-on-failure -j $(JOBS)
	scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

fuzz: setup
	scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

demo: build
	$(BUILD)/corun demo

bench: build
	scripts/bench.sh $(BUILD)

gpu-check:
	scripts/gpu-check.sh

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ)
