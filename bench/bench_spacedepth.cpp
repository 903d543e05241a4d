// Google Benchmark harness (`make bench`). Every case of the matrix (bench/cases.cpp), at
// 128 KiB, 512 KiB, 2 MiB and 64 MiB, runs as:
//   spacedepth   the library call, 1 and 2 threads
//   eigen        Eigen TensorMap shuffle (ONNX Runtime's CPU method), 1 and 2 threads
//   xnnpack      XNNPACK, where it has the op (NHWC DCR DepthToSpace, 4-byte), 1 and 2 threads
//   naive        the scalar reference of tests/reference.cpp (a TF-style loop), 1 thread, in cache
// beside memcpy of the same size on 1 and 2 threads; the model shapes (bench::model_cases) run as
// model/spacedepth|eigen|xnnpack/<case>/... on 1 thread, and the rank-1, rank-3 and blocked-layout
// cases (bench::rank_cases, which no peer here offers) as rank/spacedepth/<case>/... on 1 and 2
// threads. bytes_per_second counts bytes read +
// written (2 x tensor bytes). Every row also times memcpy of its own size right after it
// (counters memcpy_gbps, best_memcpy_gbps); bench/results_table.py turns the JSON into
// bench/RESULTS.md's tables with each ratio taken against that row's own memcpy.
// `--shapes=FILE` runs the tuner's shape classes instead, and `--compare_switch_points=...` the
// switch_points/ rows (both below).
#include "bench/cases.h"
#include "bench/peers.h"
#include "runtime/call.h"
#include "runtime/switch_points.h"
#include "spacedepth/spacedepth.h"
#include "tests/harness.h"
#include "tests/reference.h"
#include "tools/aligned_buffer.h"
#include "tools/memcpy_yardstick.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#if SPACEDEPTH_SCHEDULE_COMPARISON
#include "schedule_comparison_kernels.h"
#endif

