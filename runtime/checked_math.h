// Overflow-checked 64-bit shape arithmetic. Every product and sum that sizes or addresses a
// tensor goes through these; an overflow is an error, never a wrap.
#pragma once

#include <cstdint>

namespace spacedepth::detail {

inline bool checked_mul(int64_t a, int64_t b, int64_t *result) { return !__builtin_mul_overflow(a, b, result); }

inline bool checked_add(int64_t a, int64_t b, int64_t *result) { return !__builtin_add_overflow(a, b, result); }

inline bool checked_sub(int64_t a, int64_t b, int64_t *result) { return !__builtin_sub_overflow(a, b, result); }

// A stride's size, whichever way it steps (a reversed dim steps backwards). Only for strides of
// validated tensors, where no stride of a dim longer than 1 is INT64_MIN (its span overflows).
inline int64_t magnitude(int64_t stride) { return stride < 0 ? -stride : stride; }

}  // namespace spacedepth::detail
