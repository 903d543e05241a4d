// Measured plans (SD_PLAN_MEASURE, as FFTW_MEASURE and HPTT's measured plans): the rules' plan
// and every distinct alternative the planner can make for the view (kernel family, the AVX2 path
// beside AVX-512, loop order; serial or parallel stays the rules') are timed on scratch buffers
// of the call's shape, round-robin so that drift hits them alike, and the fastest is kept if it
// beats the rules' plan by more than the noise twice: among all, and again alone.
#include "runtime/measure.h"
#include "runtime/isa.h"
#include "runtime/switch_points.h"
#include "runtime/wisdom.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace spacedepth::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Another plan replaces the rules' one only when, round by round, it is this much faster (the
// median of its paired time ratios). On the 2-core AMD EPYC VM a 3 % bar on the fastest call
// let through an alternative that then ran slower in the benchmark (D2S NHWC DCR f32 C3, 128 KiB,
// the AVX2 path: 2.51 against 2.59 us at create, 3.5 against 2.7-3.3 us per call afterwards).
constexpr double kMinGain = 0.05;
// Each timed sample runs a plan for at least this long (several calls of a small tensor), so
// that the clock's resolution and the loop's cost stay below the gain above.
constexpr double kMinSampleNs = 20000;
constexpr int kMaxRounds = 25;
constexpr int kConfirmRounds = 9;
// Candidates slower than this, relative to the rules' plan, are not timed further.
constexpr double kMaxSlowdown = 2;
// A lower bound on a call's time from its bytes (those read plus those written, at 50 GB/s):
// tensors whose timing cannot fit the limit are not given scratch memory at all.
constexpr double kFastestBytesPerNs = 50;
constexpr int64_t kMaxScratchBytes = int64_t{1} << 30;  // per tensor

// Scratch input and output of a call's shape: each tensor's data on a page boundary, with its
// lowest byte inside its block. Plans are made for null data pointers, so the caller's addresses
// are not known here; page-aligned buffers are what the benchmark and aligned allocators give.
class ScratchTensors {
public:
    uint8_t *in = nullptr, *out = nullptr;
    ScratchTensors() = default;
    ScratchTensors(const ScratchTensors &) = delete;
    ScratchTensors &operator=(const ScratchTensors &) = delete;
    ~ScratchTensors() {
        std::free(in_block_);
        std::free(out_block_);
    }
    bool allocate(const Problem &p) {
        return (in = place(p.in_low_bytes, p.in_span_bytes, &in_block_)) != nullptr &&
               (out = place(p.out_low_bytes, p.out_span_bytes, &out_block_)) != nullptr;
    }

private:
    void *in_block_ = nullptr, *out_block_ = nullptr;
    static uint8_t *place(int64_t low_bytes, int64_t span_bytes, void **block) {
        constexpr uintptr_t kPage = 4096;
        const size_t bytes = static_cast<size_t>(span_bytes) + kPage;
        *block = std::malloc(bytes);
        if (*block == nullptr) return nullptr;
        // Written, so that every page is its own: untouched (or calloc'd) pages all map to the
        // kernel's one zero page, whose reads hit L1 and made read-heavy plans look faster
        // (S2D NCHW DCR u8 C64, 128 KiB: chosen 12 % faster at create, 6-14 % slower after).
        std::memset(*block, 0x5a, bytes);
        const uintptr_t origin =
            reinterpret_cast<uintptr_t>(*block) - static_cast<uintptr_t>(low_bytes);  // low_bytes <= 0
        return reinterpret_cast<uint8_t *>((origin + kPage - 1) / kPage * kPage);
    }
};

struct Candidate {
    KernelPlan plan;
    const RegisteredKernel *kernel = nullptr;
    double best_ns = INFINITY;     // fastest call seen; < 0: the kernel failed, never chosen
    std::vector<double> round_ns;  // per call, one sample per round
};

// The median, over rounds, of c's time over the rules' plan's time in the same round.
double paired_ratio(const Candidate &c, const Candidate &rules) {
    std::vector<double> ratios;
    for (size_t r = 0; r < c.round_ns.size() && r < rules.round_ns.size(); r++) {
        ratios.push_back(c.round_ns[r] / rules.round_ns[r]);
    }
    if (ratios.empty()) return INFINITY;
    std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
    return ratios[ratios.size() / 2];
}

bool same_plan(const KernelPlan &a, const KernelPlan &b) {
    auto same_dims = [](const auto &x, const auto &y) {
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](const auto &u, const auto &v) {
                   return u.extent == v.extent && u.in_stride == v.in_stride && u.out_stride == v.out_stride;
               });
    };
    // The loop order is not compared: it is its dims.
    return a.family == b.family && a.parallel == b.parallel && a.avx2_path == b.avx2_path && a.stream == b.stream &&
           a.width == b.width && same_dims(a.kernel_dims, b.kernel_dims) && same_dims(a.loop_dims, b.loop_dims);
}

