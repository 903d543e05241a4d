// build/bin/spacedepth: the command-line tool (run / info / bench). Its contract is fixed in
// README.md, because other tooling calls it. Argument parsing: CLI11; JSON: nlohmann/json;
// .npy: xtensor's xnpy (tools/npy_io.cpp).
#include "spacedepth/spacedepth.h"
#include "tools/aligned_buffer.h"
#include "tools/array_layout.h"
#include "tools/cuda_driver.h"
#include "tools/memcpy_yardstick.h"
#include "tools/npy_io.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

namespace {

using namespace spacedepth;

// A usage or validation error: one line on stderr, exit 1, no output file.
struct CliError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct CallOptions {
    std::string op, block = "2", order = "DCR", layout = "NHWC", out_layout, dtype;
    int threads = 0;
};

// Every name the library has for E (its enums count from 0), for CLI11's checks.
template <typename E>
std::vector<std::string> names_of(const char *(*name)(E)) {
    std::vector<std::string> names;
    for (int i = 0; name(static_cast<E>(i)) != nullptr; i++) names.emplace_back(name(static_cast<E>(i)));
    return names;
}

constexpr int kMaxThreads = SD_MAX_THREADS;  // the most Halide's thread pool holds

void check_shape_count(const std::vector<int64_t> &shape) {
    if (shape.size() < 3 || shape.size() > 5) {
        throw CliError("--shape takes 3 to 5 values (N,C,W or N,C,H,W or N,C,D,H,W), got " +
                       std::to_string(shape.size()));
    }
}

// Whether text is one whole decimal integer in [lo, hi].
bool in_range(const std::string &text, int64_t lo, int64_t hi) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size() && v >= lo && v <= hi;
}

template <typename E>
E parse_name(const std::string &s, bool (*parse)(const std::string &, E *)) {
    E value{};
    parse(s, &value);  // CLI11 has checked the name against names_of()
    return value;
}

void add_call_options(CLI::App *cmd, CallOptions &o, bool op_required) {
    auto *op =
        cmd->add_option("--op", o.op, "space_to_depth or depth_to_space")->check(CLI::IsMember(names_of(op_name)));
    if (op_required) op->required();
    cmd->add_option("--block", o.block,
                    "block size B (square, at the input's spatial rank), BHxBW (rank 2) or BDxBHxBW (rank 3)")
        ->capture_default_str();
    cmd->add_option("--order", o.order, "DCR or CRD")
        ->check(CLI::IsMember(names_of(order_name)))
        ->capture_default_str();
    // The layouts' names and their spellings at ranks 1 and 3 (NWC, NCDHW, NCDHWc16, nChw16c, ...).
    const auto known_layout = [](const std::string &name) {
        Layout l;
        std::string all;
        for (const std::string &n : names_of(layout_name)) all += (all.empty() ? "" : ", ") + n;
        return layout_from_name(name, &l) ? std::string() : "layout '" + name + "' is not one of " + all;
    };
    cmd->add_option("--layout", o.layout,
                    "input layout: NHWC (channels last: NWC, NDHWC), NCHW (channels first: NCW, NCDHW), "
                    "NCHWc4/8/16 (blocked channels), NCHW_VECT_C")
        ->check(known_layout)
        ->capture_default_str();
    cmd->add_option("--out-layout", o.out_layout, "output layout (default: the input layout)")->check(known_layout);
    // A count over kMaxThreads is refused, not capped (set_num_threads refuses it too).
    cmd->add_option("--threads", o.threads, "0: library default, 1: caller's thread only, N: up to N (at most 256)")
        ->check(CLI::Validator(
            [](std::string &v) {
                return in_range(v, 0, kMaxThreads) ? std::string()
                                                   : "must be 0 to " + std::to_string(kMaxThreads) + ", got " + v;
            },
            "0-256"));
}

Layout parse_layout(const std::string &s) { return parse_name(s, layout_from_name); }

