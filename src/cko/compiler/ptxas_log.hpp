// `ptxas -v` / `nvcc -Xptxas -v` output (CUDA 11–13): resource usage per function and architecture.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::compiler {

struct PtxasFunction {
    std::string symbol;  // as ptxas printed it (mangled)
    std::string name;    // demangled
    std::string arch;    // "sm_90a": the target of the compile that reported it
    bool entry = false;  // a kernel (`Compiling entry function`), not a called device function
    std::optional<std::int64_t> registers;
    std::optional<std::int64_t> barriers;  // printed by CUDA 12.x and later
    std::optional<std::int64_t> stack_frame_bytes;
    std::optional<std::int64_t> spill_stores_bytes;
    std::optional<std::int64_t> spill_loads_bytes;
    std::optional<std::int64_t> cumulative_stack_bytes;
    std::optional<std::int64_t> shared_bytes;
    std::optional<std::int64_t> local_bytes;
    std::map<int, std::int64_t> constant_bytes;  // bank -> bytes (cmem[0] = kernel parameters...)
    std::optional<double> compile_time_ms;
    std::vector<std::string> unmodeled;  // items of a `Used ...` line this parser does not know
    std::vector<profile::Fact> facts;
};

struct PtxasReport {
    std::vector<PtxasFunction> functions;  // in the order ptxas reported them
    std::vector<std::string> warnings;     // `ptxas warning : ...`
    std::vector<std::string> errors;       // `ptxas error/fatal : ...`
    std::vector<std::string> notes;        // other `ptxas info` lines (gmem, maxrregcount ...)
    std::size_t other_lines = 0;  // lines that are not ptxas output (nvcc -v, program output)
    profile::Source source;
};

// Parses the text; throws malformed_input (naming the line) for a properties line that is
// not understood, and missing_field when no function was reported at all.
[[nodiscard]] PtxasReport parse_ptxas_log(std::string_view text, std::string_view report_sha256,
                                          std::string_view source_name);

// Fills f.facts (ptxas.registers, ptxas.spill_stores_bytes ...) from the fields that are known.
void build_ptxas_facts(PtxasFunction& f);

// `cuobjdump -res-usage BINARY` output: the same resource fields per function and architecture,
// read from a built binary (no spill counts: cuobjdump does not print them). Dialect
// "cuobjdump-res-usage"; throws missing_field when no function is listed.
[[nodiscard]] PtxasReport parse_res_usage(std::string_view text, std::string_view report_sha256,
                                          std::string_view source_name);

// Either dialect, told apart by structure ("Resource usage:" lines are cuobjdump's).
[[nodiscard]] PtxasReport parse_resource_report(std::string_view text,
                                                std::string_view report_sha256,
                                                std::string_view source_name);

// {"format_version":"cko/ptxas-report-v1", "source", "functions":[...], "warnings", ...}
[[nodiscard]] Json ptxas_report_to_json(const PtxasReport& report);

}  // namespace cko::compiler