namespace {

using namespace spacedepth;
using bench::Case;

struct Setup {
    std::unique_ptr<AlignedBuffer> src, dst, check;
    Tensor in, out;
    Params params;
    int64_t bytes;
    // The case's row pattern (NHWC, spatial rank 2): SpaceToDepth reads bh input rows per output
    // row, DepthToSpace writes bh output rows per input row; row_stream_copy's yardstick.
    int pattern_rows = 0;
    int64_t pattern_run_bytes = 0;
    yardstick::RowSide pattern_side = yardstick::RowSide::Read;
};

// Space-side dims about square with the requested byte size.
struct CaseDims {
    Dims space, deep;
    int64_t bytes;
};

CaseDims case_dims(const Case &c, int64_t bytes) {
    CaseDims d;
    c.dims(bytes, &d.space, &d.deep, &d.bytes);
    return d;
}

Tensor case_tensor(const Case &c, const CaseDims &d, void *data, bool input) {
    const bool space = (c.op == Op::SpaceToDepth) == input;
    return Tensor::dense(data, c.dtype, input ? c.layout : c.out_layout, space ? d.space : d.deep);
}

// describe_call() of a case at a size: the plan (kernel family, width, normalised loop nest,
// serial or parallel). It only validates and plans, so the far-apart addresses are never touched.
std::string planned_call(const Case &c, int64_t bytes, int threads) {
    const CaseDims d = case_dims(c, bytes);
    const Params p{c.op, c.block(), c.order, threads};
    return describe_call(p, case_tensor(c, d, reinterpret_cast<void *>(uintptr_t{1} << 44), true),
                         case_tensor(c, d, reinterpret_cast<void *>(uintptr_t{1} << 45), false));
}

std::unique_ptr<Setup> make_setup(const Case &c, int64_t bytes, int threads) {
    auto s = std::make_unique<Setup>();
    const CaseDims d = case_dims(c, bytes);
    s->bytes = d.bytes;
    s->src = std::make_unique<AlignedBuffer>(s->bytes);
    s->dst = std::make_unique<AlignedBuffer>(s->bytes);
    for (int64_t i = 0; i < s->bytes; i++) s->src->data()[i] = static_cast<uint8_t>(i * 131 + 7);
    std::memset(s->dst->data(), 0, s->bytes);
    s->in = case_tensor(c, d, s->src->data(), true);
    s->out = case_tensor(c, d, s->dst->data(), false);
    s->params = Params{c.op, c.block(), c.order, threads};
    if (c.layout == Layout::NHWC && c.out_layout == Layout::NHWC && c.rank == 2 && c.bh > 1) {
        const Dims &rows = d.space;  // N, C, H, W: the row is the space side's W x C
        s->pattern_rows = static_cast<int>(c.bh);
        s->pattern_run_bytes = rows[3] * rows[1] * dtype_size(c.dtype);
        s->pattern_side = c.op == Op::SpaceToDepth ? yardstick::RowSide::Read : yardstick::RowSide::Write;
    }
    return s;
}

// Google Benchmark calls a row's function several times while it settles the iteration count
// (1, 10, 100, ... iterations) and reports only the last call. The row's buffers are kept for its
// next call (filling two 64 MiB buffers takes longer than timing the kernel), and the memcpy
// yardstick is timed only by a call long enough to be the reported one (row_is_reported): paying
// both on every call made `make bench` spend 0.9 s on a 128 KiB row instead of 0.15 s.
Setup &cached_setup(const Case &c, int64_t bytes, int threads) {
    static std::string key;
    static std::unique_ptr<Setup> setup;
    const std::string k = c.name + "/" + std::to_string(bytes) + "/" + std::to_string(threads);
    if (!setup || key != k) {
        setup.reset();
        setup = make_setup(c, bytes, threads);
        key = k;
    }
    return *setup;
}

double g_min_time = 0.5;  // --benchmark_min_time (Google Benchmark's default)

// A call whose timing loop ran at least half the minimum time: the reported call, or the one
// before it when Google Benchmark's estimate fell short (it reports a call that ran min_time).
bool row_is_reported(double loop_seconds) { return loop_seconds >= 0.5 * g_min_time; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void finish(benchmark::State &state, int64_t bytes) {
    state.SetBytesProcessed(2 * bytes * static_cast<int64_t>(state.iterations()));
    state.counters["MiB"] = bytes / double(1 << 20);
}

// memcpy and the streaming-store copy (the limit past the last-level cache) of the same size, on
// 1 and on `threads` threads, timed twice right after the row's timing loop: each row carries its
// own yardsticks (counters memcpy_gbps, best_memcpy_gbps, stream_gbps, best_stream_gbps), because
// DRAM bandwidth on this VM drifts by 10-15 % over the minutes a full run takes.
struct MemcpyYardstick {
    double gbps_1t = 0, gbps_best = 0;
    double stream_1t = 0, stream_best = 0;
    double row_stream_1t = 0;  // the case's row pattern, past the cache only (kPatternMinBytes)
};

// The row-pattern copy only where streaming stores run: in cache the rows are no cost.
constexpr int64_t kPatternMinBytes = 32 << 20;

MemcpyYardstick yardstick(Setup &s, int threads) {
    AlignedBuffer scratch(s.bytes);
    MemcpyYardstick y;
    auto rates = [&](yardstick::Copy copy, double *one, double *best) {
        *one = yardstick::copy_gbps(copy, scratch.data(), s.src->data(), s.bytes, 1);
        *best = std::max(
            *one, threads > 1 ? yardstick::copy_gbps(copy, scratch.data(), s.src->data(), s.bytes, threads) : 0.0);
    };
    rates(yardstick::Copy::Memcpy, &y.gbps_1t, &y.gbps_best);
    rates(yardstick::Copy::Stream, &y.stream_1t, &y.stream_best);
    if (threads <= 1 && s.pattern_rows > 0 && s.bytes >= kPatternMinBytes) {
        y.row_stream_1t = yardstick::row_stream_copy_gbps(scratch.data(), s.src->data(), s.bytes, s.pattern_side,
                                                          s.pattern_rows, s.pattern_run_bytes);
    }
    return y;
}

void record_yardstick(benchmark::State &state, const MemcpyYardstick &a, const MemcpyYardstick &b) {
    state.counters["memcpy_gbps"] = (a.gbps_1t + b.gbps_1t) / 2;
    state.counters["best_memcpy_gbps"] = (a.gbps_best + b.gbps_best) / 2;
    state.counters["stream_gbps"] = (a.stream_1t + b.stream_1t) / 2;
    state.counters["best_stream_gbps"] = (a.stream_best + b.stream_best) / 2;
    if (a.row_stream_1t > 0 && b.row_stream_1t > 0) {
        state.counters["row_stream_gbps"] = (a.row_stream_1t + b.row_stream_1t) / 2;
    }
}

// Times `call` for the row and, on the reported call, its memcpy yardstick and byte counters.
void time_row(benchmark::State &state, Setup &s, int yardstick_threads, const std::function<void()> &call) {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
        call();
        benchmark::DoNotOptimize(s.dst->data());
    }
    if (row_is_reported(seconds_since(t0))) {
        const MemcpyYardstick first = yardstick(s, yardstick_threads);
        record_yardstick(state, first, yardstick(s, yardstick_threads));
    }
    finish(state, s.bytes);
}

// Runs a peer once and checks it against spacedepth's output, so no figure comes from a peer
// computing something else.
bool agrees_with_spacedepth(benchmark::State &state, Setup &s, const std::function<void()> &peer) {
    if (Status st = run(s.params, s.in, s.out); !st.ok()) {
        state.SkipWithError(st.message().c_str());
        return false;
    }
    s.check = std::make_unique<AlignedBuffer>(s.bytes);
    std::memcpy(s.check->data(), s.dst->data(), s.bytes);
    std::memset(s.dst->data(), 0, s.bytes);
    peer();
    if (std::memcmp(s.check->data(), s.dst->data(), s.bytes) != 0) {
        state.SkipWithError("peer output differs from spacedepth's");
        return false;
    }
    return true;
}

// The library through a plan, the path a caller repeating a shape takes (the one-shot run() pays
// validation and planning on every call: see the fixed_cost rows).
void BM_spacedepth(benchmark::State &state, const Case &c) {
    const int threads = static_cast<int>(state.range(1));
    Setup &s = cached_setup(c, state.range(0), threads);
    Plan plan;
    Status st = plan.create(s.params, s.in, s.out);
    if (st.ok()) st = plan.run(s.src->data(), s.dst->data());
    if (!st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    time_row(state, s, threads, [&] { plan.run(s.src->data(), s.dst->data()); });
    state.SetLabel(plan.describe());
}

// One call on each kind of row the planner chooses between for its view: the Halide kernels'
// ("halide/": the family the rules take when they take no microkernel; the Halide transpose
// where they take the tile transpose, the general family where the regroup) and the shuffle microkernel ("shuffle/",
// where the view has a program), both serial; RESULTS.md shows them beside the plan's own row at 128 KiB and 2 MiB.
void BM_row_kind(benchmark::State &state, const Case &c, bool shuffle) {
    Setup &s = cached_setup(c, state.range(0), 1);
    detail::Problem problem;
    detail::View view;
    const sd_tensor in = testing_support::as_c(s.in), out = testing_support::as_c(s.out);
    Status st = detail::validate(testing_support::as_c(s.params, s.in.dims.ndim()), in, out, &problem);
    if (st.ok()) st = detail::build_view(problem, &view);
    if (!st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    detail::KernelPlan plan = detail::make_kernel_plan(problem, view, Device::Host, nullptr);
    const bool small = problem.bytes < detail::switch_points().small_max_bytes;
    const bool tile = plan.family == KernelFamily::Tile, regroup = plan.family == KernelFamily::Regroup;
    const detail::PlanChoice choice{shuffle ? KernelFamily::Shuffle
                                    : tile  ? KernelFamily::Transpose
                                    : small ? KernelFamily::Small
                                            : KernelFamily::General,
                                    false, false, plan.input_loop_order, false};
    if (shuffle || tile || regroup || plan.family == KernelFamily::Shuffle) {
        plan = detail::make_kernel_plan(problem, view, Device::Host, &choice);
    }
    if (shuffle && plan.family != KernelFamily::Shuffle) {
        state.SkipWithError("no shuffle program: the output is not dense from its first byte");
        return;
    }
    auto call = [&] { return detail::execute(problem, plan, nullptr, s.src->data(), s.dst->data(), {}); };
    if (st = call(); !st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    time_row(state, s, 1, [&] { call(); });
    state.SetLabel(detail::describe_plan(plan));
}

// Two plans of one call timed in 31 alternating rounds in one process (which goes first
// alternates too), so that the VM's drift, 10-20 % between rows here, hits both alike. Each
// plan's timed calls follow kWarmCalls untimed calls of its own, as in a loop of calls: a call's
// time depends on where the calls before it left the tensors. At 16 MiB on the 2-core Intel
// Xeon VM (its L3 holds both tensors), D2S NHWC DCR f32 C16 b2 streaming took 1.2 ms after
// itself and 2.75 ms after the plain plan (whose output lines it then evicts), the plain plan
// 2.0 ms after streaming, 1.85 ms one call later and 1.15-1.2 ms only from the third. Timed
// straight after each other the rounds were bimodal, and the median ratio came from whichever
// plan went first in 16 of the 31 rounds: streaming against plain 1.40-1.53, plain against
// streaming 1.43-1.72 (one warm-up call). With three warm-up calls both read 0.97-1.05.
constexpr int kWarmCalls = 3;

struct PairedTimes {
    double ratio;       // the median over the rounds of b's time over a's
    double a_ns, b_ns;  // the median time of a call of each
};

PairedTimes paired_rounds(Setup &s, const Plan &a, const Plan &b) {
    auto per_call_ns = [&](const Plan &plan, int calls) {
        for (int i = 0; i < kWarmCalls; i++) plan.run(s.src->data(), s.dst->data());
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; i++) plan.run(s.src->data(), s.dst->data());
        return seconds_since(start) * 1e9 / calls;
    };
    const int calls = static_cast<int>(std::clamp(20000 / per_call_ns(a, 1), 1.0, 1000.0));
    std::vector<double> ratios, a_ns, b_ns;
    for (int round = 0; round < 31; round++) {
        const double first = per_call_ns(round % 2 ? b : a, calls);
        const double second = per_call_ns(round % 2 ? a : b, calls);
        a_ns.push_back(round % 2 ? second : first);
        b_ns.push_back(round % 2 ? first : second);
        ratios.push_back(b_ns.back() / a_ns.back());
    }
    auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    };
    return {median(ratios), median(a_ns), median(b_ns)};
}

// The same call through an ESTIMATE plan (the rules) and a MEASURE plan (the fastest of the
// rules' plan and its alternatives, timed at create within the default limit), each made
// afresh with no wisdom. The row's own timing is the MEASURE plan's; then both plans run in
// paired rounds: counter paired_ratio is the median of MEASURE's time over ESTIMATE's per round,
// changed is 1 where MEASURE chose another plan, plan_ms the create's time
// (`make bench-measure`, bench/measure_plans.py).
void BM_plan_modes(benchmark::State &state, const Case &c) {
    const int threads = static_cast<int>(state.range(1));
    Setup &s = cached_setup(c, state.range(0), threads);
    forget_wisdom();
    Plan estimate, measured;
    Status st = estimate.create(s.params, s.in, s.out);
    forget_wisdom();
    const auto t0 = std::chrono::steady_clock::now();
    if (st.ok()) st = measured.create(s.params, s.in, s.out, PlanOptions{true, 0});
    const double plan_ms = seconds_since(t0) * 1e3;
    forget_wisdom();
    if (st.ok()) st = estimate.run(s.src->data(), s.dst->data());
    if (st.ok()) st = measured.run(s.src->data(), s.dst->data());
    if (!st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    time_row(state, s, threads, [&] { measured.run(s.src->data(), s.dst->data()); });
    const PairedTimes t = paired_rounds(s, estimate, measured);
    const std::string how = measured.describe(), rules = estimate.describe();
    state.counters["paired_ratio"] = t.ratio;
    state.counters["estimate_ns"] = t.a_ns;
    state.counters["measured_ns"] = t.b_ns;
    state.counters["plan_ms"] = plan_ms;
    state.counters["changed"] = how.substr(0, how.find(';')) != rules.substr(0, rules.find(';'));
    state.SetLabel(how);
}

// Sets the items of `name=value,...` (the names of schedules/tunables.json) in *points:
// `--switch_points` replaces the runtime's (the tuner's runtime candidates) with them,
// `--compare_switch_points` plans beside the runtime's under them.
void set_switch_points_from(const std::string &spec, detail::SwitchPoints *points) {
    std::istringstream in(spec);
    std::string item;
    while (std::getline(in, item, ',')) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos ||
            !detail::set_switch_point(points, item.substr(0, eq), std::stoll(item.substr(eq + 1)))) {
            throw std::runtime_error("unknown switch point item '" + item + "'");
        }
    }
}

// Switch points (`--compare_switch_points=name=value,...`, bench/confirm_switch_points.py): each
// call planned under the runtime's switch points (A: its defaults or its tuning database) and
// under the given ones (B). Where the plans differ, both run in paired rounds (paired_ratio, B's
// time over A's), and so does A against a second plan of its own (control_ratio: the noise of
// that row); B's output is checked against A's first. Rows whose plans are the same time nothing.
detail::SwitchPoints g_compare_points;

void BM_switch_points(benchmark::State &state, const Case &c) {
    const int64_t bytes = state.range(0);
    const int threads = static_cast<int>(state.range(1));
    const detail::SwitchPoints own = detail::switch_points();
    auto under = [&](const detail::SwitchPoints &points, const std::function<void()> &f) {
        detail::set_switch_points(points);
        f();
        detail::set_switch_points(own);
    };
    const std::string a_plan = planned_call(c, bytes, threads);
    std::string b_plan;
    under(g_compare_points, [&] { b_plan = planned_call(c, bytes, threads); });
    state.SetLabel(b_plan);
    state.counters["changed"] = a_plan != b_plan;
    if (a_plan == b_plan) {
        for (auto _ : state) {
        }
        return;
    }
    Setup &s = cached_setup(c, bytes, threads);
    Plan a, a2, b;
    Status st = a.create(s.params, s.in, s.out);
    if (st.ok()) st = a2.create(s.params, s.in, s.out);
    under(g_compare_points, [&] {
        if (st.ok()) st = b.create(s.params, s.in, s.out);
    });
    std::vector<uint8_t> expected(s.bytes);
    if (st.ok()) st = a.run(s.src->data(), s.dst->data());
    if (st.ok()) std::memcpy(expected.data(), s.dst->data(), s.bytes);
    if (st.ok()) std::memset(s.dst->data(), 0, s.bytes);
    if (st.ok()) st = b.run(s.src->data(), s.dst->data());
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
    if (std::memcmp(expected.data(), s.dst->data(), s.bytes) != 0) {
        return state.SkipWithError("the plan under the compared switch points gives another result");
    }
    time_row(state, s, threads, [&] { b.run(s.src->data(), s.dst->data()); });
    const PairedTimes t = paired_rounds(s, a, b);
    state.counters["paired_ratio"] = t.ratio;
    state.counters["a_ns"] = t.a_ns;
    state.counters["b_ns"] = t.b_ns;
    state.counters["control_ratio"] = paired_rounds(s, a, a2).ratio;
}

// Descriptors of the same call that differ only in the stride of N (extent 1, so the same
// memory): one-shot calls that rotate through more of them than the per-thread plan cache keeps
// (4) are planned anew on every call.
constexpr int kUncachedVariants = 5;
Tensor uncached_variant(Tensor t, int k) {
    t.strides[0] += k;
    return t;
}

// The same call one-shot (run()), planned on every call: validation, view, planning, kernel.
void BM_oneshot(benchmark::State &state, const Case &c) {
    const int threads = static_cast<int>(state.range(1));
    Setup &s = cached_setup(c, state.range(0), threads);
    if (Status st = run(s.params, s.in, s.out); !st.ok()) {
        state.SkipWithError(st.message().c_str());
        return;
    }
    Tensor ins[kUncachedVariants], outs[kUncachedVariants];
    for (int k = 0; k < kUncachedVariants; k++) {
        ins[k] = uncached_variant(s.in, k);
        outs[k] = uncached_variant(s.out, k);
    }
    int k = 0;
    time_row(state, s, threads, [&] {
        run(s.params, ins[k], outs[k]);
        k = k + 1 == kUncachedVariants ? 0 : k + 1;
    });
}

template <std::function<void()> (*MakePeer)(const Case &, const Tensor &, const Tensor &, int)>
void BM_peer(benchmark::State &state, const Case &c) {
    const int threads = static_cast<int>(state.range(1));
    Setup &s = cached_setup(c, state.range(0), threads);
    std::function<void()> peer = MakePeer(c, s.in, s.out, threads);
    if (!peer) {
        state.SkipWithError("the peer does not apply");
        return;
    }
    if (!agrees_with_spacedepth(state, s, peer)) return;
    time_row(state, s, threads, peer);
}

std::function<void()> naive_peer(const Case &c, const Tensor &in, const Tensor &out, int) {
    const reference::TensorRef i = testing_support::as_reference(in), o = testing_support::as_reference(out);
    const bool crd = c.order == Order::CRD;
    const std::array<int64_t, 3> all = {c.bd, c.bh, c.bw};
    const int skip = 3 - c.rank;  // the reference takes the sizes of the call's spatial dims only
    if (c.op == Op::SpaceToDepth) return [=] { reference::space_to_depth(i, o, all.data() + skip, crd); };
    return [=] { reference::depth_to_space(i, o, all.data() + skip, crd); };
}

void BM_memcpy(benchmark::State &state) {
    const int64_t bytes = state.range(0);
    const int threads = static_cast<int>(state.range(1));
    AlignedBuffer src(bytes), dst(bytes);
    std::memset(src.data(), 1, bytes);
    std::memset(dst.data(), 0, bytes);
    for (auto _ : state) {
        yardstick::parallel_memcpy(dst.data(), src.data(), bytes, threads);
        benchmark::DoNotOptimize(dst.data());
    }
    finish(state, bytes);
}

// What a kernel that moves data with vector loads and stores can reach: a copy loop of 32-byte
// AVX2 loads and stores, four per iteration, beside memcpy (which glibc runs as `rep movsb` on
// CPUs with fast string moves, faster in cache than any vector loop). One thread; the ceiling
// the in-cache targets are read against (bench/ANALYSIS.md).
#if defined(__x86_64__)
__attribute__((target("avx2"))) void copy_with_avx2(uint8_t *dst, const uint8_t *src, int64_t bytes) {
    int64_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i + 32));
        const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i + 64));
        const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i + 96));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i), a);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i + 32), b);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i + 64), c);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i + 96), d);
    }
    std::memcpy(dst + i, src + i, bytes - i);
}

