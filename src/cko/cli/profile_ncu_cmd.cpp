// `cko profile ncu`, `cko profile diff`, `cko profile collect ncu`.
#include "cko/cli/verbs.hpp"

namespace cko::cli {

void register_profile_ncu(CLI::App& /*profile*/) {}

}  // namespace cko::cli
