// Facts for a knowledge query, read from the --json documents of cko's parsers.
#pragma once

#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::knowledge {

struct ObservedFact {
    std::string id;  // in the vocabulary: "ncu.stall.long_scoreboard_pct", "sass.has.hgmma"
    double value = 0;
    std::string unit;
    std::string scope;     // the kernel (and launch or architecture) it belongs to
    std::string document;  // the file it was read from
};

struct FactSet {
    std::vector<ObservedFact> facts;
    std::vector<std::string> documents;  // "file (cko/ncu-report-v1)"
    std::size_t outside_vocabulary = 0;  // facts of those documents no trigger can name
};

// Adds the facts of one document: cko/ncu-report-v1/v2/v3 (profile ncu), cko/sass-report-v1 (sass),
// cko/ptxas-report-v1 (ptxas), cko/triton-cache-v1 (triton), or any document with a top-level
// "facts" list of {id, value, unit} (a map). Throws unsupported_format naming those.
void add_fact_document(FactSet& set, const Json& doc, const std::string& file);

}  // namespace cko::knowledge
