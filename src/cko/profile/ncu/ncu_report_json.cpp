// The `cko/ncu-report-v3` document written as it goes: per launch, facts and metric values go
// straight from the report (and its text) to the output, never through a DOM.
#include "cko/profile/ncu/ncu_report.hpp"

#include "cko/profile/ncu/byte_scan.hpp"
#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/json_stream.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/profile/ncu/two_writers.hpp"
#include "cko/profile/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cko::profile::ncu {
namespace {

// Every metric of every launch, as `columns` (which list of the report's metric_columns, the
// [key, unit] of each) and `values` (each value's text as printed), read back from the text with
// one tokenizer for the whole report. A raw page's launches share the header's columns; a details
// page's launches are grouped by their (key, unit) sequence, in order of first use.
// The lists are found once (MetricColumns); each thread that writes launches reads the values
// back with its own MetricWriter.
class MetricColumns {
public:
    explicit MetricColumns(const NcuReport& report) {
        const MetricLayout& layout = report.metric_layout;
        list_of_.reserve(report.launches.size());
        std::map<Columns, std::uint32_t> known;
        Columns columns;
        for (const NcuLaunch& launch : report.launches) {
            columns.clear();
            if (!report.text.empty() && !launch.metric_rows.empty()) {
                if (report.layout == NcuLayout::raw) {
                    if (header_list_ == kNoList) {
                        Columns header;
                        for (std::size_t m = 0; m < layout.columns.size(); ++m) {
                            header.emplace_back(layout.keys[m], layout.units[m]);
                        }
                        header_list_ = intern(known, header);
                    }
                    list_of_.push_back(header_list_);
                    continue;
                }
                for (std::size_t row = 0; row < launch.metric_rows.size(); ++row) {
                    const bool indexed =
                        row < launch.metric_keys.size() && row < launch.metric_units.size();
                    columns.emplace_back(indexed ? launch.metric_keys[row] : 0,
                                         indexed ? launch.metric_units[row] : 0);
                }
            }
            list_of_.push_back(intern(known, columns));
        }
    }

    // The report's `metric_columns`: [[[key, unit], ...], ...].
    void write_columns(JsonStream& js) const {
        js.put('[');
        for (std::size_t g = 0; g < lists_.size(); ++g) {
            js.raw(g == 0 ? "[" : ",[");
            for (std::size_t c = 0; c < lists_[g].size(); ++c) {
                js.raw(c == 0 ? "[" : ",[");
                js.integer(lists_[g][c].first);
                js.put(',');
                js.integer(lists_[g][c].second);
                js.put(']');
            }
            js.put(']');
        }
        js.put(']');
    }

    [[nodiscard]] std::uint32_t list_of(std::size_t launch) const { return list_of_[launch]; }
    [[nodiscard]] bool empty(std::uint32_t list) const { return lists_[list].empty(); }

private:
    using Columns = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
    static constexpr std::uint32_t kNoList = 0xffffffffU;

    // The previous launch's list is checked first (launches of one kernel repeat it), then the
    // lists seen; a copy of `columns` is made only for a new list (emplace copied it every time:
    // a malloc and a copy per launch, ~2 ms on a 100 MB details page).
    std::uint32_t intern(std::map<Columns, std::uint32_t>& known, const Columns& columns) {
        if (!list_of_.empty() && lists_[list_of_.back()] == columns) {
            return list_of_.back();
        }
        if (const auto it = known.find(columns); it != known.end()) {
            return it->second;
        }
        const auto list = static_cast<std::uint32_t>(lists_.size());
        known.emplace(columns, list);
        lists_.push_back(columns);
        return list;
    }

    std::vector<Columns> lists_;
    std::vector<std::uint32_t> list_of_;  // per launch, its list in lists_
    std::uint32_t header_list_ = kNoList;
};

class MetricWriter {
public:
    MetricWriter(const NcuReport& report, const MetricColumns& columns)
        : report_(report),
          columns_(columns),
          tokenizer_(report.text, CsvLimits{report.text.size() + 1}) {}