// The rules' plan first, then each distinct alternative, those differing from it in fewer
// choices first (the first to go when the time limit cannot fit them all).
std::vector<Candidate> candidates(const PlannedCall &planned, const View &view) {
    const Problem &p = planned.problem;
    std::vector<Candidate> list = {{planned.plan, planned.kernel}};
    const PlanChoice rules = planned.plan.choice();
    const SwitchPoints points = switch_points();
    const int64_t stream_candidate_min_bytes = std::min(points.stream_min_bytes, points.stream_parallel_min_bytes) / 4;
    std::vector<std::pair<int, PlanChoice>> choices;
    for (KernelFamily family : kKernelFamilies) {
        for (bool parallel : {false, true}) {
            // Serial or parallel stays the rules' choice (the small family is serial anyway):
            // timed at create, the thread pool's plans were erratic. On the 2-core AMD EPYC VM, at
            // 2 MiB on 2 threads, serial plans timed 1.2-2x faster than the rules' parallel ones at
            // create ran 1.14-1.55x slower afterwards (bench/RESULTS.md, 5 of 15 changed rows), and
            // at 32 KiB parallel ones chosen over serial 1.08-1.27x slower.
            // The shuffle family takes the choice's threads too (its rows split into tasks).
            if (parallel != rules.parallel || (parallel && family == KernelFamily::Small)) continue;
            for (bool avx2 : {false, true}) {
                if (avx2 && !avx2_path_beside_best()) continue;
                for (bool input_order : {false, true}) {
                    for (bool stream : {false, true}) {
                        // Streaming is timed only from a quarter of its switch point up: in cache
                        // it loses (a streaming copy at 128 KiB: 0.62x memcpy).
                        if (stream && p.bytes < stream_candidate_min_bytes) continue;
                        const PlanChoice c{family, parallel, avx2, input_order, stream};
                        const int differences = (c.family != rules.family) + (c.parallel != rules.parallel) +
                                                (c.avx2_path != rules.avx2_path) +
                                                (c.input_loop_order != rules.input_loop_order) +
                                                (c.stream != rules.stream);
                        choices.emplace_back(differences, c);
                    }
                }
            }
        }
    }
    std::stable_sort(choices.begin(), choices.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &[differences, choice] : choices) {
        KernelPlan plan = make_kernel_plan(p, view, Device::Host, &choice);
        if (std::none_of(list.begin(), list.end(), [&](const Candidate &c) { return same_plan(c.plan, plan); })) {
            const RegisteredKernel *kernel = find_kernel(Device::Host, plan.family, plan.width);
            if (kernel != nullptr) list.push_back({plan, kernel});
        }
    }
    return list;
}

// Runs the candidate `calls` times; its time per call in ns, or -1 if the kernel failed.
double time_calls(const Problem &p, const Candidate &c, ScratchTensors &scratch, int calls) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < calls; i++) {
        if (!execute(p, c.plan, c.kernel, scratch.in, scratch.out, {}).ok()) return -1;
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
}

// Why a call's tensors cannot be timed within the limit at all, or "": two candidates, three
// calls each (a warm-up and two timed) at the least. Padded views are timed over their whole
// span, which is what scratch memory must hold.
std::string too_large_to_time(const Problem &p, double time_limit_ms) {
    const int64_t span = std::max({p.bytes, p.in_span_bytes, p.out_span_bytes});
    if (6 * 2 * static_cast<double>(span) / kFastestBytesPerNs > time_limit_ms * 1e6) {
        std::ostringstream why;
        why << "the tensor" << (span > p.bytes ? "s' memory spans" : " is") << " too large to time within "
            << time_limit_ms << " ms";
        return why.str();
    }
    if (span > kMaxScratchBytes) return "the tensors' memory spans more than 1 GiB of scratch";
    return "";
}

// A warm-up call each, then a few calls timed: a plan over twice the rules' time cannot win, and
// timing it in every round could take many times the limit (a scalar family on a long view); it
// is left out (best_ns -1), as is a plan whose kernel fails. The warm-up call, cold caches and
// all, already rules out a plan many times slower.
void drop_slow_candidates(const Problem &p, std::vector<Candidate> &list, ScratchTensors &scratch, int calls,
                          double rules_ns, Clock::time_point deadline) {
    const int check_calls = std::min(calls, 3);
    for (size_t i = 1; i < list.size(); i++) {
        Candidate &c = list[i];
        const double warm_up_ns = Clock::now() > deadline ? -1 : time_calls(p, c, scratch, 1);
        if (warm_up_ns < 0 || warm_up_ns > 4 * kMaxSlowdown * rules_ns ||
            time_calls(p, c, scratch, check_calls) > kMaxSlowdown * rules_ns) {
            c.best_ns = -1;
        }
    }
}

// Every remaining candidate once per round, round-robin, so that drift hits them alike: at least
// two rounds, more until the deadline, none past the hard deadline.
void time_in_rounds(const Problem &p, std::vector<Candidate> &list, ScratchTensors &scratch, int calls,
                    Clock::time_point deadline, Clock::time_point hard_deadline) {
    for (int round = 0; round < kMaxRounds && (round < 2 || Clock::now() < deadline); round++) {
        for (Candidate &c : list) {
            if (c.best_ns < 0 || Clock::now() > hard_deadline) continue;
            const double ns = time_calls(p, c, scratch, calls);
            c.best_ns = ns < 0 ? -1 : std::min(c.best_ns, ns);
            c.round_ns.push_back(ns);
        }
    }
}