Params parse_params(const CallOptions &o) {
    Params p;
    p.op = parse_name(o.op, op_from_name);
    p.order = parse_name(o.order, order_from_name);
    p.threads = o.threads;
    // B, BHxBW or BDxBHxBW, each a whole 64-bit integer: a value too large for one is refused
    // (sscanf saturated it), a large one that fits is the library's to judge (and refuse).
    std::vector<int64_t> sizes;
    const std::string usage =
        "--block must be B, BHxBW or BDxBHxBW (for example 2, 2x3 or 2x2x2): got '" + o.block + "'";
    for (size_t start = 0; start <= o.block.size();) {
        const size_t x = std::min(o.block.find('x', start), o.block.size());
        int64_t v = 0;
        auto [end, ec] = std::from_chars(o.block.data() + start, o.block.data() + x, v);
        if (ec == std::errc::result_out_of_range) {
            throw CliError("--block: " + o.block.substr(start, x - start) + " does not fit a 64-bit integer");
        }
        if (ec != std::errc() || end != o.block.data() + x || x == start) throw CliError(usage);
        sizes.push_back(v);
        start = x + 1;
    }
    if (sizes.size() == 3) {
        p.block = Block(sizes[0], sizes[1], sizes[2]);
    } else if (sizes.size() == 2) {
        p.block = Block(sizes[0], sizes[1]);
    } else if (sizes.size() == 1) {
        p.block = Block(sizes[0]);
    } else {
        throw CliError(usage);
    }
    return p;
}

DType parse_dtype(const std::string &name) {
    DType d;
    if (!dtype_from_name(name, &d)) {
        throw CliError("unknown dtype '" + name + "'");
    }
    return d;
}

Dims logical_dims(const std::vector<int64_t> &s, Layout l, const std::string &path) {
    if (const std::string want = array_layout::misfit(s, l); !want.empty()) {
        std::string got;
        for (int64_t v : s) got += (got.empty() ? "" : ",") + std::to_string(v);
        throw CliError(path + ": shape [" + got + "] does not fit layout " + layout_name(l) + ", which needs " + want);
    }
    std::vector<int64_t> d = array_layout::logical_order(s, l);
    d[1] *= layout_lanes(l);
    return Dims(static_cast<int>(d.size()), d.data());
}

// The logical strides of a loaded array: a Fortran-order file is a strided view of its payload.
Dims logical_strides(const npy::Array &a, Layout l, const std::string &path) {
    const std::vector<int64_t> s = npy::strides(a);
    if (layout_lanes(l) > 1 && s.back() != 1) {
        throw CliError(path + ": a Fortran-order " + layout_name(l) +
                       " array does not keep a group's channels adjacent; save it with np.ascontiguousarray");
    }
    std::vector<int64_t> d = array_layout::logical_order(s, l);
    return Dims(static_cast<int>(d.size()), d.data());
}

std::string join(const int64_t *begin, const int64_t *end, const char *sep) {
    std::string s;
    for (const int64_t *v = begin; v != end; v++) s += (v == begin ? "" : sep) + std::to_string(*v);
    return s;
}

// The block's sizes at the call's spatial rank, outermost first.
std::vector<int64_t> block_sizes(const Params &p, int rank) {
    const Block &b = p.block;
    if (b.square) return std::vector<int64_t>(rank, b.w);
    const int64_t all[3] = {b.d, b.h, b.w};
    return std::vector<int64_t>(all + 3 - rank, all + 3);
}

// A call on dense tensors described by the options and the input's logical shape.
struct DenseCall {
    Params params;
    Layout in_layout, out_layout;
    DType dtype;
    Dims in_dims, out_dims;
};

DenseCall resolve_dense_call(const CallOptions &o, const std::vector<int64_t> &shape) {
    DenseCall c;
    c.params = parse_params(o);
    c.in_layout = parse_layout(o.layout);
    c.out_layout = o.out_layout.empty() ? c.in_layout : parse_layout(o.out_layout);
    c.dtype = parse_dtype(o.dtype.empty() ? "float32" : o.dtype);
    c.in_dims = Dims(static_cast<int>(shape.size()), shape.data());
    if (Status s = output_dims(c.params, c.in_dims, &c.out_dims); !s.ok()) throw CliError(s.message());
    return c;
}

