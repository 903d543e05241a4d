#include "schedules/permute_copy_schedule.h"

namespace spacedepth {

void apply_permute_copy_schedule(const PermuteCopyHandles &h, const Halide::Target &target) {
    // One file of schedules per target family: x86.cpp, arm.cpp, gpu.cpp.
    if (target.has_gpu_feature()) {
        schedule_permute_copy_gpu(h, target);
        return;
    }
    const bool arm = target.arch == Halide::Target::ARM;
    switch (h.pattern) {
    case PermuteCopyPattern::Transpose:
        arm ? schedule_transpose_arm(h, target) : schedule_transpose_x86(h, target);
        return;
    case PermuteCopyPattern::Small:
        arm ? schedule_small_arm(h, target) : schedule_small_x86(h, target);
        return;
    case PermuteCopyPattern::General:
        arm ? schedule_permute_copy_arm(h, target) : schedule_permute_copy_x86(h, target);
        return;
    }
}

}  // namespace spacedepth