    // `"columns":G,"values":[...]` of launch i.
    void write(JsonStream& js, std::size_t i) {
        const NcuLaunch& launch = report_.launches[i];
        js.raw("\"columns\":");
        const std::uint32_t list = columns_.list_of(i);
        js.integer(list);
        js.raw(",\"values\":");
        if (columns_.empty(list)) {
            js.raw("[]");
            return;
        }
        if (report_.layout == NcuLayout::raw) {
            if (!copy_raw_values(js, launch)) {
                write_raw_row(js, launch);
            }
            return;
        }
        const MetricLayout& layout = report_.metric_layout;
        js.put('[');
        for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {
            // A details row is read back from its value cell on (its first cell then), not
            // from its start: the cells before it are a dozen names already known.
            const std::uint32_t value_at = r < launch.metric_value_at.size()
                                               ? launch.metric_value_at[r]
                                               : NcuLaunch::kValueAtUnknown;
            const bool from_value = value_at != NcuLaunch::kValueAtUnknown;
            tokenizer_.seek(static_cast<std::size_t>(launch.metric_rows[r]) +
                            (from_value ? value_at : 0));
            if (r > 0) {
                js.put(',');
            }
            // A row that cannot be read again (never: it was read once) keeps its place.
            js.string(tokenizer_.next(row_) ? cell(from_value ? 0 : layout.value)
                                            : std::string_view());
        }
        js.put(']');
    }

private:
    // A raw row whose metric cells are `"v",...,"v"` (the parser saw every cell quoted, none
    // with "" escapes, the metric columns side by side: NcuLaunch::raw_values_at) is already the
    // JSON array's inside unless a value holds a backslash or a control character: copied as it
    // stands, 64 bytes at a time where the CPU has AVX-512BW, else 16, with that check on the way.
    // False: not such a row.
    bool copy_raw_values(JsonStream& js, const NcuLaunch& launch) {
        if (launch.raw_values_at == NcuLaunch::kValueAtUnknown || launch.metric_rows.size() != 1) {
            return false;
        }
        const std::uint64_t at = launch.metric_rows[0] + launch.raw_values_at;
        const std::size_t size = launch.raw_values_size;
        if (at > report_.text.size() || report_.text.size() - at < size) {
            return false;
        }
        char* out = js.reserve(size + 2);
        *out = '[';
        if (!byte_scan::copy_json_plain_widest(report_.text.data() + at, size, out + 1)) {
            return false;  // nothing committed: the slow path writes over it
        }
        out += size + 1;
        *out++ = ']';
        js.commit(out);
        return true;
    }

    // Any other raw row: read again, each value written as a JSON string.
    void write_raw_row(JsonStream& js, const NcuLaunch& launch) {
        const MetricLayout& layout = report_.metric_layout;
        js.put('[');
        tokenizer_.seek(static_cast<std::size_t>(launch.metric_rows[0]));
        const bool read = tokenizer_.next(row_);
        for (std::size_t m = 0; m < layout.columns.size(); ++m) {
            if (m > 0) {
                js.put(',');
            }
            js.string(read ? cell(layout.columns[m]) : std::string_view());
        }
        js.put(']');
    }

    [[nodiscard]] std::string_view cell(std::size_t i) const {
        return i < row_.cells.size() ? row_.cells[i] : std::string_view();
    }

