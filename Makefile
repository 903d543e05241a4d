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

bench: build
	@$(BUILD)/bin/spacedepth_bench --benchmark_counters_tabular=true $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)
