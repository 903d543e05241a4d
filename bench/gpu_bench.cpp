// The GPU bench (bench/gpu_check.sh runs it on a GPU machine): both ops x both orders x NHWC,
// NCHW and NCHW_VECT_C (and the fused NCHW -> NHWC conversion) x 1-, 2- and 4-byte elements at
// 4 MiB, 64 MiB and 1 GiB, in device memory, each beside a device-to-device copy of the same
// bytes timed in the same run. Where the build has the CUDA schedule variants
// (SPACEDEPTH_CUDA_VARIANTS=ON), each variant of the case's kernel family and width is timed the
// same way, so the best one per class can go into the CUDA tuning database.
//
// Method (the device README's METHOD.md): CUDA events on one stream around back-to-back calls,
// after warm-up calls, the median of several samples; inputs rotate among enough buffer sets to
// exceed the L2 cache (60 MB on an H200); random input, the output poisoned before the checked
// call and compared byte for byte with the CPU library's output of the same input.
//
// Output: one JSON line per timed kernel (stdout and --json FILE), then a summary table.
#include "bench/cases.h"
#include "runtime/call.h"
#include "spacedepth/spacedepth.h"
#include "tests/harness.h"
#include "tools/cuda_driver.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#define SPACEDEPTH_CUDA_VARIANT(family, bytes, name, variant, tuning) \
    extern "C" int name(void const *, struct halide_buffer_t *, bool, struct halide_buffer_t *);
#include "contract/kernels_cuda_variants.inc"
#undef SPACEDEPTH_CUDA_VARIANT