    const NcuReport& report_;
    const MetricColumns& columns_;
    CsvTokenizer tokenizer_;
    CsvRow row_;
};

// `scope` as scope_to_json(scope).dump() prints it (members in nlohmann's sorted order), without
// the DOM: one per launch.
void write_scope(JsonStream& js, const Scope& scope) {
    js.put('{');
    bool first = true;
    const auto member = [&](std::string_view name) {
        js.raw(first ? "\"" : ",\"");
        first = false;
        js.raw(name);
        js.raw("\":");
    };
    const auto dim3 = [&](std::string_view name,
                          const std::optional<std::array<std::int64_t, 3>>& d) {
        if (d) {
            member(name);
            js.dim3(d);
        }
    };
    const auto integer = [&](std::string_view name, const std::optional<std::int64_t>& v) {
        if (v) {
            member(name);
            js.integer(*v);
        }
    };
    dim3("block", scope.block);
    integer("context", scope.context);
    integer("device", scope.device);
    dim3("grid", scope.grid);
    if (!scope.kernel.empty()) {
        member("kernel");
        js.dom_string(scope.kernel);
    }
    if (!scope.kernel_mangled.empty()) {
        member("kernel_mangled");
        js.dom_string(scope.kernel_mangled);
    }
    integer("launch_id", scope.launch_id);
    integer("stream", scope.stream);
    js.put('}');
}

// A rule as rule_to_json(rule).dump() prints it.
void write_rule(JsonStream& js, const RuleFinding& rule) {
    js.raw("{\"description\":");
    js.dom_string(rule.description);
    if (rule.estimated_speedup_pct) {
        js.raw(",\"estimated_speedup_pct\":");
        js.dom_number(*rule.estimated_speedup_pct);
    }
    js.raw(",\"name\":");
    js.dom_string(rule.name);
    js.raw(",\"section\":");
    js.dom_string(rule.section);
    if (!rule.speedup_type.empty()) {
        js.raw(",\"speedup_type\":");
        js.dom_string(rule.speedup_type);
    }
    js.raw(",\"type\":");
    js.dom_string(rule.type);
    js.put('}');
}

// A launch's `roofline` member, byte for byte as launch_roofline_to_json(...).dump() prints it
// (members in nlohmann's sorted order, its number spelling), without the DOM: building it was a
// sixth of a raw page's --json time.
void write_roofline(JsonStream& js, const LaunchRooflineInput& in, const DevicePeaks& device) {
    const RooflinePlacement p = place_on_roofline(in.input, device);
    const auto number = [&](std::string_view name, const std::optional<double>& v) {
        js.raw(name);
        if (v) {
            js.dom_number(*v);
        } else {
            js.raw("null");
        }
    };
    number(R"({"achieved_bytes_per_second":)", p.achieved_bytes_per_second);
    number(R"(,"achieved_flops_per_second":)", p.achieved_flops_per_second);
    number(R"(,"arithmetic_intensity":)", p.arithmetic_intensity);
    number(R"(,"bandwidth_pct_of_peak":)", p.bandwidth_pct_of_peak);
    js.raw(R"(,"bytes_from":)");
    if (in.bytes_from.empty()) {
        js.raw("null");
    } else {
        js.dom_string(in.bytes_from);
    }
    number(R"(,"compute_pct_of_peak":)", p.compute_pct_of_peak);
    js.raw(R"(,"device":)");
    js.dom_string(device.key);
    js.raw(R"(,"facts":[)");
    // roofline_facts' order, each {"id","unit","value"}.
    bool first = true;
    const auto fact = [&](std::string_view id, const std::optional<double>& v, BaseUnit unit) {
        if (!v) {
            return;
        }
        js.raw(first ? R"({"id":")" : R"(,{"id":")");
        first = false;
        js.raw(id);
        js.raw(R"(","unit":)");
        js.dom_string(base_unit_name(unit));
        js.raw(R"(,"value":)");
        js.dom_number(*v);
        js.put('}');
    };
    fact("roofline.achieved_bytes", p.achieved_bytes_per_second, BaseUnit::byte_per_second);
    fact("roofline.achieved_flops", p.achieved_flops_per_second, BaseUnit::flop_per_second);
    fact("roofline.arithmetic_intensity", p.arithmetic_intensity, BaseUnit::flop_per_byte);
    fact("roofline.bandwidth_pct_of_peak", p.bandwidth_pct_of_peak, BaseUnit::percent);
    fact("roofline.compute_pct_of_peak", p.compute_pct_of_peak, BaseUnit::percent);
    fact("roofline.pct_of_roof", p.pct_of_roof, BaseUnit::percent);
    fact("roofline.ridge_point", p.ridge_point, BaseUnit::flop_per_byte);
    js.put(']');
    number(R"(,"pct_of_roof":)", p.pct_of_roof);
    number(R"(,"peak_bytes_per_second":)", p.peak_bytes_per_second);
    number(R"(,"peak_flops_per_second":)", p.peak_flops_per_second);
    js.raw(R"(,"precision":)");
    js.dom_string(precision_name(p.precision));
    js.raw(R"(,"region":)");
    if (p.region.empty()) {
        js.raw("null");
    } else {
        js.dom_string(p.region);
    }
    number(R"(,"ridge_point":)", p.ridge_point);
    js.put('}');
}

// A fact is `{"id":ID,"value":` + its number + `,"unit":UNIT,"metric":METRIC}`; the two pieces
// around the number are formatted once per name (id, unit, metric), not once per launch (a 100 MB
// raw page has 750,000 facts of a few dozen kinds). A report keeps each name once (FactName), so
// a piece is found by the name's address.
class FactPieces {
public:
    struct Pieces {
        std::string before;  // {"id":"duration","value":
        std::string after;   // ,"unit":"ns","metric":"gpu__time_duration.sum"}
        bool stall = false;  // a stall.* fact (for top_stalls)
    };

    // The pieces of a launch's fact number `i`: launches of one kernel (every launch of a raw
    // page) have the same facts in the same order, so the previous launch's i-th fact is tried
    // first, before the map.
    const Pieces& of(const LaunchFact& f, std::size_t i) {
        if (i < recent_.size() && recent_[i].first == f.name) {
            return *recent_[i].second;
        }
        const Pieces& p = lookup(*f.name);
        if (i >= recent_.size()) {
            recent_.resize(i + 1, {nullptr, nullptr});
        }
        recent_[i] = {f.name, &p};
        return p;
    }

private:
    const Pieces& lookup(const FactName& name) {
        const auto it = pieces_.find(&name);
        if (it != pieces_.end()) {
            return it->second;
        }
        Pieces p;
        p.before = R"({"id":)" + json_string(name.id) + R"(,"value":)";
        p.after = R"(,"unit":)" + json_string(base_unit_name(name.unit)) + R"(,"metric":)" +
                  json_string(name.metric) + "}";
        p.stall = name.id.starts_with("stall.");
        return pieces_.emplace(&name, std::move(p)).first->second;  // node-based: stays put
    }
    // The same escaping as JsonStream::string, through one held stream for every piece: a
    // stream's buffer is a megabyte, and one per piece was most of a small report's --json under
    // AddressSanitizer (the fuzz target).
    std::string json_string(std::string_view text) {
        held_.clear();
        held_.string(text);
        std::ostringstream out;
        held_.write_to(out);
        return out.str();
    }
    JsonStream held_{JsonStream::Held{}};
    std::unordered_map<const FactName*, Pieces> pieces_;
    std::vector<std::pair<const FactName*, const Pieces*>>
        recent_;  // the last launch's, by fact number
};

void write_launch(JsonStream& js, MetricWriter& metrics, FactPieces& pieces,
                  const NcuLaunch& launch, std::size_t index, const ReportJsonExtras& extras) {
    js.raw("{\"id\":");
    js.optional_integer(launch.scope.launch_id);
    js.raw(",\"kernel\":");
    js.string(launch.scope.kernel);
    js.raw(",\"grid\":");
    js.dim3(launch.scope.grid);
    js.raw(",\"block\":");
    js.dim3(launch.scope.block);
    js.raw(",\"scope\":");
    write_scope(js, launch.scope);
    if (launch.process_id) {
        js.raw(",\"process_id\":");
        js.optional_integer(launch.process_id);
    }
    if (!launch.compute_capability.empty()) {
        js.raw(",\"compute_capability\":");
        js.string(launch.compute_capability);
    }
    js.raw(",\"facts\":[");
    std::vector<const LaunchFact*> stalls;
    for (std::size_t i = 0; i < launch.facts.size(); ++i) {
        if (i > 0) {
            js.put(',');
        }
        const LaunchFact& f = launch.facts[i];
        const FactPieces::Pieces& p = pieces.of(f, i);
        js.raw(p.before);
        js.number(f.value);
        js.raw(p.after);
        if (p.stall) {
            stalls.push_back(&f);
        }
    }
    js.raw("],");
    // The three largest stall reasons, as the report states them (ties: by id).
    std::stable_sort(stalls.begin(), stalls.end(),
                     [](const LaunchFact* a, const LaunchFact* b) { return a->value > b->value; });
    js.raw("\"top_stalls\":[");
    for (std::size_t i = 0; i < stalls.size() && i < 3; ++i) {
        js.raw(i == 0 ? "{" : ",{");
        js.key("id");
        js.string(stalls[i]->id());
        js.put(',');
        js.key("value");
        js.number(stalls[i]->value);
        js.put('}');
    }
    js.raw("],\"rules\":[");
    for (std::size_t i = 0; i < launch.rules.size(); ++i) {
        if (i > 0) {
            js.put(',');
        }
        write_rule(js, launch.rules[i]);
    }
    // The values against one list of columns for the report (or per group of launches): a
    // metric costs its value's bytes and `"",`, not its key and unit again.
    js.raw("],");
    metrics.write(js, index);
    js.raw(",\"unmodeled\":");
    js.integer(launch.unmodeled);
    if (extras.roofline_device != nullptr) {
        if (const auto in = roofline_input(launch, extras.roofline_precision)) {
            js.raw(",\"roofline\":");
            write_roofline(js, *in, *extras.roofline_device);
        }
    }
    js.put('}');
}

// What one thread needs to write launches: its own readers and caches.
struct LaunchWriter {
    LaunchWriter(const NcuReport& report, const MetricColumns& columns,
                 const ReportJsonExtras& extras)
        : report(report), extras(extras), metrics(report, columns) {}
    // Launches [begin, end), each after a comma but the first of the report.
    void write(JsonStream& js, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            if (i > 0) {
                js.put(',');
            }
            write_launch(js, metrics, pieces, report.launches[i], i, extras);
        }
    }
    const NcuReport& report;
    const ReportJsonExtras& extras;
    MetricWriter metrics;
    FactPieces pieces;
};

}  // namespace

