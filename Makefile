# spacedepth: the README's two commands, `make demo` and `make test`, start here.
# Each does all the set-up it needs (scripts/setup.sh) and is safe to run again.
PRESET ?= release
BUILD  := build
VENV   := .venv
CMAKE  := $(VENV)/bin/cmake
CTEST  := $(VENV)/bin/ctest
JOBS   ?= $(shell nproc)

.PHONY: all setup configure build install test test-host test-arm build-arm arm-mca demo build-demo bench bench-plan bench-instructions bench-measure bench-peers bench-frameworks clean \
        test-asan test-tsan test-large test-frameworks fuzz tune confirm-tuning compare-schedules

all: build

setup:
	@scripts/setup.sh

configure: setup
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset $(PRESET) >/dev/null

build: configure
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset $(PRESET) -j $(JOBS)

# The CMake package, static archives, headers, pkg-config file and CLI (README "Installing");
# COMPONENTS=cuda adds the CUDA component.
PREFIX ?= /usr/local
COMPONENTS ?=
install: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --install $(BUILD) --prefix "$(PREFIX)"
	@for c in $(COMPONENTS); do PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --install $(BUILD) --prefix "$(PREFIX)" --component $$c; done

# A binary wheel of the Python module this build made (every x86 rung, the CUDA kernels),
# manylinux-tagged by auditwheel, in dist/ (README "Python"; ctest python_wheel installs it).
wheel: build
	@$(VENV)/bin/python scripts/make_wheel.py --build $(BUILD) --out dist

# `make test` is the host suite, the whole suite again for ARM64 under qemu, and again under
# ASan + UBSan (with the implicit-conversion checks) with a 45-second fuzz run, and under TSan.
test: test-host test-arm test-asan test-tsan

test-host: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CTEST) --preset $(PRESET) -j $(JOBS)

# ARM64: cross-compiled with g++-aarch64-linux-gnu against the host build's generators
# (CMakePresets.json `arm64`, cmake/toolchain-aarch64-linux-gnu.cmake); ctest runs every test
# binary through qemu-aarch64, plus the NEON loop check and the arm-64-android build check.
ARM_BUILD := build-arm
build-arm: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset arm64 >/dev/null
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset arm64 -j $(JOBS)

test-arm: build-arm
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CTEST) --preset arm64 -j $(JOBS)

# Sanitizer builds (CMakePresets.json asan / tsan, clang-14): the GoogleTest suite and the CLI
# test with the runtime, CLI and tests instrumented; the asan build (ASan, UBSan and its implicit
# integer-conversion checks in one build) also runs the fuzzer for 45 s (ctest fuzz_short). They
# link the release build's kernels, every x86 target of it (SPACEDEPTH_KERNELS_FROM in
# CMakePresets.json's sanitize-base), and generate none.
test-asan test-tsan: test-%: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset $* >/dev/null
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset $* -j $(JOBS)
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp" \
		UBSAN_OPTIONS=print_stacktrace=1 $(CTEST) --preset $* -j $(JOBS)

# The framework libraries (frameworks/: PyTorch operators, JAX FFI handlers, TensorFlow ops) in a
# venv of their own with the pinned frameworks from PyPI (scripts/setup_frameworks.sh, about 6 GB)
# and a build of their own (CMakePresets.json `frameworks`, build-frameworks/, the release build's
# kernels): clang-tidy over frameworks/ (the rest is the host build's ctest tidy), the libtorch program, tests/python and the torch tests with the C++ operators and
# gradient, the torch tests with the Python gradient, test_torch.py with the Python operators, then JAX and TensorFlow, each framework in a process
# of its own (torch.compile aborted in a process that had loaded TensorFlow and jaxlib). Not part
# of `make test`; .ci/run runs both.
FW_BUILD := build-frameworks
FW_PYTEST := PYTHONPATH="$(CURDIR)/$(FW_BUILD)/python:$(CURDIR)/tests" .venv-frameworks/bin/python -m pytest -q -rs \
             -p no:cacheprovider
test-frameworks: build
	@scripts/setup_frameworks.sh
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset frameworks >/dev/null
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset frameworks -j $(JOBS)
	@tests/check_tidy.sh clang-tidy-14 . $(FW_BUILD) frameworks
	@$(FW_BUILD)/bin/spacedepth_torch_cpp
	@$(FW_PYTEST) tests/frameworks/test_torch_ops.py tests/python
	@SPACEDEPTH_TORCH_AUTOGRAD_LIBRARY= $(FW_PYTEST) tests/frameworks/test_torch_ops.py tests/python/test_torch.py
	@SPACEDEPTH_TORCH_LIBRARY= $(FW_PYTEST) tests/python/test_torch.py
	@$(FW_PYTEST) tests/frameworks/test_jax.py
	@$(FW_PYTEST) tests/frameworks/test_tensorflow.py