// The candidate whose median paired ratio to the rules' plan (list[0]) beats it by kMinGain the
// most, or the rules' plan.
Candidate *fastest(std::vector<Candidate> &list) {
    Candidate *best = &list[0];
    double best_ratio = 1 - kMinGain;
    for (Candidate &c : list) {
        const double ratio = &c == &list[0] || c.best_ns < 0 ? INFINITY : paired_ratio(c, list[0]);
        if (ratio <= best_ratio) {
            best = &c;
            best_ratio = ratio;
        }
    }
    return best;
}

// The winner must win again, in fresh rounds against the rules' plan alone (which goes first
// alternates), on scratch tensors at another place in memory: the best of many candidates is
// partly the luckiest, and where the tensors lie moves plans' relative speed. On the 2-core AMD
// EPYC VM, the same two plans (rules' vs AVX2 path, S2D NCHW CRD f32 C3 b2x3, 32 KiB) timed 0.84x
// on one pair of page-aligned buffers and 1.45x on another. `make bench-measure`: 16 rows > 3 %
// slower than the rules' plan (12 of them at 32 KiB-2 MiB) with one placement, 8-9 (0-3) with the
// second. Returns the winner, or the rules' plan if the winner loses.
Candidate *confirmed(const Problem &p, Candidate &rules, Candidate *best, ScratchTensors &scratch, int calls) {
    if (best == &rules) return best;
    rules.round_ns.clear();
    best->round_ns.clear();
    ScratchTensors elsewhere;
    ScratchTensors &confirm = elsewhere.allocate(p) ? elsewhere : scratch;
    for (int round = 0; round < kConfirmRounds; round++) {
        Candidate &first = round % 2 ? *best : rules, &second = round % 2 ? rules : *best;
        first.round_ns.push_back(time_calls(p, first, confirm, calls));
        second.round_ns.push_back(time_calls(p, second, confirm, calls));
    }
    return paired_ratio(*best, rules) > 1 - kMinGain ? &rules : best;
}

}  // namespace

void measure_plan(const View &view, double time_limit_ms, PlannedCall *planned) {
    const Clock::time_point start = Clock::now();
    const double limit_ns = time_limit_ms * 1e6;
    const Problem &p = planned->problem;
    MeasureReport &report = planned->measured;
    report = MeasureReport{};
    auto finish = [&] { report.plan_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };

    if (std::string why = too_large_to_time(p, time_limit_ms); !why.empty()) {
        report.not_timed = why;
        return finish();
    }
    std::vector<Candidate> list = candidates(*planned, view);
    if (list.size() < 2) {
        report.not_timed = "the planner has no alternative for this view";
        return finish();
    }
    ScratchTensors scratch;
    if (!scratch.allocate(p)) {
        report.not_timed = "no memory for scratch tensors";
        return finish();
    }
    // The rules' plan: a warm-up call (faulting the scratch pages in) and one timed, which sizes
    // the samples and says how many candidates the limit holds.
    if (time_calls(p, list[0], scratch, 1) < 0) {
        report.not_timed = "the rules' plan failed on scratch tensors";
        return finish();
    }
    const double first_ns = std::max(1.0, time_calls(p, list[0], scratch, 1));
    const int calls = static_cast<int>(std::clamp(std::ceil(kMinSampleNs / first_ns), 1.0, 1000.0));
    const double elapsed_ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    // A warm-up and at least two timed rounds for every candidate kept.
    const double per_candidate_ns = first_ns * (1 + 2 * calls);
    const size_t fits = static_cast<size_t>(std::max(0.0, (limit_ns - elapsed_ns) / per_candidate_ns));
    if (fits < 2) {
        std::ostringstream why;
        why << "a call takes " << first_ns / 1000 << " us: two candidates do not fit " << time_limit_ms << " ms";
        report.not_timed = why.str();
        return finish();
    }
    list.resize(std::min(list.size(), fits));
    const auto after = [&](double ns) { return start + std::chrono::nanoseconds(static_cast<int64_t>(ns)); };
    const Clock::time_point deadline = after(limit_ns), hard_deadline = after(2 * limit_ns);
    drop_slow_candidates(p, list, scratch, calls, first_ns, deadline);
    time_in_rounds(p, list, scratch, calls, deadline, hard_deadline);
    if (list[0].round_ns.size() < 2) {
        report.not_timed = "the time limit passed before the plans were timed twice";
        return finish();
    }
    const Candidate *best = confirmed(p, list[0], fastest(list), scratch, calls);
    report.candidates = static_cast<int>(list.size());
    report.rules_ns = list[0].best_ns;
    planned->plan = best->plan;
    planned->kernel = best->kernel;
    planned->source = PlanSource::Measured;
    report.best_ns = best->best_ns;
    remember_choice(p, planned->plan.choice());
    finish();
}

}  // namespace spacedepth::detail
