# spacedepth: the README's two commands, `make demo` and `make test`, start here.
# Each does all the set-up it needs (scripts/setup.sh) and is safe to run again.
PRESET ?= release
BUILD  := build
VENV   := .venv
CMAKE  := $(VENV)/bin/cmake
CTEST  := $(VENV)/bin/ctest
JOBS   ?= $(shell nproc)

.PHONY: all setup configure build test demo bench clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset $(PRESET) >/dev/null

build: configure
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset $(PRESET) -j $(JOBS)

test: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CTEST) --preset $(PRESET) -j $(JOBS)

demo: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" scripts/demo.sh

# Google Benchmark over the fixed case matrix, then the RESULTS.md table (ratios to memcpy).
bench: build
	@$(BUILD)/bin/spacedepth_bench --benchmark_out=$(BUILD)/bench.json --benchmark_out_format=json $(BENCH_ARGS)
	@$(VENV)/bin/python bench/results_table.py $(BUILD)/bench.json

clean:
	rm -rf $(BUILD)
