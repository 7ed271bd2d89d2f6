// The command-line adapter over the verb table (src/cko/verbs/): flags, --json, --request,
// printing.
#pragma once

namespace cko::cli {

// Runs the whole command line; returns the process exit code. Never throws.
//   --json          print exactly one JSON document on stdout instead of the human summary
//   --request FILE  a closed JSON object whose keys are this verb's option names (without
//                   dashes, '-' or '_' alike); unknown keys are rejected with the list of
//                   known ones
int run_cli(int argc, char** argv);

}  // namespace cko::cli
