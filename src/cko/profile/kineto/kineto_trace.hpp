// Import of PyTorch profiler (Kineto) Chrome traces, .json or .json.gz, streamed in bounded memory.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/profile/kineto/trace_summary.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::profile::kineto {

inline constexpr const char* kDialect = "kineto-chrome-trace-v1";
// torch 1.8-1.9: the same layout, categories spelled "Kernel", "Memcpy", "Runtime", "Operator"...
inline constexpr const char* kDialectCamelCase = "kineto-chrome-trace-v1-camelcase";
inline constexpr const char* kParserVersion = "cko-kineto-1";

// What the trace says about where it was recorded. Absent fields stay absent.
struct TraceIdentity {
    std::int64_t schema_version = 0;
    Json device_properties = Json::array();  // as written (id, name, computeMajor, numSms, ...)
    std::optional<std::int64_t> cuda_runtime_version;
    std::optional<std::int64_t> cuda_driver_version;
    std::optional<std::int64_t> cupti_version;
    Json distributed_info;  // null when absent
    std::optional<std::int64_t> rank;
    std::optional<std::int64_t> world_size;
    std::string trace_id;
    std::optional<std::int64_t> base_time_ns;
    std::string display_time_unit;
    std::vector<std::string> other_members;  // top-level keys read but not modelled

    [[nodiscard]] Json to_json() const;
};

struct KinetoTrace {
    std::string path;
    std::uint64_t file_bytes = 0;
    bool gzip = false;
    Source source;
    TraceIdentity identity;
    TraceSummary summary;
    // What a reader must know about how the numbers were read: dialect spellings, GPU-looking
    // events not modelled, rounded timestamps, repaired UTF-8.
    std::vector<std::string> notes;

    // Per-kernel-name facts: instances, total and mean duration (ns).
    [[nodiscard]] std::vector<Fact> kernel_facts() const;
    [[nodiscard]] Json to_json() const;
};

// Reads one trace. tool_version is the torch version when the caller knows it (the trace does
// not record it). Throws cko::Error: empty_input, binary_input, malformed_input (bad JSON, bad
// gzip, timestamps that are not plain decimals), truncated_input, missing_field (schemaVersion,
// traceEvents, ts/dur of a complete event), unsupported_format (schemaVersion other than 1; GPU-
// looking events under unknown categories with no known GPU category, which would otherwise read
// as an idle GPU), io_error. Invalid UTF-8 anywhere is repaired to U+FFFD and noted.
[[nodiscard]] KinetoTrace import_kineto_trace(const std::filesystem::path& path,
                                              const std::string& tool_version = "");

// Reads several traces of one job (one per rank). With more than one, each must name its rank
// in distributedInfo.rank (missing_field otherwise) and ranks must differ (invalid_argument);
// the result is ordered by rank.
[[nodiscard]] std::vector<KinetoTrace> import_kineto_traces(
    const std::vector<std::filesystem::path>& paths, const std::string& tool_version = "");

// The `cko profile torch` JSON document (format_version cko/profile-torch-v1).
[[nodiscard]] Json kineto_traces_to_json(const std::vector<KinetoTrace>& traces);

}  // namespace cko::profile::kineto
