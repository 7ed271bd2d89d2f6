// The `cko/ncu-report-v2` document written as it goes: per launch, facts and metrics go straight
// from the report (and its text) to the output, never through a DOM.
#include "cko/profile/ncu/ncu_report.hpp"

#include "cko/profile/ncu/byte_scan.hpp"
#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/json_stream.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/profile/roofline.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_map>

namespace cko::profile::ncu {
namespace {

// Every metric of every launch, read back from the text with one tokenizer for the whole report.
// A raw page's metric cell becomes `[key,unit,"value"]`: the `[key,unit,` of each column is
// formatted once, and the value is copied as it stands when it needs no escape (nearly always).
class MetricWriter {
public:
    explicit MetricWriter(const NcuReport& report)
        : report_(report), tokenizer_(report.text, CsvLimits{report.text.size() + 1}) {
        const MetricLayout& layout = report.metric_layout;
        if (report.layout == NcuLayout::raw) {
            prefixes_.reserve(layout.columns.size());
            for (std::size_t m = 0; m < layout.columns.size(); ++m) {
                Prefix p;
                const std::string text = fmt::format(",[{},{},", layout.keys[m], layout.units[m]);
                p.size = std::min(text.size(), sizeof p.text);
                std::memcpy(p.text, text.data(), p.size);
                prefixes_.push_back(p);
                longest_prefix_ = std::max(longest_prefix_, text.size());
            }
        }
    }

    void write(JsonStream& js, const NcuLaunch& launch) {
        js.put('[');
        if (report_.text.empty()) {
            js.put(']');
            return;
        }
        const MetricLayout& layout = report_.metric_layout;
        bool first = true;
        for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {
            // A details row is read back from its value cell on (its first cell then), not
            // from its start: the cells before it are a dozen names already known.
            const std::uint32_t value_at = r < launch.metric_value_at.size()
                                               ? launch.metric_value_at[r]
                                               : NcuLaunch::kValueAtUnknown;
            const bool from_value =
                report_.layout == NcuLayout::details && value_at != NcuLaunch::kValueAtUnknown;
            tokenizer_.seek(static_cast<std::size_t>(launch.metric_rows[r]) +
                            (from_value ? value_at : 0));
            if (!tokenizer_.next(row_)) {
                break;
            }
            if (report_.layout == NcuLayout::raw) {
                write_raw_row(js, first);
                continue;
            }
            const bool indexed = r < launch.metric_keys.size() && r < launch.metric_units.size();
            js.raw(first ? "[" : ",[");
            first = false;
            js.integer(indexed ? launch.metric_keys[r] : 0);
            js.put(',');
            js.integer(indexed ? launch.metric_units[r] : 0);
            js.put(',');
            js.string(cell(from_value ? 0 : layout.value));
            js.put(']');
        }
        js.put(']');
    }

private:
    // Longest prefix copied as 16 bytes, longest value as 32: fixed-size copies compile to a
    // couple of vector moves, a memcpy call per metric was a fifth of the --json time.
    struct Prefix {
        char text[16];
        std::size_t size = 0;
    };

    // One raw row's metrics. Every value a fast copy takes lies in the row's own bytes, so the
    // row's output fits in its bytes plus a prefix and `"]` per metric: room is asked for once per
    // row (again after a metric written the slow way), and each metric is a few stores.
    void write_raw_row(JsonStream& js, bool& first) {
        const MetricLayout& layout = report_.metric_layout;
        const std::string_view text = report_.text;
        const char* const text_end = text.data() + text.size();
        const std::size_t room = (tokenizer_.position() - row_.offset) +
                                 layout.columns.size() * (longest_prefix_ + 3) + 64;
        char* out = js.reserve(room);
        for (std::size_t m = 0; m < layout.columns.size(); ++m) {
            const std::string_view value = cell(layout.columns[m]);
            const Prefix& prefix = prefixes_[m];
            const std::less<const char*> before;  // a total order, also for scratch pointers
            const bool in_text = !before(value.data(), text.data()) &&
                                 !before(text_end, value.data() + value.size());
            // Values of up to 16 bytes inside the text are checked 16 bytes at once.
            const bool fast = in_text && prefix.size < sizeof prefix.text &&
                              !(value.size() <= 16 && text_end - value.data() >= 16
                                    ? byte_scan::json_special_in_16(value.data(), value.size())
                                    : JsonStream::needs_escape(value));
            if (!fast) [[unlikely]] {
                // A value unescaped from "" (not in the row's bytes), a long prefix, or a value
                // needing escapes: written piece by piece.
                js.commit(out);
                const std::string p = fmt::format(",[{},{},", layout.keys[m], layout.units[m]);
                js.raw(std::string_view(p).substr(first ? 1 : 0));
                js.string(value);
                js.put(']');
                first = false;
                out = js.reserve(room);
                continue;
            }
            if (first) {
                std::memcpy(out, prefix.text + 1, sizeof prefix.text - 1);
                out += prefix.size - 1;
                first = false;
            } else {
                std::memcpy(out, prefix.text, sizeof prefix.text);
                out += prefix.size;
            }
            *out++ = '"';
            if (value.size() <= 32 && text_end - value.data() >= 32) {
                std::memcpy(out, value.data(), 32);
            } else {
                std::memcpy(out, value.data(), value.size());
            }
            out += value.size();
            *out++ = '"';
            *out++ = ']';
        }
        js.commit(out);
    }

