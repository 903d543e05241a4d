// The switch points in use, and the tuning database's for this CPU's kernel target and model
// (runtime/switch_points.h).
#include "runtime/switch_points.h"
#include "runtime/cpu_probe.h"
#include "runtime/isa.h"

#include <atomic>

namespace spacedepth::detail {

namespace {

// One row per kernel target that has a tuning database, then one per CPU model of its "machines"
// (cmake/Tuning.cmake writes them, each database's target row before its CPU models' rows).
struct TunedTarget {
    const char *target;
    const char *database;
    const char *generator_params;
    const char *cpu_model;                     // "": every CPU; else cpu_probe::model_key()'s text
    int64_t switch_points[kSwitchPointCount];  // in switch_points.inc's order; -1: unchanged
};

const TunedTarget kTunedTargets[] = {
#include "runtime/tuned_targets.inc"
    {nullptr, nullptr, nullptr, nullptr, {}},
};

// The switch points in use, readable while another thread sets them.
struct CurrentSwitchPoints {
    explicit CurrentSwitchPoints(const SwitchPoints &p) { store(p); }
    void store(const SwitchPoints &p) {
#define SPACEDEPTH_SWITCH_POINT(name, default_value) name.store(p.name, std::memory_order_relaxed);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    }
    SwitchPoints load() const {
        SwitchPoints p;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) p.name = name.load(std::memory_order_relaxed);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
        return p;
    }
#define SPACEDEPTH_SWITCH_POINT(name, default_value) std::atomic<int64_t> name{default_value};
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
};

CurrentSwitchPoints &current() {
    static CurrentSwitchPoints points(tuning_info().switch_points);
    return points;
}

}  // namespace

TuningInfo tuning_info() {
    TuningInfo info;
    const std::string model = cpu_probe::model_key(cpu_probe::read_cpuid());
    for (const TunedTarget *t = kTunedTargets; t->target != nullptr; t++) {
        if (cpu_kernel_target() != t->target) continue;
        if (*t->cpu_model == '\0') {
            info.database = t->database;
            info.generator_params = t->generator_params;
        } else if (model == t->cpu_model) {
            // Switch points measured on this CPU model, on top of the target's.
            info.cpu_model = t->cpu_model;
        } else {
            continue;
        }
        int i = 0;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) \
    if (t->switch_points[i++] >= 0) info.switch_points.name = t->switch_points[i - 1];
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    }
    return info;
}

SwitchPoints switch_points() { return current().load(); }

namespace {
std::atomic<uint64_t> switch_point_changes{0};
}  // namespace

void set_switch_points(const SwitchPoints &points) {
    current().store(points);
    switch_point_changes.fetch_add(1, std::memory_order_release);
}

uint64_t switch_points_generation() { return switch_point_changes.load(std::memory_order_acquire); }

std::string format_switch_points(const SwitchPoints &points) {
    std::string s;
#define SPACEDEPTH_SWITCH_POINT(name, default_value) \
    s += (s.empty() ? "" : " ") + std::string(#name "=") + std::to_string(points.name);
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    return s;
}

bool set_switch_point(SwitchPoints *points, const std::string &name, int64_t value) {
#define SPACEDEPTH_SWITCH_POINT(field, default_value) \
    if (name == #field) {                             \
        points->field = value;                        \
        return true;                                  \
    }
#include "runtime/switch_points.inc"
#undef SPACEDEPTH_SWITCH_POINT
    return false;
}

}  // namespace spacedepth::detail