void write_report_json(const NcuReport& report, std::ostream& out, const ReportJsonExtras& extras) {
    JsonStream js(out);
    nlohmann::json head{{"format_version", std::string(kNcuReportFormat)},
                        {"source", source_to_json(report.source)},
                        {"layout", std::string(layout_name(report.layout))},
                        {"units_row", report.units_row},
                        {"counters_permitted", report.counters_permitted()},
                        {"other_lines", report.other_lines}};
    if (!report.device_name.empty()) {
        head["device_name"] = report.device_name;
    }
    nlohmann::json facts = nlohmann::json::array();
    for (const Fact& f : report.report_facts) {
        facts.push_back(fact_to_json(f));
    }
    head["report_facts"] = std::move(facts);
    if (!report.advice.empty()) {
        head["advice"] = report.advice;
    }
    nlohmann::json unmodeled = nlohmann::json::array();
    for (const Unmodeled& u : report.unmodeled) {
        unmodeled.push_back(unmodeled_to_json(u));
    }
    head["unmodeled"] = std::move(unmodeled);
    head["tool_messages"] = report.tool_messages;
    head["notes"] = report.notes;
    nlohmann::json keys = nlohmann::json::array();
    for (const MetricKey& k : report.keys) {
        nlohmann::json key{{"name", k.name}};
        if (!k.section.empty()) {
            key["section"] = k.section;
        }
        keys.push_back(std::move(key));
    }
    head["metric_keys"] = std::move(keys);
    head["metric_units"] = report.units;
    for (const auto& [name, value] : extras.top.items()) {
        head[name] = value;
    }
    // The small members first, as one object without its closing brace; then the launches.
    std::string text = head.dump();
    text.pop_back();
    js.raw(text);
    js.raw(head.empty() ? "" : ",");
    const MetricColumns columns(report);
    js.key("metric_columns");
    columns.write_columns(js);
    js.raw(",\"launches\":[");
    if (TwoWriters::pay(report.launches.size())) {
        js.flush();
        const auto make_writer = [&]() -> TwoWriters::WriteRange {
            auto writer = std::make_shared<LaunchWriter>(report, columns, extras);
            return [writer](JsonStream& to, std::size_t begin, std::size_t end) {
                writer->write(to, begin, end);
            };
        };
        TwoWriters(report.launches.size(), make_writer, out).run();
    } else {
        LaunchWriter(report, columns, extras).write(js, 0, report.launches.size());
    }
    js.raw("]}\n");
}

}  // namespace cko::profile::ncu