    [[nodiscard]] std::string_view cell(std::size_t i) const {
        return i < row_.cells.size() ? row_.cells[i] : std::string_view();
    }

    const NcuReport& report_;
    CsvTokenizer tokenizer_;
    CsvRow row_;
    std::vector<Prefix> prefixes_;
    std::size_t longest_prefix_ = 0;
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
// around the number are formatted once per (id, unit, metric), not once per launch (a 100 MB raw
// page has 750,000 facts of a few dozen kinds). Ids and metrics are interned by the report, so a
// piece is found by the strings' addresses.
class FactPieces {
public:
    struct Pieces {
        std::string before;  // {"id":"duration","value":
        std::string after;   // ,"unit":"ns","metric":"gpu__time_duration.sum"}
    };

    const Pieces& of(const LaunchFact& f) {
        const Key key{f.id.data(), f.id.size(), f.metric.data(), f.metric.size(), f.unit};
        const auto it = pieces_.find(key);
        if (it != pieces_.end()) {
            return it->second;
        }
        Pieces p;
        p.before = R"({"id":)" + json_string(f.id) + R"(,"value":)";
        p.after = R"(,"unit":)" + json_string(base_unit_name(f.unit)) + R"(,"metric":)" +
                  json_string(f.metric) + "}";
        return pieces_.emplace(key, std::move(p)).first->second;
    }

private:
    struct Key {
        const char* id;
        std::size_t id_size;
        const char* metric;
        std::size_t metric_size;
        BaseUnit unit;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept {
            const auto mix = [](std::size_t h, std::size_t v) {
                return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
            };
            std::size_t h = std::hash<const void*>{}(k.id);
            h = mix(h, k.id_size);
            h = mix(h, std::hash<const void*>{}(k.metric));
            h = mix(h, k.metric_size);
            return mix(h, static_cast<std::size_t>(k.unit));
        }
    };
    // The same escaping as JsonStream::string.
    static std::string json_string(std::string_view text) {
        std::ostringstream out;
        {
            JsonStream js(out);
            js.string(text);
        }
        return out.str();
    }
    std::unordered_map<Key, Pieces, KeyHash> pieces_;
};

void write_launch(JsonStream& js, MetricWriter& metrics, FactPieces& pieces,
                  const NcuLaunch& launch, const ReportJsonExtras& extras,
                  const nlohmann::json& extra) {
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
    bool first = true;
    for (const LaunchFact& f : launch.facts) {
        if (!first) {
            js.put(',');
        }
        first = false;
        const FactPieces::Pieces& p = pieces.of(f);
        js.raw(p.before);
        js.number(f.value);
        js.raw(p.after);
        if (f.id.starts_with("stall.")) {
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
        js.string(stalls[i]->id);
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
    // [key, unit, "value"]: names and units once at the top (metric_keys, metric_units), so a
    // metric costs its few value bytes plus `[key,unit,""]`, not its name and unit again.
    js.raw("],\"metrics\":");
    metrics.write(js, launch);
    js.raw(",\"unmodeled\":");
    js.integer(launch.unmodeled);
    if (extras.roofline_device != nullptr) {
        if (const auto in = roofline_input(launch, extras.roofline_precision)) {
            js.raw(",\"roofline\":");
            write_roofline(js, *in, *extras.roofline_device);
        }
    }
    if (extra.is_object()) {
        for (const auto& [name, value] : extra.items()) {
            js.put(',');
            js.key(name);
            js.dom(value);
        }
    }
    js.put('}');
}

}  // namespace

void write_report_json(const NcuReport& report, std::ostream& out, const ReportJsonExtras& extras) {
    JsonStream js(out);
    nlohmann::json head{{"format_version", "cko/ncu-report-v2"},
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
    js.key("launches");
    js.raw("[");
    MetricWriter metrics(report);
    FactPieces pieces;
    for (std::size_t i = 0; i < report.launches.size(); ++i) {
        if (i > 0) {
            js.put(',');
        }
        write_launch(js, metrics, pieces, report.launches[i], extras,
                     extras.launch ? extras.launch(i) : nlohmann::json());
    }
    js.raw("]}\n");
}

}  // namespace cko::profile::ncu
