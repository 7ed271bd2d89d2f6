// The `cko/ncu-report-v2` document written as it goes: per launch, facts and metrics go straight
// from the report (and its text) to the output, never through a DOM.
#include "cko/profile/ncu/ncu_report.hpp"

#include "cko/profile/ncu/byte_scan.hpp"
#include "cko/profile/ncu/csv_tokenizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <ostream>

namespace cko::profile::ncu {
namespace {

// Why not nlohmann: a DOM of every metric of every launch costs ~700 bytes a metric, 10x a 100 MB
// export (bench/ncu_verb_bench.cpp). Strings here are valid UTF-8 already (the parser repairs the
// text first), so escaping is only quotes, backslashes and control characters.
class JsonStream {
public:
    explicit JsonStream(std::ostream& out) : out_(out) { buffer_.reserve(kFlushBytes + 4096); }
    ~JsonStream() { flush(); }
    JsonStream(const JsonStream&) = delete;
    JsonStream& operator=(const JsonStream&) = delete;

    void raw(std::string_view text) {
        buffer_.append(text);
        maybe_flush();
    }
    void string(std::string_view text) {
        buffer_.push_back('"');
        if (byte_scan::find_json_special(text.data(), text.data() + text.size()) ==
            text.data() + text.size()) {
            buffer_.append(text);  // nearly every string: nothing to escape
            buffer_.push_back('"');
            maybe_flush();
            return;
        }
        std::size_t start = 0;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            buffer_.append(text.substr(start, i - start));
            switch (c) {
            case '"':
                buffer_ += "\\\"";
                break;
            case '\\':
                buffer_ += "\\\\";
                break;
            case '\n':
                buffer_ += "\\n";
                break;
            case '\r':
                buffer_ += "\\r";
                break;
            case '\t':
                buffer_ += "\\t";
                break;
            default:
                fmt::format_to(std::back_inserter(buffer_), "\\u{:04x}", c);
            }
            start = i + 1;
        }
        buffer_.append(text.substr(start));
        buffer_.push_back('"');
        maybe_flush();
    }
    void number(double v) {
        if (std::isfinite(v)) {
            fmt::format_to(std::back_inserter(buffer_), "{}", v);
        } else {
            buffer_ += "null";  // as nlohmann writes non-finite numbers
        }
    }
    void integer(std::uint64_t v) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
        buffer_.append(digits, static_cast<std::size_t>(end - digits));
    }
    void signed_integer(std::int64_t v) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
        buffer_.append(digits, static_cast<std::size_t>(end - digits));
    }
    void optional_integer(const std::optional<std::int64_t>& v) {
        if (v) {
            signed_integer(*v);
        } else {
            buffer_ += "null";
        }
    }
    void dim3(const std::optional<std::array<std::int64_t, 3>>& d) {
        if (!d) {
            buffer_ += "null";
            return;
        }
        for (std::size_t i = 0; i < 3; ++i) {
            buffer_ += i == 0 ? '[' : ',';
            signed_integer((*d)[i]);
        }
        buffer_ += ']';
    }
    // `prefix` (such as `,[12,3,`), the value as a JSON string, `]`: one raw-page metric. A value
    // needing no escape is copied with the prefix in one step (nearly every value).
    void metric(std::string_view prefix, std::string_view value) {
        if (byte_scan::find_json_special(value.data(), value.data() + value.size()) !=
            value.data() + value.size()) {
            raw(prefix);
            string(value);
            raw("]");
            return;
        }
        const std::size_t at = buffer_.size();
        buffer_.resize(at + prefix.size() + value.size() + 3);
        char* out = buffer_.data() + at;
        std::memcpy(out, prefix.data(), prefix.size());
        out += prefix.size();
        *out++ = '"';
        std::memcpy(out, value.data(), value.size());
        out += value.size();
        *out++ = '"';
        *out = ']';
        maybe_flush();
    }
    void key(std::string_view name) {
        string(name);
        buffer_.push_back(':');
    }
    void dom(const nlohmann::json& value) { raw(value.dump()); }
    void flush() {
        out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        buffer_.clear();
    }

