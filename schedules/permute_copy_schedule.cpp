#include "schedules/permute_copy_schedule.h"

#include "schedules/cpu_ladder.h"

#include <sstream>
#include <utility>

namespace spacedepth {

namespace {

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::istringstream in(s);
    std::string part;
    while (std::getline(in, part, sep)) {
        if (!part.empty()) parts.push_back(part);
    }
    return parts;
}

// The target's ISA: what a tuning entry is keyed by. The build adds these features to every
// kernel target; they change nothing the schedule depends on.
Halide::Target isa_of(Halide::Target t) {
    using T = Halide::Target;
    for (T::Feature f : {T::UserContext, T::LargeBuffers, T::NoAsserts, T::NoRuntime, T::NoBoundsQuery}) {
        t = t.without_feature(f);
    }
    return t;
}

}  // namespace

ScheduleTuning parse_schedule_tuning(const std::string &spec, const Halide::Target &target) {
    ScheduleTuning tuning;
    const std::pair<const char *, int ScheduleTuning::*> fields[] = {
        {"run_vectors", &ScheduleTuning::run_vectors},
        {"block_vectors", &ScheduleTuning::block_vectors},
        {"tile_rows", &ScheduleTuning::tile_rows},
        {"tile_row_bytes", &ScheduleTuning::tile_row_bytes},
        {"gpu_tile_x", &ScheduleTuning::gpu_tile_x},
        {"gpu_thread_rows", &ScheduleTuning::gpu_thread_rows},
        {"gpu_direct_transpose", &ScheduleTuning::gpu_direct_transpose},
        {"gpu_vector_block", &ScheduleTuning::gpu_vector_block}};
    for (const std::string &entry : split(spec, '+')) {
        std::vector<std::string> parts = split(entry, '/');
        _halide_user_assert(!parts.empty() && Halide::Target::validate_target_string(parts[0]))
            << "tuning: '" << entry << "' does not start with a Halide target";
        if (!(isa_of(Halide::Target(parts[0])) == isa_of(target))) continue;
        for (size_t i = 1; i < parts.size(); i++) {
            const size_t colon = parts[i].find(':');
            const std::string name = parts[i].substr(0, colon);
            int *field = nullptr;
            for (const auto &[field_name, member] : fields) {
                if (name == field_name) field = &(tuning.*member);
            }
            _halide_user_assert(field != nullptr && colon != std::string::npos)
                << "tuning: unknown parameter '" << parts[i]
                << "' (schedules/tunables.json lists the CPU ones, permute_copy_schedule.h the gpu_ ones)";
            int value = 0;
            std::istringstream number(parts[i].substr(colon + 1));
            _halide_user_assert((number >> value) && number.eof() && value > 0 && (value & (value - 1)) == 0)
                << "tuning: " << name << " must be a power of two, got '" << parts[i].substr(colon + 1) << "'";
            *field = value;
        }
    }
    return tuning;
}

void apply_permute_copy_schedule(const PermuteCopyHandles &h, const Halide::Target &target) {
    // One file of schedules per target family: x86.cpp, arm.cpp, gpu.cpp.
    if (target.has_gpu_feature()) {
        schedule_permute_copy_gpu(h, target);
        return;
    }
    const bool arm = target.arch == Halide::Target::ARM;
    switch (h.family) {
    case KernelFamily::Transpose:
        schedule_transpose_tiles(h, arm ? arm_shape(h, target) : x86_shape(h, target));
        return;
    case KernelFamily::Small: schedule_small(h, target.natural_vector_size(h.output.type())); return;
    case KernelFamily::General: schedule_ladder(h, arm ? arm_shape(h, target) : x86_shape(h, target)); return;
    case KernelFamily::Shuffle:
    case KernelFamily::Tile:
    case KernelFamily::Regroup: break;  // the runtime's microkernels: no device builds them
    }
    _halide_user_assert(false) << "the " << kernel_family_name(h.family) << " family has no Halide schedule\n";
}

}  // namespace spacedepth