void BM_vector_copy(benchmark::State &state) {
    const int64_t bytes = state.range(0);
    if (!__builtin_cpu_supports("avx2")) {
        state.SkipWithError("this CPU has no AVX2");
        return;
    }
    AlignedBuffer src(bytes), dst(bytes);
    std::memset(src.data(), 1, bytes);
    std::memset(dst.data(), 0, bytes);
    for (auto _ : state) {
        copy_with_avx2(static_cast<uint8_t *>(dst.data()), static_cast<const uint8_t *>(src.data()), bytes);
        benchmark::DoNotOptimize(dst.data());
    }
    finish(state, bytes);
}

// What a vector kernel can reach on the access pattern of the commonest 128 KiB misses, the
// deinterleave by 2 (D2S NHWC DCR f32 C1 b2 as u64 units: each input row of 2W units becomes two
// output rows of W): a hand-written AVX-512 loop, two loads, two two-source permutes and two
// stores per 16 units, the last vector of a row overlapping the one before. Beside the library's
// row of the same case and memcpy (bench/ANALYSIS.md, "The 128 KiB ceiling").
__attribute__((target("avx512f"))) void deinterleave_with_avx512(uint64_t *dst, const uint64_t *src, int64_t rows,
                                                                 int64_t w) {
    const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    for (int64_t r = 0; r < rows; r++) {
        const uint64_t *in = src + r * 2 * w;
        uint64_t *out0 = dst + r * 2 * w, *out1 = out0 + w;
        for (int64_t x = 0; x < w; x += 8) {
            const int64_t at = std::min(x, w - 8);
            const __m512i a = _mm512_loadu_si512(in + 2 * at), b = _mm512_loadu_si512(in + 2 * at + 8);
            _mm512_storeu_si512(out0 + at, _mm512_permutex2var_epi64(a, even, b));
            _mm512_storeu_si512(out1 + at, _mm512_permutex2var_epi64(a, odd, b));
        }
    }
}

