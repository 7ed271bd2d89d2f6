// Import of an Nsight Systems SQLite export: identity, GPUs and the nsys-stats summaries.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/profile/nsys/stats_reports.hpp"
#include "cko/util/json.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cko::profile::nsys {

inline constexpr const char* kParserVersion = "cko-nsys-1";

struct NsysExport {
    std::string path;
    Source source;                              // tool "nsys", version EXPORT_PRODUCT_VERSION
    std::string schema_version;                 // EXPORT_SCHEMA_VERSION
    Json gpus = Json::array();                  // TARGET_INFO_GPU rows (the columns present)
    Json cuda_devices = Json::array();          // TARGET_INFO_CUDA_DEVICE rows
    std::vector<StatsReport> reports;           // stats_report_names() order
    std::vector<std::string> unmodeled_tables;  // tables present that cko does not read
    std::vector<std::string> notes;             // e.g. strings whose invalid UTF-8 was repaired

    [[nodiscard]] const StatsReport& report(const std::string& name) const;
    // Per kernel name (cuda_gpu_kern_sum): instances, total, mean, median, min, max (ns).
    [[nodiscard]] std::vector<Fact> kernel_facts() const;
    [[nodiscard]] Json to_json() const;  // format_version cko/profile-nsys-v1
};

// Opens the export read-only and builds every report. Errors as NsysDatabase and the reports.
[[nodiscard]] NsysExport import_nsys_export(const std::filesystem::path& path);

}  // namespace cko::profile::nsys
