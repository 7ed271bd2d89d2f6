// An Nsight Compute report as launches of facts, with every metric kept as the tool printed it.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/profile/ncu/huge_pages.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile {
struct DevicePeaks;    // roofline.hpp
enum class Precision;  // roofline.hpp
}  // namespace cko::profile

namespace cko::profile::ncu {

inline constexpr std::string_view kNcuParserVersion = "cko-ncu-csv-1";
inline constexpr std::string_view kNcuReportFormat = "cko/ncu-report-v3";  // the --json document

enum class NcuLayout { raw, details };
[[nodiscard]] std::string_view layout_name(NcuLayout layout) noexcept;  // "raw", "details"

// A metric's name; `section` is empty on the raw page.
struct MetricKey {
    std::string section;
    std::string name;
};

// One metric of one launch as printed, viewed in the report's text (valid while a copy of the
// report lives; the value of a cell with "" escapes views a buffer valid during the callback).
struct MetricView {
    std::string_view section;  // empty on the raw page
    std::string_view name;
    std::string_view unit;
    std::string_view value;
    std::uint32_t key = 0;         // index into NcuReport::keys
    std::uint32_t unit_index = 0;  // index into NcuReport::units
};

// What one fact is, apart from its value and scope: its id, the tool's metric(s) it came from
// and its unit. `id` and `metric` view strings the report owns (NcuReport::strings); a report
// keeps each name once, in its arena (NcuReport::arena), and its facts point at them.
struct FactName {
    std::string_view id;
    std::string_view metric;
    BaseUnit unit = BaseUnit::count;
};

// One fact of one launch: its scope is the launch's. 16 bytes, not a Fact with its own Scope and
// strings: a 100 MB raw page holds 740,000 of them, and on a virtual machine the first touch of
// their memory (at 48 bytes each) was a tenth of the verb's CPU time (docs/profile-ncu.md).
struct LaunchFact {
    const FactName* name = nullptr;  // never null in a report
    double value = 0;

    [[nodiscard]] std::string_view id() const noexcept { return name->id; }
    [[nodiscard]] std::string_view metric() const noexcept { return name->metric; }
    [[nodiscard]] BaseUnit unit() const noexcept { return name->unit; }
};

// A rule result of the details page: a fact about the report, never advice of ours.
// The strings view the report's text or its strings (NcuReport::strings), valid while a copy of
// the report lives: a details page's rule rows hold ~15% of its bytes, as descriptions.
struct RuleFinding {
    std::string_view section;
    std::string_view name;
    std::string_view type;  // "OPT", "INF", "WRN", ...
    std::string_view description;
    std::string_view speedup_type;  // "local", "global" or empty
    std::optional<double> estimated_speedup_pct;
};

struct NcuLaunch {
    Scope scope;
    std::optional<std::int64_t> process_id;
    std::string process_name;
    std::string host;
    std::string compute_capability;
    // Where the launch's metrics are in NcuReport::text: the raw page's one row, or each metric
    // row of the details page. Metrics are read back from there (for_each_metric), not copied.
    // These arrays are drawn on the report's arena (NcuReport::arena) while it is parsed.
    ArenaVector<std::uint64_t> metric_rows;
    ArenaVector<std::uint32_t> metric_keys;  // details page: the key and unit of each row
    ArenaVector<std::uint32_t> metric_units;
    // Details page: where each row's value cell (its opening quote) starts, from the row's start,
    // so --json reads that cell back rather than the whole row; kValueAtUnknown: read the row.
    ArenaVector<std::uint32_t> metric_value_at;
    static constexpr std::uint32_t kValueAtUnknown = 0xffffffffU;
    // Raw page: where the row's metric cells lie as `"v","v",...,"v"` (every cell of the row
    // quoted, none with "" escapes, the metric columns side by side), from the row's start, and
    // how many bytes; --json copies them as the launch's values. kValueAtUnknown: not such a row.
    std::uint32_t raw_values_at = kValueAtUnknown;
    std::uint32_t raw_values_size = 0;
    std::size_t metric_count = 0;
    // Sorted by id; the array is the report's (NcuReport::arena), valid while a copy of it lives.
    std::span<const LaunchFact> facts;
    std::vector<RuleFinding> rules;
    std::size_t unmodeled = 0;  // metrics with an unknown unit or a text value

    [[nodiscard]] const LaunchFact* find(std::string_view fact_id) const noexcept;
    // The fact as the shared fact model has it, with the launch's scope.
    [[nodiscard]] Fact to_fact(const LaunchFact& fact) const;
};

// Where each metric sits in a row, for reading metrics back out of the text.
struct MetricLayout {
    // raw page: per metric column, its column index, key and unit (the units row's)
    std::vector<std::uint32_t> columns;
    std::vector<std::uint32_t> keys;
    std::vector<std::uint32_t> units;
    // details page: the cells holding section, name, unit and value
    std::size_t section = 0, name = 0, unit = 0, value = 0;
    bool has_section = false;
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
    std::string advice;              // what a person can do about a report-level fact
    std::vector<std::string> notes;  // how the text was read (e.g. invalid UTF-8 repaired)

    // The CSV text the launches' metrics are read from (a mapped file, or a string), kept alive
    // by `text_owner`, and the strings LaunchFacts view; shared, so copies of a report stay valid.
    std::string_view text;
    std::shared_ptr<const void> text_owner;
    std::shared_ptr<std::deque<std::string>> strings;
    std::shared_ptr<HugePageArena> arena;  // the launches' facts and metric arrays
    // More of what launches view: the strings and arena of rows read by a second thread.
    std::vector<std::shared_ptr<const void>> kept;
    MetricLayout metric_layout;

    [[nodiscard]] bool counters_permitted() const noexcept;
};

// Calls `fn` for every metric of `launch`, in file order, re-reading its rows from report.text.
void for_each_metric(const NcuReport& report, const NcuLaunch& launch,
                     const std::function<void(const MetricView&)>& fn);

// The fact id and advice of a collection NCU refused with ERR_NVGPUCTRPERM.
inline constexpr std::string_view kCountersNotPermitted = "collection.counters_not_permitted";
[[nodiscard]] std::string counters_not_permitted_advice();
// Marks the report as a refused collection (adds the fact and the advice once).
void mark_counters_not_permitted(NcuReport& report);

[[nodiscard]] nlohmann::json rule_to_json(const RuleFinding& rule);

// What a caller adds to the document: top-level members, and each launch's placement on a
// device's roofline (its `roofline` member, launch_roofline_to_json's bytes, where the launch has
// the inputs).
struct ReportJsonExtras {
    nlohmann::json top = nlohmann::json::object();
    const DevicePeaks* roofline_device = nullptr;
    std::optional<Precision> roofline_precision;
};

// Writes the `cko/ncu-report-v3` document to `out` as it goes: no DOM of the whole report exists,
// only one launch's small members at a time (ncu_report_json.cpp).
void write_report_json(const NcuReport& report, std::ostream& out,
                       const ReportJsonExtras& extras = {});
// The same document as a DOM, for tests and small reports: parsed from write_report_json, so
// there is one printer. Launch JSON: {id, kernel, grid, block, scope, facts[], top_stalls[],
// rules[], columns, values[], unmodeled}; `values` holds each metric's text, aligned with the
// report's metric_columns[columns], a list of [key, unit] indexing metric_keys ({name, section})
// and metric_units. ncu_document.hpp reads metrics back by name.
[[nodiscard]] nlohmann::json launch_to_json(const NcuReport& report, const NcuLaunch& launch);
[[nodiscard]] nlohmann::json report_to_json(const NcuReport& report);

}  // namespace cko::profile::ncu