void BM_deinterleave_ceiling(benchmark::State &state) {
    if (!__builtin_cpu_supports("avx512f")) {
        state.SkipWithError("this CPU has no AVX-512");
        return;
    }
    const Case c{
        "D2S_NHWC_DCR_f32_C1_b2", Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 1, 2, 2};
    const CaseDims d = case_dims(c, state.range(0));
    const int64_t rows = d.deep[2], w = d.deep[3];  // deep rows; each gives two space rows of w units
    Setup &s = cached_setup(c, state.range(0), 1);
    // The same result as the library's call: checked once, so the figure is of the real job.
    if (Status st = run(s.params, s.in, s.out); !st.ok() || w < 8) {
        state.SkipWithError("case does not apply");
        return;
    }
    std::vector<uint8_t> expected(s.dst->data(), s.dst->data() + s.bytes);
    std::memset(s.dst->data(), 0, s.bytes);
    auto call = [&] {
        deinterleave_with_avx512(reinterpret_cast<uint64_t *>(s.dst->data()),
                                 reinterpret_cast<const uint64_t *>(s.src->data()), rows, w);
    };
    call();
    if (std::memcmp(expected.data(), s.dst->data(), s.bytes) != 0) {
        state.SkipWithError("the hand-written deinterleave differs from spacedepth's output");
        return;
    }
    time_row(state, s, 1, call);
}
#endif

