// Wisdom (FFTW's word): the choices measured plans made, per call shape, kept for the process and
// taken by every later plan and one-shot call of that shape (wisdom.cpp). A text file carries it
// from one process to the next on the same machine.
#pragma once

#include "runtime/plan.h"
#include "runtime/problem.h"

#include <cstdint>
#include <optional>
#include <string>

namespace spacedepth::detail {

// The choice measured for this call's shape (its op, order, block, threads and both tensors'
// dtype, layout, dims and strides), if any.
std::optional<PlanChoice> wisdom_choice(const Problem &problem);
void remember_choice(const Problem &problem, const PlanChoice &choice);
// How many times the wisdom has changed: plans cached under one generation are stale in the next.
uint64_t wisdom_generation();

// The file: a header naming the machine and library it was measured on, then one line per call.
std::string wisdom_text();
// Adds the text's choices, replacing those of the same calls, or adds none: a line that breaks a
// rule, or a header naming another CPU, kernel target, core count or library version, is
// reported with `source` (a file name) and its line number.
Status import_wisdom_text(const std::string &text, const std::string &source);
Status export_wisdom_file(const std::string &path);  // replaced whole, never left partial
Status import_wisdom_file(const std::string &path);
void forget_wisdom();

// This machine, as the header states it: the CPU's model name (x86: CPUID's brand string).
std::string cpu_model_name();

}  // namespace spacedepth::detail
