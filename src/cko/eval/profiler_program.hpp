// The profiler program `profile collect` runs around a driver call: which program (a path, or a
// name found where `cko doctor` looks), its version checked against the tested ranges, and the
// options a caller may pass it.
#pragma once

#include "cko/eval/profile_collect.hpp"

#include <string>

namespace cko::eval {

// The program and version that run (both "" for torch, which the driver runs itself).
struct ProfilerProgram {
    std::string path;     // "" for torch
    std::string version;  // "" for torch
};

// The profiler's program and its version, refused when untested; torch has none, so a --program
// given for it is refused.
[[nodiscard]] ProfilerProgram checked_profiler_program(const ProfileCollectOptions& o);

}  // namespace cko::eval
