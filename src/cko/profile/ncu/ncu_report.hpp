// An Nsight Compute report as launches of facts, with every metric kept as the tool printed it.
#pragma once

#include "cko/profile/fact.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile::ncu {

inline constexpr std::string_view kNcuParserVersion = "cko-ncu-csv-1";

enum class NcuLayout { raw, details };
[[nodiscard]] std::string_view layout_name(NcuLayout layout) noexcept;  // "raw", "details"

// A metric's name; `section` is empty on the raw page.
struct MetricKey {
    std::string section;
    std::string name;
};

// One metric of one launch, as printed: indices into NcuReport::keys / units, the value text.
struct RawMetric {
    std::uint32_t key = 0;
    std::uint32_t unit = 0;
    std::string value;
};

// A rule result of the details page: a fact about the report, never advice of ours.
struct RuleFinding {
    std::string section;
    std::string name;
    std::string type;  // "OPT", "INF", "WRN", ...
    std::string description;
    std::string speedup_type;  // "local", "global" or empty
    std::optional<double> estimated_speedup_pct;
};

struct NcuLaunch {
    Scope scope;
    std::optional<std::int64_t> process_id;
    std::string process_name;
    std::string host;
    std::string compute_capability;
    std::vector<RawMetric> metrics;
    std::vector<Fact> facts;  // sorted by id
    std::vector<RuleFinding> rules;
    std::size_t unmodeled = 0;  // metrics with an unknown unit or a text value

    [[nodiscard]] const Fact* find(std::string_view fact_id) const noexcept;
};

struct NcuReport {
    Source source;
    NcuLayout layout = NcuLayout::raw;
    bool units_row = false;  // raw page: the second CSV row held the units
    std::vector<MetricKey> keys;
    std::vector<std::string> units;
    std::vector<NcuLaunch> launches;
    // Content read but not modelled, once per metric or column: kept, never computed with.
    std::vector<Unmodeled> unmodeled;
    std::vector<std::string> tool_messages;  // ==ERROR== / ==WARNING== lines
    std::size_t other_lines = 0;             // lines that were not CSV (program output, ==PROF==)
    std::string device_name;                 // device__attribute_display_name, when printed
    // Facts about the collection itself, e.g. collection.counters_not_permitted.
    std::vector<Fact> report_facts;
    std::string advice;  // what a person can do about a report-level fact
    std::vector<std::string> notes;  // how the text was read (e.g. invalid UTF-8 repaired)

    [[nodiscard]] bool counters_permitted() const noexcept;
};

// The fact id and advice of a collection NCU refused with ERR_NVGPUCTRPERM.
inline constexpr std::string_view kCountersNotPermitted = "collection.counters_not_permitted";
[[nodiscard]] std::string counters_not_permitted_advice();
// Marks the report as a refused collection (adds the fact and the advice once).
void mark_counters_not_permitted(NcuReport& report);

[[nodiscard]] nlohmann::json rule_to_json(const RuleFinding& rule);
// {id, kernel, grid, block, scope, facts[], top_stalls[], rules[], metrics[], unmodeled}
[[nodiscard]] nlohmann::json launch_to_json(const NcuReport& report, const NcuLaunch& launch);
[[nodiscard]] nlohmann::json report_to_json(const NcuReport& report);

}  // namespace cko::profile::ncu