private:
    static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
    void maybe_flush() {
        if (buffer_.size() >= kFlushBytes) {
            flush();
        }
    }
    std::ostream& out_;
    std::string buffer_;
};

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
                prefixes_.push_back(fmt::format(",[{},{},", layout.keys[m], layout.units[m]));
            }
        }
    }

    void write(JsonStream& js, const NcuLaunch& launch) {
        js.raw("[");
        if (report_.text.empty()) {
            js.raw("]");
            return;
        }
        const MetricLayout& layout = report_.metric_layout;
        bool first = true;
        for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {
            tokenizer_.seek(static_cast<std::size_t>(launch.metric_rows[r]));
            if (!tokenizer_.next(row_)) {
                break;
            }
            if (report_.layout == NcuLayout::raw) {
                for (std::size_t m = 0; m < layout.columns.size(); ++m) {
                    const std::string_view prefix = prefixes_[m];
                    js.metric(first ? prefix.substr(1) : prefix, cell(layout.columns[m]));
                    first = false;
                }
                continue;
            }
            const bool indexed = r < launch.metric_keys.size() && r < launch.metric_units.size();
            js.raw(first ? "[" : ",[");
            first = false;
            js.integer(indexed ? launch.metric_keys[r] : 0);
            js.raw(",");
            js.integer(indexed ? launch.metric_units[r] : 0);
            js.raw(",");
            js.string(cell(layout.value));
            js.raw("]");
        }
        js.raw("]");
    }

private:
    [[nodiscard]] std::string_view cell(std::size_t i) const {
        return i < row_.cells.size() ? row_.cells[i] : std::string_view();
    }

    const NcuReport& report_;
    CsvTokenizer tokenizer_;
    CsvRow row_;
    std::vector<std::string> prefixes_;
};

void write_launch(JsonStream& js, MetricWriter& metrics, const NcuLaunch& launch,
                  const nlohmann::json& extra) {
    js.raw("{");
    js.key("id");
    js.optional_integer(launch.scope.launch_id);
    js.raw(",");
    js.key("kernel");
    js.string(launch.scope.kernel);
    js.raw(",");
    js.key("grid");
    js.dim3(launch.scope.grid);
    js.raw(",");
    js.key("block");
    js.dim3(launch.scope.block);
    js.raw(",");
    js.key("scope");
    js.dom(scope_to_json(launch.scope));
    if (launch.process_id) {
        js.raw(",");
        js.key("process_id");
        js.optional_integer(launch.process_id);
    }
    if (!launch.compute_capability.empty()) {
        js.raw(",");
        js.key("compute_capability");
        js.string(launch.compute_capability);
    }
    js.raw(",");
    js.key("facts");
    js.raw("[");
    std::vector<const LaunchFact*> stalls;
    bool first = true;
    for (const LaunchFact& f : launch.facts) {
        js.raw(first ? "{" : ",{");
        first = false;
        js.key("id");
        js.string(f.id);
        js.raw(",");
        js.key("value");
        js.number(f.value);
        js.raw(",");
        js.key("unit");
        js.string(base_unit_name(f.unit));
        js.raw(",");
        js.key("metric");
        js.string(f.metric);
        js.raw("}");
        if (f.id.starts_with("stall.")) {
            stalls.push_back(&f);
        }
    }
    js.raw("],");
    // The three largest stall reasons, as the report states them (ties: by id).
    std::stable_sort(stalls.begin(), stalls.end(),
                     [](const LaunchFact* a, const LaunchFact* b) { return a->value > b->value; });
    js.key("top_stalls");
    js.raw("[");
    for (std::size_t i = 0; i < stalls.size() && i < 3; ++i) {
        js.raw(i == 0 ? "{" : ",{");
        js.key("id");
        js.string(stalls[i]->id);
        js.raw(",");
        js.key("value");
        js.number(stalls[i]->value);
        js.raw("}");
    }
    js.raw("],");
    js.key("rules");
    nlohmann::json rules = nlohmann::json::array();
    for (const RuleFinding& r : launch.rules) {
        rules.push_back(rule_to_json(r));
    }
    js.dom(rules);
    js.raw(",");
    js.key("metrics");
    // [key, unit, "value"]: names and units once at the top (metric_keys, metric_units), so a
    // metric costs its few value bytes plus `[key,unit,""]`, not its name and unit again.
    metrics.write(js, launch);
    js.raw(",");
    js.key("unmodeled");
    js.integer(launch.unmodeled);
    if (extra.is_object()) {
        for (const auto& [name, value] : extra.items()) {
            js.raw(",");
            js.key(name);
            js.dom(value);
        }
    }
    js.raw("}");
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
    for (std::size_t i = 0; i < report.launches.size(); ++i) {
        if (i > 0) {
            js.raw(",");
        }
        write_launch(js, metrics, report.launches[i],
                     extras.launch ? extras.launch(i) : nlohmann::json());
    }
    js.raw("]}\n");
}

}  // namespace cko::profile::ncu
