// The `nsys stats` summary reports cko reproduces from an export, column for column.
#pragma once

#include "cko/profile/nsys/nsys_database.hpp"
#include "cko/profile/nsys/stats_row.hpp"
#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::profile::nsys {

struct StatsReport {
    std::string name;                 // "cuda_gpu_kern_sum", ...
    std::vector<std::string> header;  // the CSV header nsys prints
    std::vector<StatsRow> rows;       // in nsys's order
    std::string skipped;              // why the report has no data (table absent), else empty

    // Exactly the text of `nsys stats --report NAME --format csv` (minus its progress lines).
    [[nodiscard]] std::string to_csv() const;
    [[nodiscard]] Json to_json() const;
};

// Which kernel name column cuda_gpu_kern_sum groups by (its :base / :mangled options).
enum class KernelNaming { demangled, base, mangled };

// Each returns `skipped` set when its source table is absent; a present table that lacks a
// required column throws missing_field naming it.
[[nodiscard]] StatsReport cuda_gpu_kern_sum(const NsysDatabase& db,
                                            KernelNaming naming = KernelNaming::demangled);
[[nodiscard]] StatsReport cuda_gpu_mem_time_sum(const NsysDatabase& db);
[[nodiscard]] StatsReport cuda_api_sum(const NsysDatabase& db);
[[nodiscard]] StatsReport nvtx_sum(const NsysDatabase& db);
// Not an nsys report: CUPTI_ACTIVITY_KIND_SYNCHRONIZATION by sync type, same columns.
[[nodiscard]] StatsReport cuda_sync_sum(const NsysDatabase& db);

// The report names above, and a lookup that throws invalid_argument for any other name.
[[nodiscard]] const std::vector<std::string>& stats_report_names();
[[nodiscard]] StatsReport run_stats_report(const NsysDatabase& db, const std::string& name);

}  // namespace cko::profile::nsys