int cmd_run(const CallOptions &o, const std::string &in_path, const std::string &out_path, bool force) {
    std::error_code same_error;
    if (!force && std::filesystem::equivalent(in_path, out_path, same_error)) {
        throw CliError("--out " + out_path + " is the input file: pass --force to replace it with the result");
    }
    const Params p = parse_params(o);
    const Layout in_layout = parse_layout(o.layout);
    const Layout out_layout = o.out_layout.empty() ? in_layout : parse_layout(o.out_layout);
    npy::Array in = npy::load(in_path);

    // The file's dtype (the library's policy, in npy::load), or --dtype of the same width.
    DType dtype = in.dtype;
    if (!o.dtype.empty()) {
        dtype = parse_dtype(o.dtype);
        if (dtype_size(dtype) != in.word_size) {
            throw CliError("--dtype " + o.dtype + " has " + std::to_string(dtype_size(dtype)) + " bytes, but " +
                           in_path + " holds " + in.descr + " (" + std::to_string(in.word_size) + " bytes)");
        }
    }
    const Dims in_dims = logical_dims(in.shape, in_layout, in_path);
    Dims out_dims;
    if (Status s = output_dims(p, in_dims, &out_dims); !s.ok()) {
        throw CliError(s.message());
    }
    npy::Array out;  // C order, in the input's dtype and byte order
    out.descr = in.descr;
    out.word_size = in.word_size;
    out.shape = array_layout::array_shape(out_dims.data(), out_dims.ndim(), out_layout);
    out.data.resize(in.data.size());
    Tensor tin = Tensor::dense(in.data.data(), dtype, in_layout, in_dims);
    tin.strides = logical_strides(in, in_layout, in_path);
    const Tensor tout = Tensor::dense(out.data.data(), dtype, out_layout, out_dims);
    if (Status s = run(p, tin, tout); !s.ok()) {
        throw CliError(s.message());
    }
    npy::save(out_path, out);
    return 0;
}

