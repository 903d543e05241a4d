// Target regions for the runtime's hand-written microkernels (block_shuffle.cpp,
// tile_transpose.cpp): the functions between SPACEDEPTH_TARGET_BEGIN(features) and
// SPACEDEPTH_TARGET_END compile for that instruction set (as Highway's HWY_BEFORE_NAMESPACE
// does): GCC's target pragma, clang's attribute pragma. Callers run them only where the CPU probe
// (runtime/isa.h) found the set, under SPACEDEPTH_MAX_ISA.
#pragma once

#define SPACEDEPTH_STRINGIFY(x) #x
#if defined(__clang__)
#define SPACEDEPTH_TARGET_BEGIN(features) \
    _Pragma(SPACEDEPTH_STRINGIFY(clang attribute push(__attribute__((target(features))), apply_to = function)))
#define SPACEDEPTH_TARGET_END _Pragma("clang attribute pop")
#else
#define SPACEDEPTH_TARGET_BEGIN(features) \
    _Pragma("GCC push_options") _Pragma(SPACEDEPTH_STRINGIFY(GCC target(features)))
#define SPACEDEPTH_TARGET_END _Pragma("GCC pop_options")
#endif
