// Overflow-checked 64-bit shape arithmetic. Every product and sum that sizes or addresses a
// tensor goes through these; an overflow is an error, never a wrap.
#pragma once

#include <cstdint>

namespace spacedepth::detail {

inline bool checked_mul(int64_t a, int64_t b, int64_t *result) { return !__builtin_mul_overflow(a, b, result); }

inline bool checked_add(int64_t a, int64_t b, int64_t *result) { return !__builtin_add_overflow(a, b, result); }

inline bool checked_sub(int64_t a, int64_t b, int64_t *result) { return !__builtin_sub_overflow(a, b, result); }

}  // namespace spacedepth::detail
