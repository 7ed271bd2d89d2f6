// Nsight Compute CSV exports (raw page, details page, --metrics output) → an NcuReport.
#pragma once

#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/ncu_report.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace cko::profile::ncu {

struct NcuParseOptions {
    std::string tool_version;   // as the caller knows it; else read from a version banner if any
    std::string report_sha256;  // of the exact bytes; read_ncu_report fills it
    CsvLimits limits;
};

// Parses an NCU CSV export whatever came around it (program output, ==PROF== lines). The layout
// is detected from the header: "Section Name"/"Metric Name"/"Metric Unit"/"Metric Value" columns
// make the long details layout, else "ID" + "Kernel Name" the wide raw layout.
// Throws cko::Error: empty_input, binary_input, unsupported_format (no NCU header),
// duplicate_header, missing_field, truncated_input, malformed_input, field_too_long, unknown_unit
// (a metric the semantic layer computes with has a unit outside the unit table). Output holding
// ERR_NVGPUCTRPERM gives a report with the counters-not-permitted fact.
// The report keeps a copy of `text` (NcuReport::text) to read metrics back from.
[[nodiscard]] NcuReport parse_ncu_csv(std::string_view text, const NcuParseOptions& options = {});
// The same without the copy: `text` lies inside what `owner` keeps alive (a mapped file, a
// string), and the report shares `owner`.
[[nodiscard]] NcuReport parse_ncu_text(std::string_view text, std::shared_ptr<const void> owner,
                                       const NcuParseOptions& options = {});

// Maps the file (up to max_bytes; util MappedFile), hashes it, and parses it.
[[nodiscard]] NcuReport read_ncu_report(const std::filesystem::path& path,
                                        NcuParseOptions options = {},
                                        std::uint64_t max_bytes = std::uint64_t{4} << 30);

}  // namespace cko::profile::ncu
