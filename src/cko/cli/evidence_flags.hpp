// --root/--experiment/--subject on the verbs whose document can be kept as evidence.
#pragma once

#include "cko/cli/command.hpp"
#include "cko/util/json.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace cko::cli {

struct EvidenceFlags {
    std::string root;
    std::string experiment;
    std::string subject;
};

void add_evidence_flags(CLI::App* verb, EvidenceFlags& flags);

// With --root: stores `document` (eval::store_profile) and adds `stored` {id, path, sha256} to
// the printed JSON and a line to the text. Without: nothing.
void store_if_asked(const EvidenceFlags& flags, const std::string& kind, const Json& sources,
                    CommandResult& result);

}  // namespace cko::cli