struct BenchResult {
    double seconds, memcpy_seconds;  // the call (through a plan, for the host), and the yardstick
    int64_t bytes;
    double oneshot_seconds = 0;  // the same call one-shot (run()), where measured
    double stream_seconds = 0;   // the streaming-store copy of the same bytes (host), where measured
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Times the call and a same-size memcpy alternately, in the same run: median over rounds of
// the mean time of a batch long enough to measure (about 20 ms).
template <typename F, typename G>
BenchResult time_pair(F kernel, G copy, int64_t bytes, int rounds) {
    using clock = std::chrono::steady_clock;
    auto batch = [](auto f, int reps) {
        const auto t0 = clock::now();
        for (int i = 0; i < reps; i++) f();
        return std::chrono::duration<double>(clock::now() - t0).count() / reps;
    };
    kernel();
    copy();
    const double one = std::max(batch(kernel, 1), 1e-7);
    const int reps = static_cast<int>(std::clamp(0.02 / one, 1.0, 100000.0));
    std::vector<double> k, m;
    for (int r = 0; r < rounds; r++) {
        k.push_back(batch(kernel, reps));
        m.push_back(batch(copy, reps));
    }
    return {median(k), median(m), bytes};
}

// Prints one bench result: GB/s of the call and of the yardstick copy, and their ratio.
void print_bench(const CallOptions &o, const std::vector<int64_t> &shape, const DenseCall &c, int64_t bytes,
                 const BenchResult &r, const std::string &yardstick_name, const std::string &variant, bool json) {
    const Params &p = c.params;
    const double gbps = 2.0 * bytes / r.seconds / 1e9, memcpy_gbps = 2.0 * bytes / r.memcpy_seconds / 1e9;
    const double stream_gbps = r.stream_seconds > 0 ? 2.0 * bytes / r.stream_seconds / 1e9 : 0.0;
    auto optional = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
    if (json) {
        nlohmann::json j = {
            {"op", o.op},
            {"order", o.order},
            {"layout", o.layout},
            {"out_layout", layout_name(c.out_layout)},
            {"dtype", dtype_name(c.dtype)},
            {"block", block_sizes(p, static_cast<int>(shape.size()) - 2)},
            {"shape", shape},
            {"threads", o.threads},
            {"bytes", bytes},
            {"seconds", r.seconds},
            {"memcpy_seconds", r.memcpy_seconds},
            {"oneshot_seconds", r.oneshot_seconds > 0 ? nlohmann::json(r.oneshot_seconds) : nlohmann::json()},
            {"gbps", gbps},
            {"memcpy_gbps", memcpy_gbps},
            {"memcpy", yardstick_name},
            {"ratio", gbps / memcpy_gbps},
            {"stream_gbps", optional(stream_gbps)},
            {"stream_ratio", optional(stream_gbps > 0 ? gbps / stream_gbps : 0.0)},
            {"variant", variant},
        };
        std::cout << j.dump() << "\n";
    } else {
        const std::vector<int64_t> block = block_sizes(p, static_cast<int>(shape.size()) - 2);
        std::printf("%s %s %s->%s %s block %s shape %s (%.1f KiB): %.2f GB/s, %s %.2f GB/s, ratio %.2f\n", o.op.c_str(),
                    o.order.c_str(), o.layout.c_str(), layout_name(c.out_layout), dtype_name(c.dtype),
                    join(block.data(), block.data() + block.size(), "x").c_str(),
                    join(shape.data(), shape.data() + shape.size(), ",").c_str(), bytes / 1024.0, gbps,
                    yardstick_name.c_str(), memcpy_gbps, gbps / memcpy_gbps);
        if (stream_gbps > 0) {
            std::printf("  streaming-store copy (same threads) %.2f GB/s, ratio %.2f\n", stream_gbps,
                        gbps / stream_gbps);
        }
        if (r.oneshot_seconds > 0) {
            std::printf("  per call: %.0f ns through a plan, %.0f ns one-shot\n", r.seconds * 1e9,
                        r.oneshot_seconds * 1e9);
        }
    }
}

int64_t call_bytes(const DenseCall &c) {
    int64_t count = 1;
    for (int64_t d : c.in_dims) count *= d;
    return count * dtype_size(c.dtype);
}

int cmd_bench(const CallOptions &o, const std::vector<int64_t> &shape, bool json, int rounds, bool measure,
              double time_limit_ms) {
    const DenseCall c = resolve_dense_call(o, shape);
    const Params &p = c.params;
    const int64_t bytes = call_bytes(c);
    AlignedBuffer src(bytes), dst(bytes), copy_dst(bytes);
    for (int64_t i = 0; i < bytes; i++) src.data()[i] = static_cast<uint8_t>(i * 131 + 7);
    const Tensor tin = Tensor::dense(src.data(), c.dtype, c.in_layout, c.in_dims);
    const Tensor tout = Tensor::dense(dst.data(), c.dtype, c.out_layout, c.out_dims);
    // The plan path (what a caller calling the same shape again gets), and the one-shot call.
    Plan plan;
    if (Status s = plan.create(p, tin, tout, PlanOptions{measure, time_limit_ms}); !s.ok()) throw CliError(s.message());
    if (Status s = plan.run(src.data(), dst.data()); !s.ok()) throw CliError(s.message());

    // The yardstick is the better of a 1-thread memcpy and one split over the threads the call
    // may use, so a multi-threaded call is not set against a single-stream copy.
    const int threads = p.threads > 0 ? p.threads : num_threads();
    int copy_threads = 1;
    if (threads > 1 && yardstick::memcpy_gbps(copy_dst.data(), src.data(), bytes, threads) >
                           yardstick::memcpy_gbps(copy_dst.data(), src.data(), bytes, 1)) {
        copy_threads = threads;
    }
    auto copy = [&] { yardstick::parallel_memcpy(copy_dst.data(), src.data(), bytes, copy_threads); };
    BenchResult r = time_pair([&] { plan.run(src.data(), dst.data()); }, copy, bytes, rounds);
    r.oneshot_seconds = time_pair([&] { run(p, tin, tout); }, copy, bytes, rounds).seconds;
    r.stream_seconds =
        time_pair([&] { yardstick::parallel_stream_copy(copy_dst.data(), src.data(), bytes, copy_threads); }, copy,
                  bytes, rounds)
            .seconds;
    print_bench(o, shape, c, bytes, r,
                "memcpy (" + std::to_string(copy_threads) + " thread" + (copy_threads > 1 ? "s)" : ")"),
                plan.describe(), json);
    return 0;
}

// The same on GPU 0 (--device cuda): device tensors, the kernel on the default stream of GPU 0's
// primary context, against a device-to-device copy of the same bytes (cuMemcpyDtoD, what
// cudaMemcpy device-to-device calls), each timed to completion (cuCtxSynchronize).
int cmd_bench_cuda(const CallOptions &o, const std::vector<int64_t> &shape, bool json, int rounds) {
    cuda_driver::Driver &d = cuda_driver::driver();
    if (!d.usable()) throw CliError("bench --device cuda: " + d.why_not);
    const DenseCall c = resolve_dense_call(o, shape);
    const Params &p = c.params;
    const int64_t bytes = call_bytes(c);
    std::vector<uint8_t> pattern(static_cast<size_t>(bytes));
    for (int64_t i = 0; i < bytes; i++) pattern[i] = static_cast<uint8_t>(i * 131 + 7);
    uint64_t src = 0, dst = 0, copy_dst = 0;
    if (d.cuMemAlloc(&src, bytes) != 0 || d.cuMemAlloc(&dst, bytes) != 0 || d.cuMemAlloc(&copy_dst, bytes) != 0 ||
        d.cuMemcpyHtoD(src, pattern.data(), bytes) != 0) {
        throw CliError("bench --device cuda: could not allocate or fill " + std::to_string(3 * bytes) +
                       " bytes on the GPU");
    }
    const Tensor tin = Tensor::dense(reinterpret_cast<void *>(src), c.dtype, c.in_layout, c.in_dims);
    const Tensor tout = Tensor::dense(reinterpret_cast<void *>(dst), c.dtype, c.out_layout, c.out_dims);
    const CudaStream stream{d.context, nullptr};
    if (Status s = run_cuda(p, tin, tout, stream); !s.ok()) throw CliError(s.message());
    d.cuCtxSynchronize();
    const BenchResult r = time_pair(
        [&] {
            run_cuda(p, tin, tout, stream);
            d.cuCtxSynchronize();
        },
        [&] {
            d.cuMemcpyDtoD(copy_dst, src, bytes);
            d.cuCtxSynchronize();
        },
        bytes, rounds);
    d.cuMemFree(src);
    d.cuMemFree(dst);
    d.cuMemFree(copy_dst);
    print_bench(o, shape, c, bytes, r, "device-to-device copy", "cuda kernel on " + d.device_name, json);
    return 0;
}

int cmd_info(const CallOptions &o, const std::vector<int64_t> &shape) {
    std::cout << build_info();
    if (!o.op.empty()) {
        if (shape.size() < 3 || shape.size() > 5) throw CliError("info: --shape N,C,[D,][H,]W is needed with --op");
        const DenseCall c = resolve_dense_call(o, shape);
        // Describe a call on dense tensors at far-apart, aligned addresses; describe_call only
        // validates and plans, it never touches tensor memory.
        void *const in_addr = reinterpret_cast<void *>(uintptr_t{1} << 44);
        void *const out_addr = reinterpret_cast<void *>(uintptr_t{1} << 45);
        const Tensor tin = Tensor::dense(in_addr, c.dtype, c.in_layout, c.in_dims);
        const Tensor tout = Tensor::dense(out_addr, c.dtype, c.out_layout, c.out_dims);
        std::cout << "call: " << describe_call(c.params, tin, tout) << "\n";
    }
    return 0;
}

int cli_main(int argc, char **argv) {
    CLI::App app{"spacedepth: SpaceToDepth and DepthToSpace kernels"};
    app.require_subcommand(1);
    app.failure_message(
        [](const CLI::App *, const CLI::Error &e) { return std::string("spacedepth: error: ") + e.what() + "\n"; });

    CallOptions run_o, bench_o, info_o;
    std::string in_path, out_path;
    auto *run_cmd = app.add_subcommand("run", "run an op on a .npy file (its rank gives the spatial rank: 1, 2 or 3)");
    add_call_options(run_cmd, run_o, true);
    run_cmd->add_option("--in", in_path, "input .npy")->required();
    run_cmd->add_option("--out", out_path, "output .npy (written only on success)")->required();
    bool force = false;
    run_cmd->add_flag("--force", force, "let --out name the input file (it is replaced with the result)");
    run_cmd->add_option("--dtype", run_o.dtype,
                        "override the file's dtype with one of the same width (bfloat16, qint8, ...)");

    // CLI11's help would say "x 3" for a minimum of three values: it takes 1 to 5, and
    // check_shape_count() says what is missing.
    std::vector<int64_t> bench_shape, info_shape;
    bool json = false;
    int rounds = 7;
    auto *bench_cmd = app.add_subcommand("bench", "GB/s of one call beside a same-size memcpy, in the same run");
    add_call_options(bench_cmd, bench_o, true);
    bench_cmd
        ->add_option("--shape", bench_shape, "the input's logical dims, 3 to 5 values: N,C,W or N,C,H,W or N,C,D,H,W")
        ->delimiter(',')
        ->expected(1, 5)
        ->type_name("N,C,[D,][H,]W")
        ->required();
    bench_cmd->add_option("--dtype", bench_o.dtype, "element type (default float32)");
    bench_cmd->add_option("--rounds", rounds, "timing rounds (median reported)")->check(CLI::PositiveNumber);
    bench_cmd->add_flag("--json", json, "print one JSON object");
    bool measure = false;
    std::string wisdom;
    bench_cmd->add_flag("--measure", measure, "a measured plan (SD_PLAN_MEASURE): the fastest of the candidates");
    int64_t time_limit_ms = 0;
    bench_cmd
        ->add_option("--time-limit", time_limit_ms,
                     "whole milliseconds --measure may spend (0: SD_PLAN_DEFAULT_TIME_LIMIT_MS, 5; at most 60000)")
        ->check(CLI::Validator(
            [](std::string &v) { return in_range(v, 0, 60000) ? std::string() : "must be 0 to 60000 ms, got " + v; },
            "0-60000"));
    bench_cmd->add_option("--wisdom", wisdom,
                          "a wisdom file: imported first if it exists, written back with what --measure found");
    std::string device = "cpu";
    bench_cmd->add_option("--device", device, "cpu, or cuda: device tensors on GPU 0 against a device-to-device copy")
        ->check(CLI::IsMember({"cpu", "cuda"}));

    auto *info_cmd = app.add_subcommand(
        "info", "version, kernels, targets, CPU features; with --op and --shape, the variant a call would use");
    add_call_options(info_cmd, info_o, false);
    info_cmd
        ->add_option("--shape", info_shape, "the input's logical dims, 3 to 5 values: N,C,W or N,C,H,W or N,C,D,H,W")
        ->delimiter(',')
        ->expected(1, 5)
        ->type_name("N,C,[D,][H,]W");
    info_cmd->add_option("--dtype", info_o.dtype, "element type (default float32)");

    try {
        app.parse(argc, argv);
        if (run_o.threads || bench_o.threads) {
            if (Status s = set_num_threads(std::max(run_o.threads, bench_o.threads)); !s.ok()) {
                throw CliError(s.message());
            }
        }
        if (*run_cmd) return cmd_run(run_o, in_path, out_path, force);
        if (*bench_cmd) {
            check_shape_count(bench_shape);
            if (!wisdom.empty() && std::ifstream(wisdom).good()) {
                if (Status s = import_wisdom(wisdom); !s.ok()) throw CliError(s.message());
            }
            const int rc = device == "cuda" ? cmd_bench_cuda(bench_o, bench_shape, json, rounds)
                                            : cmd_bench(bench_o, bench_shape, json, rounds, measure,
                                                        static_cast<double>(time_limit_ms));
            if (!wisdom.empty()) {
                if (Status s = export_wisdom(wisdom); !s.ok()) throw CliError(s.message());
            }
            return rc;
        }
        if (*info_cmd) return cmd_info(info_o, info_shape);
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    } catch (const std::exception &e) {  // CliError, npy::Error, std::bad_alloc
        std::fprintf(stderr, "spacedepth: error: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return cli_main(argc, argv);
    } catch (const std::exception &e) {  // the commands report their own errors; this is a last resort
        std::fprintf(stderr, "spacedepth: error: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "spacedepth: error: an unknown exception\n");
    }
    return 1;
}
