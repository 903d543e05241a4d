// Measured plans (measure.cpp): SD_PLAN_MEASURE's timing of a call's candidate plans.
#pragma once

#include "runtime/call.h"

namespace spacedepth::detail {

// Times the rules' plan of `planned` and its alternatives on scratch buffers of its shape within
// mode.time_limit_ms, and keeps the fastest (measure.cpp). Scratch memory that cannot be
// allocated, or a call too long for the limit, keeps the rules' plan, saying why.
void measure_plan(const View &view, double time_limit_ms, PlannedCall *planned);
}  // namespace spacedepth::detail