namespace {

using namespace spacedepth;
namespace sd = spacedepth::detail;

struct Variant {
    std::string name, tuning;
    KernelFamily family;
    int width;
    KernelFn fn;
};

const std::vector<Variant> &variants() {
    static const std::vector<Variant> v = {
#define SPACEDEPTH_CUDA_VARIANT(family, bytes, name, variant, tuning) \
    {variant, tuning, KernelFamily::family, bytes, name},
#include "contract/kernels_cuda_variants.inc"
#undef SPACEDEPTH_CUDA_VARIANT
    };
    return v;
}

cuda_driver::Driver &d() { return cuda_driver::driver(); }

void check(int rc, const char *what) {
    if (rc != 0) {
        const char *s = nullptr;
        if (d().cuGetErrorString) d().cuGetErrorString(rc, &s);
        throw std::runtime_error(std::string(what) + " failed: CUDA error " + std::to_string(rc) + " (" +
                                 (s ? s : "?") + ")");
    }
}

struct DeviceBuffer {
    uint64_t ptr = 0;
    explicit DeviceBuffer(size_t bytes) { check(d().cuMemAlloc(&ptr, std::max<size_t>(bytes, 1)), "cuMemAlloc"); }
    ~DeviceBuffer() {
        if (ptr) d().cuMemFree(ptr);
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    void *get() const { return reinterpret_cast<void *>(ptr); }
};

// The kernel plan the runtime makes for a call on CUDA (the planner's own entry, as a CUDA
// plan would be made): its family and width pick the variants.
sd::KernelPlan cuda_plan(const Params &p, const Tensor &in, const Tensor &out) {
    sd::PlannedCall planned;
    const Status s = sd::plan_call(testing_support::as_c(p, in.dims.ndim()), testing_support::as_c(in),
                                   testing_support::as_c(out), Device::Cuda, &planned, sd::PlanMode{});
    if (!s.ok()) throw std::runtime_error("invalid bench case: " + s.message());
    return planned.plan;
}

struct Timing {
    double median_ms = 0, min_ms = 0, max_ms = 0;
};

// Median over `samples` of (events around `calls` back-to-back launches) / calls; launch(i)
// queues call i on the stream.
template <typename F>
Timing time_on_stream(void *stream, int samples, int calls, F launch) {
    void *start = nullptr, *stop = nullptr;
    check(d().cuEventCreate(&start, 0), "cuEventCreate");
    check(d().cuEventCreate(&stop, 0), "cuEventCreate");
    for (int i = 0; i < 3; i++) launch(i);  // warm-up: module load, first-touch
    check(d().cuStreamSynchronize(stream), "warm-up");
    std::vector<double> ms;
    for (int s = 0; s < samples; s++) {
        check(d().cuEventRecord(start, stream), "cuEventRecord");
        for (int i = 0; i < calls; i++) launch(i);
        check(d().cuEventRecord(stop, stream), "cuEventRecord");
        check(d().cuEventSynchronize(stop), "cuEventSynchronize");
        float t = 0;
        check(d().cuEventElapsedTime(&t, start, stop), "cuEventElapsedTime");
        ms.push_back(t / calls);
    }
    d().cuEventDestroy(start);
    d().cuEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

uint64_t splitmix(uint64_t &x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

bench::Case make_case(Op op, Order order, Layout layout, Layout out_layout, DType dtype, int64_t channels, int64_t b) {
    bench::Case c;
    c.op = op;
    c.order = order;
    c.layout = layout;
    c.out_layout = out_layout;
    c.dtype = dtype;
    c.small_channels = channels;
    c.bh = c.bw = b;
    c.name = std::string(op == Op::DepthToSpace ? "D2S" : "S2D") + "_" + layout_name(layout) +
             (out_layout != layout ? std::string("_to_") + layout_name(out_layout) : "") + "_" + order_name(order) +
             "_" + dtype_name(dtype) + "_C" + std::to_string(channels) + "_b" + std::to_string(b);
    return c;
}

// The matrix: op x order x layout x 1/2/4 bytes (NCHW_VECT_C: int8), 64 channels on the space
// side, block 2; the fused NCHW -> NHWC D2S; and model shapes with few channels.
std::vector<bench::Case> gpu_cases(bool models) {
    std::vector<bench::Case> cases;
    for (Op op : {Op::DepthToSpace, Op::SpaceToDepth})
        for (Order order : {Order::DCR, Order::CRD}) {
            for (Layout l : {Layout::NHWC, Layout::NCHW})
                for (DType t : {DType::UInt8, DType::Float16, DType::Float32})
                    cases.push_back(make_case(op, order, l, l, t, 64, 2));
            cases.push_back(make_case(op, order, Layout::NCHW_VECT_C, Layout::NCHW_VECT_C, DType::Int8, 64, 2));
        }
    for (DType t : {DType::UInt8, DType::Float16, DType::Float32})
        cases.push_back(make_case(Op::DepthToSpace, Order::DCR, Layout::NCHW, Layout::NHWC, t, 64, 2));
    if (models) {
        // ESPCN-style pixel_shuffle (3 channels, blocks 2-4), YOLO's S2D focus (3 -> 12), 27 channels.
        for (int64_t b : {2, 3, 4}) {
            cases.push_back(make_case(Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 3, b));
            cases.push_back(make_case(Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float16, 3, b));
        }
        cases.push_back(make_case(Op::SpaceToDepth, Order::DCR, Layout::NCHW, Layout::NCHW, DType::Float16, 3, 2));
        cases.push_back(make_case(Op::SpaceToDepth, Order::DCR, Layout::NHWC, Layout::NHWC, DType::UInt8, 3, 2));
        cases.push_back(make_case(Op::DepthToSpace, Order::DCR, Layout::NHWC, Layout::NHWC, DType::Float32, 27, 2));
        cases.push_back(make_case(Op::DepthToSpace, Order::CRD, Layout::NCHW, Layout::NCHW, DType::Float32, 27, 3));
    }
    return cases;
}

struct Row {
    std::string case_name, variant;
    int64_t bytes;
    double ratio;
    bool correct;
};

int bench_main(int argc, char **argv) {
    CLI::App app{"spacedepth GPU bench: kernels in device memory against a device-to-device copy (CUDA events)"};
    std::vector<int64_t> sizes_mib = {1024, 64, 4};  // the largest first: the 1 GiB targets matter most
    int samples = 9;
    std::string json_path, filter;
    bool no_variants = false, models = false;
    app.add_option("--sizes", sizes_mib, "tensor sizes in MiB (each tensor)")
        ->delimiter(',')
        ->check(CLI::Range(1, 8192));
    app.add_option("--samples", samples, "timed samples per kernel; the median is reported")
        ->check(CLI::Range(1, 1000));
    app.add_option("--json", json_path, "also write the JSON lines to this file");
    app.add_option("--filter", filter, "only cases whose name contains this");
    app.add_flag("--no-variants", no_variants, "time only the built-in schedule");
    app.add_flag("--models", models, "add model shapes with few channels (3, 27) and blocks 2-4");
    CLI11_PARSE(app, argc, argv);

    if (!d().usable()) {
        std::fprintf(stderr, "gpu_bench: %s\n", d().why_not.c_str());
        return 2;
    }
    std::ofstream json_file;
    if (!json_path.empty()) json_file.open(json_path, std::ios::app);
    auto emit = [&](const nlohmann::json &j) {
        const std::string line = j.dump();
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        if (json_file) json_file << line << "\n" << std::flush;
    };
    int sms = 0, l2 = 0;
    d().cuDeviceGetAttribute(&sms, 16, 0);  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    d().cuDeviceGetAttribute(&l2, 38, 0);   // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
    size_t free_bytes = 0, total_bytes = 0;
    d().cuMemGetInfo(&free_bytes, &total_bytes);
    emit({{"kind", "device"},
          {"name", d().device_name},
          {"sms", sms},
          {"l2_bytes", l2},
          {"memory_bytes", total_bytes},
          {"variants_built", variants().size()}});

    void *stream = nullptr;
    check(d().cuStreamCreate(&stream, 0), "cuStreamCreate");
    std::vector<Row> rows;
    int failures = 0;
    try {
        for (int64_t mib : sizes_mib) {
            const int64_t size = mib << 20;
            // Enough buffer sets that in + out of all of them exceed L2 several times over.
            const int sets = static_cast<int>(std::clamp<int64_t>((int64_t{512} << 20) / (2 * size), 1, 16));
            std::vector<std::unique_ptr<DeviceBuffer>> ins, outs;
            for (int i = 0; i < sets; i++) {
                ins.push_back(std::make_unique<DeviceBuffer>(size));
                outs.push_back(std::make_unique<DeviceBuffer>(size));
            }
            std::vector<uint8_t> host_in(size), host_out(size), got(size);
            uint64_t seed = 0x5EED0000u + static_cast<uint64_t>(mib);
            for (int64_t i = 0; i + 8 <= size; i += 8) {
                const uint64_t r = splitmix(seed);
                std::memcpy(&host_in[i], &r, 8);
            }
            for (int i = 0; i < sets; i++) check(d().cuMemcpyHtoD(ins[i]->ptr, host_in.data(), size), "cuMemcpyHtoD");
            // The copy the kernels are measured against: the same bytes, the same buffer sets.
            const int calls = static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / size, 2, 64));

            for (const bench::Case &c : gpu_cases(models && mib == 64)) {
                if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
                Dims space, deep;
                int64_t exact = 0;
                c.dims(size, &space, &deep, &exact);
                const bool s2d = c.op == Op::SpaceToDepth;
                const Params p{c.op, c.block(), c.order, 0};
                auto tensor = [&](void *data, Layout l, const Dims &dims) {
                    return Tensor::dense(data, c.dtype, l, dims);
                };
                const Tensor host_in_t = tensor(host_in.data(), c.layout, s2d ? space : deep);
                const Tensor host_out_t = tensor(host_out.data(), c.out_layout, s2d ? deep : space);
                if (Status s = run(p, host_in_t, host_out_t); !s.ok())
                    throw std::runtime_error(c.name + ": " + s.message());
                const sd::KernelPlan plan = cuda_plan(p, host_in_t, host_out_t);
                const Timing copy = time_on_stream(stream, samples, calls, [&](int i) {
                    check(d().cuMemcpyDtoDAsync(outs[i % sets]->ptr, ins[i % sets]->ptr, exact, stream),
                          "cuMemcpyDtoDAsync");
                });

                std::vector<const Variant *> candidates = {nullptr};  // nullptr: the built-in schedule
                if (!no_variants) {
                    for (const Variant &v : variants()) {
                        if (v.family == plan.family && v.width == plan.width) candidates.push_back(&v);
                    }
                }
                for (const Variant *v : candidates) {
                    sd::KernelTable overrides{};
                    if (v != nullptr) {
                        overrides[static_cast<int>(v->family)][kernel_width_index(v->width)] = v->fn;
                    }
                    sd::DeviceCall call{Device::Cuda, d().context, stream, v != nullptr ? &overrides : nullptr};
                    auto call_on = [&](int set) {
                        const Tensor in = tensor(ins[set]->get(), c.layout, s2d ? space : deep);
                        const Tensor out = tensor(outs[set]->get(), c.out_layout, s2d ? deep : space);
                        return sd::run_on(p, in, out, call);
                    };
                    // Correctness: poisoned output, one call, every byte against the CPU's output.
                    check(d().cuMemsetD8(outs[0]->ptr, 0xA5, size), "cuMemsetD8");
                    Status st = call_on(0);
                    check(d().cuStreamSynchronize(stream), "the checked call");
                    std::string error = st.ok() ? "" : st.message();
                    int64_t first_wrong = -1;
                    if (st.ok()) {
                        check(d().cuMemcpyDtoH(got.data(), outs[0]->ptr, exact), "cuMemcpyDtoH");
                        if (std::memcmp(got.data(), host_out.data(), exact) != 0) {
                            first_wrong =
                                std::mismatch(got.begin(), got.begin() + exact, host_out.begin()).first - got.begin();
                        }
                    }
                    const bool correct = st.ok() && first_wrong < 0;
                    Timing t{};
                    if (st.ok()) {
                        t = time_on_stream(stream, samples, calls, [&](int i) {
                            if (Status s = call_on(i % sets); !s.ok()) throw std::runtime_error(s.message());
                        });
                    }
                    const double gbps = t.median_ms > 0 ? 2.0 * exact / (t.median_ms * 1e6) : 0;
                    const double copy_gbps = 2.0 * exact / (copy.median_ms * 1e6);
                    const double ratio = t.median_ms > 0 ? copy.median_ms / t.median_ms : 0;
                    nlohmann::json j = bench::describe(c);
                    j.update({{"kind", "bench"},
                              {"bytes", exact},
                              {"plan", sd::describe_plan(plan)},
                              {"variant", v != nullptr ? v->name : "default"},
                              {"tuning", v != nullptr ? v->tuning : ""},
                              {"ms", t.median_ms},
                              {"ms_min", t.min_ms},
                              {"ms_max", t.max_ms},
                              {"gbps", gbps},
                              {"copy_ms", copy.median_ms},
                              {"copy_gbps", copy_gbps},
                              {"ratio_to_copy", ratio},
                              {"buffer_sets", sets},
                              {"calls_per_sample", calls},
                              {"correct", correct}});
                    if (!error.empty()) j["error"] = error;
                    if (first_wrong >= 0) {
                        j["first_wrong_byte"] = first_wrong;
                        j["got"] = got[first_wrong];
                        j["want"] = host_out[first_wrong];
                    }
                    emit(j);
                    failures += !correct;
                    rows.push_back({c.name, v != nullptr ? v->name : "default", exact, ratio, correct});
                }
            }
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gpu_bench: %s\n", e.what());
        emit({{"kind", "error"}, {"message", e.what()}});
        return 1;
    }
    d().cuStreamDestroy(stream);

    // Summary: per size, the built-in schedule's ratios, and how often a variant beat it by > 3 %.
    std::printf("\n%-8s %6s %8s %8s %8s %10s %8s\n", "size", "cases", "min", "median", "max", "variant>3%", "wrong");
    std::map<int64_t, std::vector<const Row *>> by_size;
    for (const Row &r : rows) by_size[r.bytes >> 20].push_back(&r);
    for (const auto &[mib, list] : by_size) {
        std::vector<double> ratios;
        std::map<std::string, double> defaults;
        int wrong = 0, better = 0;
        for (const Row *r : list) {
            wrong += !r->correct;
            if (r->variant == "default") {
                ratios.push_back(r->ratio);
                defaults[r->case_name] = r->ratio;
            }
        }
        for (const Row *r : list) {
            if (r->variant != "default" && r->ratio > 1.03 * defaults[r->case_name]) better++;
        }
        std::sort(ratios.begin(), ratios.end());
        if (ratios.empty()) continue;
        std::printf("%5lld MiB %6zu %8.3f %8.3f %8.3f %10d %8d\n", static_cast<long long>(mib), ratios.size(),
                    ratios.front(), ratios[ratios.size() / 2], ratios.back(), better, wrong);
    }
    std::printf("gpu_bench: %d wrong outputs\n", failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return bench_main(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "gpu_bench: an unknown exception\n");
    }
    return 1;
}
