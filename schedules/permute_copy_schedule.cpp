#include "schedules/permute_copy_schedule.h"

namespace spacedepth {

void apply_permute_copy_schedule(const PermuteCopyHandles &h, const Halide::Target &target) {
    // Other CPU families get their own file as they arrive (ARM: schedules/arm.cpp). Until then
    // they share the x86 structure, which only uses natural_vector_size().
    switch (h.pattern) {
    case PermuteCopyPattern::Transpose:
        schedule_transpose_x86(h, target);
        return;
    case PermuteCopyPattern::Small:
        schedule_small_x86(h, target);
        return;
    case PermuteCopyPattern::General:
        schedule_permute_copy_x86(h, target);
        return;
    }
}

}  // namespace spacedepth