// The parallel threshold: the same call on 2 threads with the pool forced on (mode 1) or off
// (mode 0) at sizes around runtime/switch_points.h's parallel_min_bytes, to show where threads pay.
void BM_threshold(benchmark::State &state, const Case &c) {
    Setup &s = cached_setup(c, state.range(0), 2);
    const detail::SwitchPoints saved = detail::switch_points();
    detail::SwitchPoints forced = saved;
    forced.parallel_min_bytes = state.range(1) ? 0 : INT64_MAX;
    detail::set_switch_points(forced);
    time_row(state, s, 1, [&] { run(s.params, s.in, s.out); });
    detail::set_switch_points(saved);
}

// The fixed cost of a call: D2S NHWC DCR f32 on a 64-byte tensor ([1, 16, 1, 1] -> [1, 4, 2, 2]),
// one thread, through a plan (kernel entry only), one-shot repeating one call (its plan found in
// the per-thread cache), one-shot planned on every call (validation + planning + kernel entry),
// XNNPACK's xnn_run_operator after its create / reshape / setup, and a 64-byte memcpy.
void BM_fixed_cost(benchmark::State &state, int variant) {
    const Case c{"fixed", Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 4, 2, 2};
    alignas(64) float in[16], out[16];
    for (int i = 0; i < 16; i++) in[i] = static_cast<float>(i);
    const Tensor tin = Tensor::dense(in, DType::Float32, Layout::NHWC, {1, 16, 1, 1});
    const Tensor tout = Tensor::dense(out, DType::Float32, Layout::NHWC, {1, 4, 2, 2});
    Tensor ins[kUncachedVariants], outs[kUncachedVariants];
    for (int k = 0; k < kUncachedVariants; k++) {
        ins[k] = uncached_variant(tin, k);
        outs[k] = uncached_variant(tout, k);
    }
    const Params p{Op::DepthToSpace, 2, Order::DCR, 1};
    Plan plan;
    int k = 0;
    std::function<void()> call;
    switch (variant) {
    case 0:
        if (!plan.create(p, tin, tout).ok()) return state.SkipWithError("plan");
        call = [&] { plan.run(in, out); };
        break;
    case 1: call = [&] { run(p, tin, tout); }; break;
    case 2:
        call = [&] {
            run(p, ins[k], outs[k]);
            k = k + 1 == kUncachedVariants ? 0 : k + 1;
        };
        break;
    case 3:
        call = bench::xnnpack_peer(c, tin, tout, 1);
        if (!call) return state.SkipWithError("XNNPACK does not apply");
        break;
    default: call = [&] { std::memcpy(out, in, sizeof(in)); };
    }
    call();
    for (auto _ : state) {
        call();
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
    }
    finish(state, 64);
}