# The framework libraries beside each framework's own op, per call and on the case matrix
# (bench/frameworks_bench.py -> bench/frameworks.json), then bench/RESULTS.md again. Not part of CI.
bench-frameworks: test-frameworks
	@PYTHONPATH="$(CURDIR)/$(FW_BUILD)/python" .venv-frameworks/bin/python bench/frameworks_bench.py --bench $(BUILD)/bin/spacedepth_bench
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# The huge-tensor tests alone (> 2 GiB, > 2^31 elements; about 4.5 GiB of memory).
test-large: build
	@$(BUILD)/bin/spacedepth_tests --gtest_filter='LargeTensors.*'

# Fuzz for FUZZ_TIME seconds (default 600) and merge new inputs into tests/fuzz/corpus.
FUZZ_TIME ?= 600
fuzz: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset asan >/dev/null
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset asan --target spacedepth_fuzz -j $(JOBS)
	@tests/fuzz/run_fuzz.sh build-asan/bin/spacedepth_fuzz tests/fuzz/corpus build-asan/fuzz_scratch $(FUZZ_TIME) --merge

# The llvm-mca table of the ARM64 inner loops (bench/arm_mca.md), then bench/RESULTS.md again.
arm-mca: build-arm
	@$(VENV)/bin/python scripts/arm_loops.py --cli $(ARM_BUILD)/bin/spacedepth --mca --markdown bench/arm_mca.md
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# Tuning (README "Tuning"): a benchmark-driven search of the schedule parameters and switch
# points on this machine (scripts/tune.py; stop it any time, run it again to resume), written to
# tuning/<target>.json, then the main build again, which picks the database up.
# TUNE_SEARCH=small (about 5 minutes) or full; TUNE_ARGS for more options (--help).
TUNE_SEARCH ?= small
tune: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python scripts/tune.py --search $(TUNE_SEARCH) $(TUNE_ARGS)
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset $(PRESET) -j $(JOBS)

# A tuning database's runtime switch points against the defaults on every case of the matrix,
# 256 B to 64 MiB, each changed call timed in one process, interleaved (bench/confirm_switch_points.py:
# bench/switch_points.<target>.md, included in bench/RESULTS.md). CONFIRM_ARGS="--set name=value,...
# --write-database" confirms values and writes the confirmed ones into this CPU's database.
confirm-tuning: build
	@$(VENV)/bin/python bench/confirm_switch_points.py --bench $(BUILD)/bin/spacedepth_bench $(CONFIRM_ARGS)
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# Manual vs tuned vs Halide's autoschedulers on the shape classes (bench/schedules.md, included
# in bench/RESULTS.md). Not part of CI.
compare-schedules: build
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python bench/compare_schedules.py
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# The demo builds what it shows and no more (CMakePresets.json `demo`, build-demo/): the kernels
# for this machine's own target, the CLI and the Python module; no tests, benchmark or GPU
# kernels, which `make all` and `make test` build in build/.
DEMO_BUILD := build-demo
build-demo: setup
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --preset demo >/dev/null
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(CMAKE) --build --preset demo -j $(JOBS)

demo: build-demo
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" scripts/demo.sh $(DEMO_BUILD)

# Google Benchmark over the fixed case matrix and the model shapes (C++ peers beside every row),
# the library's rows again on the AVX2 path (bench/results_avx2.json), then bench/RESULTS.md and
# its plot. The harness JSON is kept in bench/results.json so `make bench-peers` can regenerate
# the page without rerunning it. Not part of CI (RESULTS.md says how long the last run took).
BENCH_MIN_TIME ?= 0.1
BENCH_CONTEXT = --benchmark_context=cpu_model="$$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
		--benchmark_context=kernel_target="$$($(BUILD)/bin/spacedepth info | sed -n 's/^target this CPU runs: //p')" \
		--benchmark_context=commit="$$(git rev-parse --short HEAD)"
