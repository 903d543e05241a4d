// The one-shot calls' plan cache: run_c() (sd_run, spacedepth::run) is a plan made and run on
// the spot, and the last few plans are kept per thread, keyed by the call without its data
// pointers and by the generations of the switch points and the wisdom.
#include "runtime/call.h"
#include "runtime/switch_points.h"
#include "runtime/wisdom.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace spacedepth::detail {

namespace {

// What a plan depends on: the call without its data pointers, and the switch points' generation.
struct CallKey {
    sd_params params;
    struct Desc {
        int64_t dtype, layout, ndim;
        int64_t dims[SD_MAX_NDIM], strides[SD_MAX_NDIM];
    } in, out;
    uint64_t generation, wisdom_generation;
    int device;
};

CallKey key_of(const sd_params &p, const sd_tensor &in, const sd_tensor &out, Device device) {
    CallKey k;
    std::memset(&k, 0, sizeof(k));  // padding too: keys are compared with memcmp
    k.params.op = p.op;
    k.params.block_h = p.block_h;
    k.params.block_w = p.block_w;
    k.params.block_d = p.block_d;
    k.params.order = p.order;
    k.params.threads = p.threads;
    for (auto [t, d] : {std::pair{&in, &k.in}, std::pair{&out, &k.out}}) {
        d->dtype = t->dtype;
        d->layout = t->layout;
        d->ndim = t->ndim;
        // Entries past ndim are ignored. A loop of constant count, not std::copy of n entries: the
        // two memmove calls were 16 % of a cached 64-byte one-shot call.
        const int n = t->ndim >= 0 && t->ndim <= SD_MAX_NDIM ? t->ndim : 0;
        for (int i = 0; i < SD_MAX_NDIM; i++) {
            d->dims[i] = i < n ? t->dims[i] : 0;
            d->strides[i] = i < n ? t->strides[i] : 0;
        }
    }
    k.generation = switch_points_generation();
    k.wisdom_generation = wisdom_generation();
    k.device = static_cast<int>(device);
    return k;
}

// The one-shot calls' plan cache: the last few calls' plans, per thread (no locks), so a caller
// repeating shapes through run() pays validation and planning once per shape, as a plan would.
// Only plans that were made are kept; every run still checks the data pointers.
struct PlanCache {
    static constexpr int kEntries = 4;
    CallKey keys[kEntries];
    PlannedCall plans[kEntries];
    bool valid[kEntries] = {};
    int next = 0;

    const PlannedCall *find(const CallKey &key) const {
        for (int i = 0; i < kEntries; i++) {
            // Keys are zeroed whole before their fields are set (key_of), padding included.
            // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
            if (valid[i] && std::memcmp(&keys[i], &key, sizeof(key)) == 0) return &plans[i];
        }
        return nullptr;
    }
    // The next slot, emptied, for a new plan; commit() makes it findable once the plan is whole.
    PlannedCall &claim() {
        valid[next] = false;
        return plans[next];
    }
    void commit(const CallKey &key) {
        keys[next] = key;
        valid[next] = true;
        next = (next + 1) % kEntries;
    }
};

thread_local PlanCache plan_cache;
thread_local uint64_t plan_cache_hits = 0;

}  // namespace

uint64_t one_shot_plan_cache_hits() { return plan_cache_hits; }

// plan_call() and run_planned() each catch std::bad_alloc where they allocate; the cache allocates
// nothing of its own.
Status run_c(const sd_params &params, const sd_tensor &in, const sd_tensor &out, const DeviceCall &call) {
    PlanCache &cache = plan_cache;
    const CallKey key = key_of(params, in, out, call.device);
    if (const PlannedCall *cached = cache.find(key)) {
        plan_cache_hits++;
        return run_planned(*cached, in.data, out.data, call);
    }
    PlannedCall &planned = cache.claim();  // planned in place: nothing to copy
    if (Status s = plan_call(params, in, out, call.device, &planned); !s.ok()) {
        return s;
    }
    cache.commit(key);
    return run_planned(planned, in.data, out.data, call);
}

}  // namespace spacedepth::detail