// Small tensors: every case of the matrix from 256 B to 32 KiB through a plan, and at 4, 16 and
// 32 KiB one-shot, 1 thread, each row with its own memcpy yardstick; up to 16 KiB also the scalar
// loop of tests/reference.cpp ("naive/", which no plan may be slower than). Named plan/<case>/...,
// oneshot/<case>/... and naive/<case>/... at these sizes, apart from the matrix's rows (`make
// bench-plan` runs these and fixed_cost alone).
void register_small_tensors() {
    for (int64_t size : {256, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10}) {
        for (const Case &c : bench::all_cases()) {
            benchmark::RegisterBenchmark(("plan/" + c.name).c_str(), BM_spacedepth, c)
                ->Args({size, 1})
                ->ArgNames({"bytes", "threads"})
                ->UseRealTime();
            if (size <= (16 << 10)) {
                benchmark::RegisterBenchmark(("naive/" + c.name).c_str(), BM_peer<naive_peer>, c)
                    ->Args({size, 1})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
            if (size < (4 << 10) || size == (8 << 10)) continue;
            benchmark::RegisterBenchmark(("oneshot/" + c.name).c_str(), BM_oneshot, c)
                ->Args({size, 1})
                ->ArgNames({"bytes", "threads"})
                ->UseRealTime();
        }
    }
}

// Rows <prefix>/<case>/bytes:N/threads:T for every case of the matrix at each size, 1 and 2 threads.
void register_every_case(const std::string &prefix, void (*fn)(benchmark::State &, const Case &),
                         std::initializer_list<int64_t> sizes, bool with_model_shapes = false) {
    std::vector<Case> cases = bench::all_cases();
    if (with_model_shapes) {
        for (const Case &c : bench::model_cases()) cases.push_back(c);
    }
    for (int64_t size : sizes) {
        for (int threads : {1, 2}) {
            for (const Case &c : cases) {
                benchmark::RegisterBenchmark((prefix + "/" + c.name).c_str(), fn, c)
                    ->Args({size, threads})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
        }
    }
}

// ESTIMATE and MEASURE plans of every case, 4 KiB to 64 MiB (bench/measure_plans.py).
void register_plan_modes() {
    register_every_case("plan_modes", BM_plan_modes,
                        {int64_t{4} << 10, int64_t{32} << 10, int64_t{128} << 10, int64_t{2} << 20, int64_t{64} << 20});
}

// Every case of the matrix and the model shapes at 256 B to 64 MiB, 1 and 2 threads, under two
// sets of switch points.
void register_switch_points(const std::string &spec) {
    g_compare_points = detail::switch_points();
    set_switch_points_from(spec, &g_compare_points);
    register_every_case("switch_points", BM_switch_points,
                        {int64_t{256}, int64_t{1} << 10, int64_t{2} << 10, int64_t{4} << 10, int64_t{8} << 10,
                         int64_t{32} << 10, int64_t{128} << 10, int64_t{512} << 10, int64_t{1} << 20, int64_t{2} << 20,
                         int64_t{4} << 20, int64_t{8} << 20, int64_t{16} << 20, int64_t{32} << 20, int64_t{64} << 20},
                        /*with_model_shapes=*/true);
}

int register_all() {
    const char *const kFixedCostVariants[] = {"plan", "oneshot", "oneshot_uncached", "xnnpack", "memcpy"};
    for (int v = 0; v < 5; v++) {
        benchmark::RegisterBenchmark((std::string("fixed_cost/") + kFixedCostVariants[v] + "/bytes:64").c_str(),
                                     BM_fixed_cost, v);
    }
    register_small_tensors();
    register_plan_modes();
    for (const Case &c : bench::all_cases()) {
        if (c.name != "D2S_NHWC_DCR_f32_C16_b2" && c.name != "D2S_NCHW_CRD_f32_C3_b2" &&
            c.name != "S2D_NCHW_DCR_u8_C16_b2")
            continue;
        for (int64_t size : {32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20}) {
            for (int parallel : {0, 1}) {
                benchmark::RegisterBenchmark(("threshold/" + c.name).c_str(), BM_threshold, c)
                    ->Args({size, parallel})
                    ->ArgNames({"bytes", "parallel"})
                    ->UseRealTime();
            }
        }
    }
    for (int64_t size : bench::kSizes) {
        for (int threads : {1, 2}) {
            benchmark::RegisterBenchmark("memcpy", BM_memcpy)
                ->Args({size, threads})
                ->ArgNames({"bytes", "threads"})
                ->UseRealTime();
        }
#if defined(__x86_64__)
        benchmark::RegisterBenchmark("vector_copy", BM_vector_copy)->Args({size})->ArgNames({"bytes"})->UseRealTime();
        benchmark::RegisterBenchmark("deinterleave_ceiling", BM_deinterleave_ceiling)
            ->Args({size})
            ->ArgNames({"bytes"})
            ->UseRealTime();
#endif
        for (const Case &c : bench::all_cases()) {
            for (int threads : {1, 2}) {
                benchmark::RegisterBenchmark(("spacedepth/" + c.name).c_str(), BM_spacedepth, c)
                    ->Args({size, threads})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
                if (bench::eigen_applies(c)) {
                    benchmark::RegisterBenchmark(("eigen/" + c.name).c_str(), BM_peer<bench::eigen_peer>, c)
                        ->Args({size, threads})
                        ->ArgNames({"bytes", "threads"})
                        ->UseRealTime();
                }
                if (bench::xnnpack_applies(c)) {
                    benchmark::RegisterBenchmark(("xnnpack/" + c.name).c_str(), BM_peer<bench::xnnpack_peer>, c)
                        ->Args({size, threads})
                        ->ArgNames({"bytes", "threads"})
                        ->UseRealTime();
                }
            }
            if (size <= (2 << 20)) {  // the scalar loop takes seconds per call beyond cache
                benchmark::RegisterBenchmark(("naive/" + c.name).c_str(), BM_peer<naive_peer>, c)
                    ->Args({size, 1})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
        }
        if (size == (128 << 10) || size == (2 << 20)) {
            for (const Case &c : bench::all_cases()) {
                for (bool shuffle : {false, true}) {
                    benchmark::RegisterBenchmark(((shuffle ? "shuffle/" : "halide/") + c.name).c_str(), BM_row_kind, c,
                                                 shuffle)
                        ->Args({size, 1})
                        ->ArgNames({"bytes", "threads"})
                        ->UseRealTime();
                }
            }
        }
        for (const Case &c : bench::model_cases()) {
            auto add = [&](const char *impl, void (*fn)(benchmark::State &, const Case &)) {
                benchmark::RegisterBenchmark(("model/" + std::string(impl) + "/" + c.name).c_str(), fn, c)
                    ->Args({size, 1})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            };
            add("spacedepth", BM_spacedepth);
            if (bench::eigen_applies(c)) add("eigen", BM_peer<bench::eigen_peer>);
            if (bench::xnnpack_applies(c)) add("xnnpack", BM_peer<bench::xnnpack_peer>);
        }
        for (const Case &c : bench::rank_cases()) {
            for (int threads : {1, 2}) {
                benchmark::RegisterBenchmark(("rank/spacedepth/" + c.name).c_str(), BM_spacedepth, c)
                    ->Args({size, threads})
                    ->ArgNames({"bytes", "threads"})
                    ->UseRealTime();
            }
        }
    }
    return 0;
}

// ---- Shape classes (`--shapes FILE`): the tuner's and the schedule comparison's measurements.
// Each class of bench/shape_classes.json runs as shape/<class>/<schedule>, with its own memcpy
// yardstick, for every schedule this binary has:
//   manual | tuned   the library as built (tuned when a tuning database applied to this CPU)
//   manual, adams2019, mullapudi2016, li2018   (SPACEDEPTH_SCHEDULE_COMPARISON builds) the same
//                    generator with the hand schedules and no database, or with one of Halide's
//                    autoschedulers, run on the library's own views; each checked against the
//                    library's output before it is timed.

struct Schedule {
    std::string name;
    const detail::KernelTable *kernels;  // null: the library's own
    bool default_switch_points;          // runtime/switch_points.h's defaults rather than the tuned ones
};

std::vector<Schedule> schedules() {
    std::vector<Schedule> list;
    const bool tuned = !detail::tuning_info().database.empty();
    list.push_back({tuned ? "tuned" : "manual", nullptr, false});
#if SPACEDEPTH_SCHEDULE_COMPARISON
    for (const ComparisonSchedule &c : kComparisonSchedules) {
        if (!tuned && std::string(c.name) == "manual") continue;  // the library is the manual one
        list.push_back({c.name, &c.kernels, true});
    }
#endif
    return list;
}

// A name from the shape classes file, parsed by the library's own *_from_name.
template <typename E>
E from_name(const std::string &name, bool (*parse)(const std::string &, E *), const char *what) {
    E value;
    if (!parse(name, &value)) throw std::runtime_error(std::string("unknown ") + what + " '" + name + "'");
    return value;
}

struct ShapeClass {
    Case c;
    int64_t bytes;
    int threads;
};

std::vector<ShapeClass> read_shape_classes(const std::string &path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot read " + path);
    const nlohmann::json doc = nlohmann::json::parse(file);
    std::vector<ShapeClass> classes;
    for (const nlohmann::json &j : doc.at("classes")) {
        ShapeClass sc;
        Case &c = sc.c;
        c.name = j.at("name").get<std::string>();
        c.op = from_name(j.at("op").get<std::string>(), op_from_name, "op");
        c.order = from_name(j.at("order").get<std::string>(), order_from_name, "order");
        c.layout = from_name(j.at("layout").get<std::string>(), layout_from_name, "layout");
        c.out_layout = from_name(j.value("out_layout", std::string(layout_name(c.layout))), layout_from_name, "layout");
        c.dtype = from_name(j.at("dtype").get<std::string>(), dtype_from_name, "dtype");
        c.small_channels = j.at("channels").get<int64_t>();
        c.bh = j.at("block").at(0).get<int64_t>();
        c.bw = j.at("block").at(1).get<int64_t>();
        sc.bytes = j.at("bytes").get<int64_t>();
        sc.threads = j.value("threads", 0);
        classes.push_back(sc);
    }
    return classes;
}

void BM_shape(benchmark::State &state, const ShapeClass &sc, const Schedule &sched) {
    auto s = make_setup(sc.c, sc.bytes, sc.threads);
    detail::DeviceCall call;
    call.kernel_overrides = sched.kernels;
    const detail::SwitchPoints saved = detail::switch_points();
    if (sched.default_switch_points) detail::set_switch_points(detail::SwitchPoints{});
    const bool own = sched.kernels == nullptr;
    if (Status st = detail::run_on(s->params, s->in, s->out, call); !st.ok()) {
        // An autoscheduled kernel refuses views its splits do not fit (bench/RESULTS.md).
        state.SkipWithError(st.message().c_str());
    } else if (!own && !agrees_with_spacedepth(state, *s, [&] { detail::run_on(s->params, s->in, s->out, call); })) {
        // reported by agrees_with_spacedepth
    } else {
        state.SetLabel(describe_call(s->params, s->in, s->out));  // the kernel family and width (tune.py)
        // A fixed iteration count (register_shapes): one call per row, so the yardstick is
        // timed right before and right after it.
        const MemcpyYardstick before = yardstick(*s, std::max(sc.threads, 2));
        for (auto _ : state) {
            detail::run_on(s->params, s->in, s->out, call);
            benchmark::DoNotOptimize(s->dst->data());
        }
        record_yardstick(state, before, yardstick(*s, std::max(sc.threads, 2)));
        finish(state, s->bytes);
    }
    detail::set_switch_points(saved);
}

// A fixed iteration count per class, about `seconds` at 10 GB/s, at least 3: Google Benchmark's
// own estimate calls the function several times, each with its setup and memcpy yardstick, which
// made a 16 KiB class take 1.4 s instead of 0.1 s.
void register_shapes(const std::string &path, double seconds) {
    const std::vector<Schedule> list = schedules();
    for (const ShapeClass &sc : read_shape_classes(path)) {
        const auto iterations =
            static_cast<benchmark::IterationCount>(std::max(3.0, seconds * 1e10 / (2.0 * sc.bytes)));
        for (const Schedule &sched : list) {
            benchmark::RegisterBenchmark(("shape/" + sc.c.name + "/" + sched.name).c_str(), BM_shape, sc, sched)
                ->Iterations(iterations)
                ->UseRealTime();
        }
    }
}

// `--print_plans` (with --shapes): each class's plan (kernel family, width, loop nest, serial or
// parallel) under the current switch points, as JSON; the tuner skips candidates that change
// no plan and compares only the classes whose kernels a candidate changes.
void print_shape_plans(const std::string &path) {
    nlohmann::json plans;
    for (const ShapeClass &sc : read_shape_classes(path)) {
        plans[sc.c.name] = planned_call(sc.c, sc.bytes, sc.threads);
    }
    std::cout << plans.dump(1) << "\n";
}

// `--cases_json` prints the case matrix for bench/peers.py, so both harnesses run the same rows,
// and the rank cases (rank_cases, with their rank and block depth) apart from it.
nlohmann::json case_json(const Case &c) {
    // The single-thread plan at each size (kernel family and normalised loop nest), which
    // bench/results_table.py uses to say why a case misses its target, and the input's logical
    // dims there (bench/instruction_counts.py makes its tensors from them).
    nlohmann::json plans, input_dims;
    for (int64_t bytes : bench::kSizes) {
        plans[std::to_string(bytes)] = planned_call(c, bytes, 1);
        const CaseDims d = case_dims(c, bytes);
        const Dims &in = c.op == Op::SpaceToDepth ? d.space : d.deep;
        input_dims[std::to_string(bytes)] = std::vector<int64_t>(in.begin(), in.end());
    }
    nlohmann::json j = bench::describe(c);
    j["plans"] = plans;
    j["input_dims"] = input_dims;
    return j;
}

void print_cases_json() {
    nlohmann::json cases = nlohmann::json::array(), rank_cases = nlohmann::json::array();
    for (const Case &c : bench::all_cases()) cases.push_back(case_json(c));
    for (const Case &c : bench::rank_cases()) rank_cases.push_back(case_json(c));
    std::cout << nlohmann::json{{"cases", cases}, {"rank_cases", rank_cases}, {"sizes", bench::kSizes}}.dump(1) << "\n";
}

}  // namespace

int main(int argc, char **argv) {
    std::string shapes, compare_points;
    double shape_seconds = 0.05;
    bool plans_only = false;
    int kept = 1;
    try {
        for (int i = 1; i < argc; i++) {
            const std::string arg = argv[i];
            if (arg == "--cases_json") {
                print_cases_json();
                return 0;
            } else if (arg.rfind("--shapes=", 0) == 0) {
                shapes = arg.substr(9);
            } else if (arg == "--print_plans") {
                plans_only = true;
            } else if (arg.rfind("--shape_seconds=", 0) == 0) {
                shape_seconds = std::stod(arg.substr(16));
            } else if (arg.rfind("--switch_points=", 0) == 0) {
                detail::SwitchPoints points = detail::switch_points();
                set_switch_points_from(arg.substr(16), &points);
                detail::set_switch_points(points);
            } else if (arg.rfind("--compare_switch_points=", 0) == 0) {
                compare_points = arg.substr(24);
            } else {
                if (arg.rfind("--benchmark_min_time=", 0) == 0) g_min_time = std::stod(arg.substr(21));
                argv[kept++] = argv[i];
            }
        }
        argc = kept;
        if (plans_only) {
            if (shapes.empty()) throw std::runtime_error("--print_plans needs --shapes=FILE");
            print_shape_plans(shapes);
            return 0;
        }
        if (!compare_points.empty()) {
            register_switch_points(compare_points);
        } else {
            shapes.empty() ? register_all() : (register_shapes(shapes, shape_seconds), 0);
        }
    } catch (const std::exception &e) {
        std::cerr << "spacedepth_bench: " << e.what() << "\n";
        return 2;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
