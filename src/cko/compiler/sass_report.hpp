// A SASS listing as evidence: per-kernel facts (opcodes, signatures) and its JSON document.
#pragma once

#include "cko/compiler/sass_listing.hpp"
#include "cko/profile/fact.hpp"
#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::compiler {

struct SassKernelFacts {
    std::size_t index = 0;             // into listing.kernels
    std::vector<profile::Fact> facts;  // sass.instructions, sass.opcode.*, sass.has.*, sass.count.*
};

struct SassReport {
    SassListing listing;
    std::vector<SassKernelFacts> kernels;  // parallel to listing.kernels
    profile::Source source;
    std::string input_kind;  // "text" or "binary" (disassembled by `tool`)
};

// Builds the facts of every kernel. `source` names the input (sha256, tool, version, dialect).
[[nodiscard]] SassReport make_sass_report(SassListing listing, profile::Source source,
                                          std::string input_kind);

// {"format_version":"cko/sass-report-v1", "architectures", "kernels":[{name, arch, counts,
// signatures, facts}], ...}
[[nodiscard]] Json sass_report_to_json(const SassReport& report);

}  // namespace cko::compiler
