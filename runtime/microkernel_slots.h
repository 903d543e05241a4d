// What the runtime's kernel-shaped microkernels (tile_transpose.cpp, vect_c_regroup.cpp) share:
// a kernel call's six slots read from its buffers, the walk over the slots a microkernel leaves
// to an outer loop, a plain strided copy of any view (their path where no vector loop applies),
// and the split of the outer loop into tasks on Halide's thread pool.
#pragma once

#include "contract/kernel_contract.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace spacedepth::detail {

// A kernel's slots, in elements.
struct Slots {
    int64_t extent[kKernelRank], in_stride[kKernelRank], out_stride[kKernelRank];
};

// The slots of a kernel call (missing dims as unit ones); false where any extent is empty.
inline bool slots_of(const halide_buffer_t *in, const halide_buffer_t *out, Slots *s) {
    for (int d = 0; d < kKernelRank; d++) {
        const bool present = d < in->dimensions;
        s->extent[d] = present ? in->dim[d].extent : 1;
        s->in_stride[d] = present ? in->dim[d].stride : 0;
        s->out_stride[d] = present ? out->dim[d].stride : 0;
        if (s->extent[d] <= 0) return false;
    }
    return true;
}

// The slots an outer loop walks (the first fastest), and how many iterations it has.
struct OuterSlots {
    int slot[kKernelRank] = {};
    int count = 0;
    int64_t total = 1;
    OuterSlots(const Slots &s, std::initializer_list<int> slots) {
        for (int d : slots) {
            slot[count++] = d;
            total *= s.extent[d];
        }
    }
};

// f(in_offset, out_offset) for the outer loop's iterations [begin, end), in order: an odometer,
// whose start alone takes divisions (with two divisions per slot per iteration, the regroup's
// 360-byte rows at 128 KiB ran 9-12 % slower: AMD EPYC, 1 thread).
template <class F>
void for_each_outer(const Slots &s, const OuterSlots &outer, int64_t begin, int64_t end, const F &f) {
    int64_t index[kKernelRank] = {}, in_off = 0, out_off = 0, k = begin;
    for (int i = 0; i < outer.count; i++) {
        const int d = outer.slot[i];
        index[i] = k % s.extent[d];
        k /= s.extent[d];
        in_off += index[i] * s.in_stride[d];
        out_off += index[i] * s.out_stride[d];
    }
    for (int64_t it = begin; it < end; it++) {
        f(in_off, out_off);
        for (int i = 0; i < outer.count; i++) {
            const int d = outer.slot[i];
            in_off += s.in_stride[d];
            out_off += s.out_stride[d];
            if (++index[i] < s.extent[d]) break;
            index[i] = 0;
            in_off -= s.extent[d] * s.in_stride[d];
            out_off -= s.extent[d] * s.out_stride[d];
        }
    }
}

// Any view, element by element: slot 0 innermost, iterations [begin, end) of slots 1-5.
template <class T>
void copy_slots(const T *in, T *out, const Slots &s, int64_t begin, int64_t end) {
    for_each_outer(s, OuterSlots(s, {1, 2, 3, 4, 5}), begin, end, [&](int64_t in_off, int64_t out_off) {
        for (int64_t i = 0; i < s.extent[0]; i++) out[out_off + i * s.out_stride[0]] = in[in_off + i * s.in_stride[0]];
    });
}

// f(begin, end) over [0, total): in this thread, or where `parallel`, in up to 64 tasks on
// Halide's thread pool (as its parallel loops split theirs). Halide's return code.
template <class F>
int for_outer_ranges(void const *user_context, bool parallel, int64_t total, const F &f) {
    constexpr int64_t kMaxTasks = 64;
    const int64_t tasks = parallel ? std::min(total, kMaxTasks) : 1;
    if (tasks <= 1) {
        f(int64_t{0}, total);
        return 0;
    }
    struct Closure {
        const F *f;
        int64_t per_task, total;
    } closure{&f, (total + tasks - 1) / tasks, total};
    halide_task_t task = [](void *, int index, uint8_t *bytes) -> int {
        const Closure &c = *reinterpret_cast<const Closure *>(bytes);
        const int64_t begin = index * c.per_task;
        (*c.f)(begin, std::min(c.total, begin + c.per_task));
        return 0;
    };
    const int count = static_cast<int>((total + closure.per_task - 1) / closure.per_task);
    return halide_do_par_for(const_cast<void *>(user_context), task, 0, count, reinterpret_cast<uint8_t *>(&closure));
}

}  // namespace spacedepth::detail
