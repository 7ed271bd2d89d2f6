// `cko profile torch`, `cko profile nsys`.
#include "cko/cli/verbs.hpp"

namespace cko::cli {

void register_profile_traces(CLI::App& /*profile*/) {}

}  // namespace cko::cli