bench: build
	@$(VENV)/bin/python -c "import matplotlib" 2>/dev/null || $(VENV)/bin/pip install -q matplotlib
	@$(BUILD)/bin/spacedepth_bench --benchmark_min_time=$(BENCH_MIN_TIME) --benchmark_filter='-^(fixed_cost|plan|oneshot|plan_modes)/|^naive/[^/]+/bytes:[0-9]{3,5}/' \
		$(BENCH_CONTEXT) --benchmark_out=bench/results.json --benchmark_out_format=json $(BENCH_ARGS)
	@export SPACEDEPTH_MAX_ISA=avx2; $(BUILD)/bin/spacedepth_bench --benchmark_min_time=$(BENCH_MIN_TIME) \
		--benchmark_filter='^(model/)?spacedepth/.*/threads:1/' $(BENCH_CONTEXT) \
		--benchmark_out=bench/results_avx2.json --benchmark_out_format=json $(BENCH_ARGS) >/dev/null
	@$(VENV)/bin/python bench/plan_path.py --bench $(BUILD)/bin/spacedepth_bench
	@$(VENV)/bin/python bench/results_table.py bench/results.json --bench $(BUILD)/bin/spacedepth_bench
	@echo "wrote bench/RESULTS.md and bench/ratio_to_memcpy.png"

# The cost of a call (64 bytes: through a plan, one-shot, XNNPACK, memcpy) and every case at 256 B
# to 32 KiB through a plan, at 4, 16 and 32 KiB one-shot, and to 16 KiB the scalar loop
# (bench/plan_path.py, about 4 minutes), then bench/RESULTS.md again. BENCH_BEFORE=path/to/an/older/spacedepth_bench adds that build's one-shot fixed cost.
# The instructions each case's call spends per 64 output bytes at 128 KiB and 2 MiB on the AVX2
# path, counted by callgrind (bench/instruction_counts.py, about a minute), beside each AVX2 miss
# in bench/RESULTS.md. Installs valgrind where it is missing (Debian, as root).
bench-instructions: build
	@command -v valgrind >/dev/null || { [ "$$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends valgrind; } || { echo "bench-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
	@$(VENV)/bin/python bench/instruction_counts.py --bench $(BUILD)/bin/spacedepth_bench
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

bench-plan: build
	@$(VENV)/bin/python bench/plan_path.py --bench $(BUILD)/bin/spacedepth_bench \
		$(if $(BENCH_BEFORE),--before $(BENCH_BEFORE) --before-label "$(BENCH_BEFORE_LABEL)")
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# ESTIMATE vs MEASURE plans: every case, 1 and 2 threads, 4 KiB to 64 MiB, the two plans timed in
# alternating rounds (bench/measure_plans.py; MEASURE_ARGS, e.g. --sizes 131072), then
# bench/RESULTS.md again.
bench-measure: build
	@$(VENV)/bin/python bench/measure_plans.py --bench $(BUILD)/bin/spacedepth_bench $(MEASURE_ARGS)
	@test ! -f bench/results.json || $(VENV)/bin/python bench/results_table.py bench/results.json

# The Python peers (numpy, PyTorch, ONNX Runtime, OpenVINO, TensorFlow) in their own venv, on the
# same cases, each beside spacedepth's Python module on the same arrays in the same process (the
# module from build/python: .venv-peers is made from the same python3 as .venv); then
# bench/RESULTS.md again with their columns, the in-process table and its plot. Not part of CI.
PEERS_VENV := .venv-peers
bench-peers: build
	@test -x $(PEERS_VENV)/bin/python || python3 -m venv $(PEERS_VENV)
	@$(PEERS_VENV)/bin/python -c "import numpy, matplotlib" 2>/dev/null || $(PEERS_VENV)/bin/pip install -q numpy matplotlib
	@for p in torch onnx onnxruntime openvino tensorflow-cpu; do \
		$(PEERS_VENV)/bin/python -c "import $${p%-cpu}" 2>/dev/null || $(PEERS_VENV)/bin/pip install -q $$p \
		|| echo "bench-peers: could not install $$p; the table will say so"; done
	@PYTHONPATH=$(CURDIR)/$(BUILD)/python $(PEERS_VENV)/bin/python bench/peers.py --bench $(BUILD)/bin/spacedepth_bench --rank-cases
	@PYTHONPATH=$(CURDIR)/$(BUILD)/python $(PEERS_VENV)/bin/python bench/python_call_cost.py
	@test -f bench/results.json || { echo "bench-peers: run make bench first for the C++ rows"; exit 1; }
	@$(VENV)/bin/python -c "import matplotlib" 2>/dev/null || $(VENV)/bin/pip install -q matplotlib
	@$(VENV)/bin/python bench/results_table.py bench/results.json
	@echo "wrote bench/peers.json, bench/RESULTS.md, bench/ratio_to_memcpy.png and bench/peers_in_process.png"

clean:
	rm -rf $(BUILD) $(ARM_BUILD) $(DEMO_BUILD) build-asan build-ubsan build-tsan build-tune build-compare
