// `cko profile ...`: the profiler-evidence verbs; each format registers its own verbs.
#include "cko/cli/verbs.hpp"

namespace cko::cli {

void register_profile(CLI::App& profile) {
    register_profile_ncu(profile);
    register_profile_traces(profile);
}

}  // namespace cko::cli
