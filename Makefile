# Two entry points: `make run` (setup, build, demo) and `make test` (setup, build, every test).
BUILD ?= build
JOBS ?= $(shell nproc)
DEMO_TABLE ?= $(BUILD)/demo-table
DEMO_TARGETS ?=

.PHONY: all setup configure build run test test-asan test-ubsan test-sanitized torture fuzz bench \
	clean format

all: build

setup:
	@scripts/setup.sh

# Configured with everything (tests, benchmarks); `make run` may have left the tests out.
configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DDELTACPP_TESTS=ON > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# A person's first minute: only the library, the CLI and the demo's example program, with only
# what they need installed (no GoogleTest, no Java, no Spark). A build directory already set up
# for the tests keeps them.
run:
	@scripts/setup.sh --runtime
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then cmake -S . -B $(BUILD) -G Ninja -DDELTACPP_TESTS=OFF > /dev/null; fi
	@cmake --build $(BUILD) -j $(JOBS) --target deltacpp_cli $(DEMO_TARGETS)
	@scripts/demo.sh $(BUILD) $(DEMO_TABLE)

test: build
	@scripts/test.sh $(BUILD)

# The C++ suites under AddressSanitizer / UndefinedBehaviorSanitizer, each in its own build dir.
test-asan: setup
	@JOBS=$(JOBS) scripts/test-sanitizer.sh address build-asan

test-ubsan: setup
	@JOBS=$(JOBS) scripts/test-sanitizer.sh undefined build-ubsan

# CI's sanitizer stage: the fuzz build (clang, ASan and UBSan at once, build-fuzz) runs the C++
# suites, then every fuzz target for FUZZ_SMOKE_SECONDS.
FUZZ_SMOKE_SECONDS ?= 15
test-sanitized:
	@scripts/setup.sh --fuzz
	@JOBS=$(JOBS) scripts/test-sanitizer.sh fuzz
	@FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) JOBS=$(JOBS) scripts/fuzz.sh

# Concurrent deltacpp processes killed at random, the table checked after every kill
# (tests/torture/torture.py); `make test` runs it for 2 minutes.
MINUTES ?= 10
torture: build
	@TZ=UTC .venv/bin/python tests/torture/torture.py --cli $(BUILD)/deltacpp --seconds $$(( $(MINUTES) * 60 ))

# libFuzzer targets under ASan + UBSan (tests/fuzz), each for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/setup.sh --fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) scripts/fuzz.sh

# The side-by-side suite against delta-rs and Spark (bench/suite.py) and the C++ benchmarks;
# QUICK=1: the suite alone at small sizes (a few minutes). Results: bench/results/, and the
# table and chart in docs/performance.md.
bench: configure
	@scripts/setup.sh --bench
	cmake --build $(BUILD) -j $(JOBS)
	@scripts/bench.sh $(BUILD) $(if $(QUICK),--quick)

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')
