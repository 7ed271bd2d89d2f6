// The ptxas -v line grammar: `Compiling entry function`, `Function properties`, `Used ...`.
#include "cko/compiler/ptxas_log.hpp"

#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cko::compiler {
namespace {

constexpr std::string_view kParserVersion = "cko-ptxas-1";

std::optional<std::int64_t> leading_integer(std::string_view& s) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || ptr == s.data()) {
        return std::nullopt;
    }
    s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
    s = trim(s);
    return value;
}

// "'name' for 'sm_90'" -> (name, sm_90)
bool quoted_pair(std::string_view s, std::string& first, std::string& second) {
    if (s.size() < 2 || s.front() != '\'') {
        return false;
    }
    const std::size_t close = s.find('\'', 1);
    if (close == std::string_view::npos) {
        return false;
    }
    first = std::string(s.substr(1, close - 1));
    std::string_view rest = trim(s.substr(close + 1));
    if (!rest.starts_with("for '") || rest.back() != '\'') {
        return false;
    }
    second = std::string(rest.substr(5, rest.size() - 6));
    return !first.empty() && !second.empty();
}

// One item of a `Used ...` line, e.g. "32 registers", "used 1 barriers", "4096 bytes smem".
bool apply_used_item(std::string_view item, PtxasFunction& f) {
    if (item.starts_with("Used ") || item.starts_with("used ")) {
        item.remove_prefix(5);
    }
    const auto n = leading_integer(item);
    if (!n) {
        return false;
    }
    if (item == "registers") {
        f.registers = *n;
    } else if (item == "barriers") {
        f.barriers = *n;
    } else if (item == "bytes smem") {
        f.shared_bytes = *n;
    } else if (item == "bytes lmem") {
        f.local_bytes = *n;
    } else if (item == "bytes cumulative stack size") {
        f.cumulative_stack_bytes = *n;
    } else if (item.starts_with("bytes cmem[") && item.ends_with("]")) {
        std::string_view bank = item.substr(11, item.size() - 12);
        const auto b = leading_integer(bank);
        if (!b || !bank.empty()) {
            return false;
        }
        f.constant_bytes[static_cast<int>(*b)] = *n;
    } else if (item == "textures" || item == "samplers" || item == "surfaces") {
        return false;  // kept as unmodeled: no fact uses them
    } else {
        return false;
    }
    return true;
}

// "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
bool apply_properties(std::string_view line, PtxasFunction& f) {
    std::size_t matched = 0;
    while (!line.empty()) {
        const std::size_t comma = line.find(',');
        std::string_view item = trim(line.substr(0, comma));
        line = comma == std::string_view::npos ? std::string_view() : line.substr(comma + 1);
        const auto n = leading_integer(item);
        if (!n) {
            return false;
        }
        if (item == "bytes stack frame") {
            f.stack_frame_bytes = *n;
        } else if (item == "bytes spill stores") {
            f.spill_stores_bytes = *n;
        } else if (item == "bytes spill loads") {
            f.spill_loads_bytes = *n;
        } else {
            return false;
        }
        ++matched;
    }
    return matched > 0;
}

void add_fact(PtxasFunction& f, const char* id, const std::optional<std::int64_t>& v,
              profile::BaseUnit unit) {
    if (!v) {
        return;
    }
    profile::Fact fact;
    fact.id = id;
    fact.value = static_cast<double>(*v);
    fact.unit = unit;
    fact.scope.kernel = f.name;
    fact.scope.kernel_mangled = f.symbol;
    f.facts.push_back(std::move(fact));
}

}  // namespace

void build_ptxas_facts(PtxasFunction& f) {
    using U = profile::BaseUnit;
    add_fact(f, "ptxas.registers", f.registers, U::count);
    add_fact(f, "ptxas.barriers", f.barriers, U::count);
    add_fact(f, "ptxas.stack_frame_bytes", f.stack_frame_bytes, U::byte);
    add_fact(f, "ptxas.spill_stores_bytes", f.spill_stores_bytes, U::byte);
    add_fact(f, "ptxas.spill_loads_bytes", f.spill_loads_bytes, U::byte);
    add_fact(f, "ptxas.cumulative_stack_bytes", f.cumulative_stack_bytes, U::byte);
    add_fact(f, "ptxas.shared_bytes", f.shared_bytes, U::byte);
    add_fact(f, "ptxas.local_bytes", f.local_bytes, U::byte);
    if (!f.constant_bytes.empty()) {
        std::int64_t total = 0;
        for (const auto& [bank, bytes] : f.constant_bytes) {
            total += bytes;
        }
        add_fact(f, "ptxas.constant_bytes", total, U::byte);
    }
}

namespace {

class LogParser {
public:
    explicit LogParser(std::string_view source_name) : source_name_(source_name) {}

    void line(std::string_view raw, std::size_t number) {
        const std::string_view text = trim(raw);
        if (text.empty()) {
            return;
        }
        if (properties_for_ != npos && raw.size() > text.size() && !text.starts_with("ptxas")) {
            // The indented line right after `Function properties for X`.
            if (!apply_properties(text, report_.functions[properties_for_])) {
                fail(number, text,
                     "expected 'N bytes stack frame, N bytes spill stores, N bytes spill loads'");
            }
            properties_for_ = npos;
            return;
        }
        properties_for_ = npos;
        std::string_view kind;
        std::string_view body;
        if (!split_ptxas_line(text, kind, body)) {
            ++report_.other_lines;
            return;
        }
        if (kind == "warning") {
            report_.warnings.emplace_back(body);
        } else if (kind == "error" || kind == "fatal") {
            report_.errors.emplace_back(body);
        } else {
            info(body, number);
        }
    }

    PtxasReport finish() {
        if (report_.functions.empty()) {
            throw Error(
                ErrorCode::missing_field,
                fmt::format("{}: no function is reported (no \"Compiling entry function\" or "
                            "\"Function properties for\" line): pass the stderr of "
                            "nvcc -Xptxas -v (or ptxas -v)",
                            source_name_),
                Json{{"path", std::string(source_name_)}});
        }
        for (PtxasFunction& f : report_.functions) {
            build_ptxas_facts(f);
        }
        return std::move(report_);
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    static bool split_ptxas_line(std::string_view text, std::string_view& kind,
                                 std::string_view& body) {
        if (!text.starts_with("ptxas ")) {
            return false;
        }
        std::string_view rest = trim(text.substr(6));
        const std::size_t colon = rest.find(':');
        if (colon == std::string_view::npos) {
            return false;
        }
        kind = trim(rest.substr(0, colon));
        body = trim(rest.substr(colon + 1));
        return kind == "info" || kind == "warning" || kind == "error" || kind == "fatal";
    }

    void info(std::string_view body, std::size_t number) {
        std::string name;
        std::string arch;
        if (body.starts_with("Compiling entry function ") ||
            body.starts_with("Compiling function ")) {
            const bool entry = body.starts_with("Compiling entry");
            const std::string_view rest = body.substr(entry ? 25 : 19);
            if (!quoted_pair(rest, name, arch)) {
                fail(number, body, "expected Compiling entry function 'NAME' for 'sm_NN'");
            }
            arch_ = arch;
            current_ = find_or_add(name, entry);
            return;
        }
        if (body.starts_with("Function properties for ")) {
            const std::string symbol(trim(body.substr(24)));
            properties_for_ = find_or_add(symbol, false);
            return;
        }
        if (body.starts_with("Used ")) {
            if (current_ == npos) {
                fail(number, body, "a 'Used ...' line before any 'Compiling entry function' line");
            }
            PtxasFunction& f = report_.functions[current_];
            std::string_view items = body;
            while (!items.empty()) {
                const std::size_t comma = items.find(',');
                const std::string_view item = trim(items.substr(0, comma));
                items =
                    comma == std::string_view::npos ? std::string_view() : items.substr(comma + 1);
                if (!apply_used_item(item, f)) {
                    f.unmodeled.emplace_back(item);
                }
            }
            return;
        }
        if (body.starts_with("Compile time = ") && current_ != npos) {
            std::string_view t = body.substr(15);
            double ms = 0;
            const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
            if (ec == std::errc() &&
                trim(std::string_view(ptr, t.data() + t.size() - ptr)) == "ms") {
                report_.functions[current_].compile_time_ms = ms;
                return;
            }
        }
        report_.notes.emplace_back(body);
    }

    std::size_t find_or_add(const std::string& symbol, bool entry) {
        for (std::size_t i = report_.functions.size(); i-- > 0;) {
            PtxasFunction& f = report_.functions[i];
            if (f.symbol == symbol && f.arch == arch_) {
                f.entry = f.entry || entry;
                return i;
            }
        }
        PtxasFunction f;
        f.symbol = symbol;
        f.name = demangle(symbol);
        f.arch = arch_;
        f.entry = entry;
        report_.functions.push_back(std::move(f));
        return report_.functions.size() - 1;
    }

    [[noreturn]] void fail(std::size_t number, std::string_view text, std::string_view want) const {
        throw Error(ErrorCode::malformed_input,
                    fmt::format("{}:{}: '{}' is not understood: {}", source_name_, number,
                                valid_utf8(text.substr(0, 200)), want),
                    Json{{"path", std::string(source_name_)}, {"line", number}});
    }

    std::string_view source_name_;
    PtxasReport report_;
    std::string arch_;
    std::size_t current_ = npos;
    std::size_t properties_for_ = npos;
};

Json optional_json(const std::optional<std::int64_t>& v) {
    return v ? Json(*v) : Json();
}

}  // namespace

PtxasReport parse_ptxas_log(std::string_view text, std::string_view report_sha256,
                            std::string_view source_name) {
    LogParser parser(source_name);
    for_each_line(text, [&](std::string_view l, std::size_t n) { parser.line(l, n); });
    PtxasReport report = parser.finish();
    report.source.report_sha256 = std::string(report_sha256);
    report.source.tool = "ptxas";
    report.source.dialect = "ptxas-verbose";
    report.source.parser_version = std::string(kParserVersion);
    return report;
}

Json ptxas_report_to_json(const PtxasReport& report) {
    Json functions = Json::array();
    for (const PtxasFunction& f : report.functions) {
        Json cmem = Json::object();
        for (const auto& [bank, bytes] : f.constant_bytes) {
            cmem[std::to_string(bank)] = bytes;
        }
        Json facts = Json::array();
        for (const profile::Fact& fact : f.facts) {
            facts.push_back(profile::fact_to_json(fact));
        }
        functions.push_back(Json{
            {"symbol", f.symbol},
            {"name", f.name},
            {"arch", f.arch.empty() ? Json() : Json(f.arch)},
            {"entry", f.entry},
            {"registers", optional_json(f.registers)},
            {"barriers", optional_json(f.barriers)},
            {"stack_frame_bytes", optional_json(f.stack_frame_bytes)},
            {"spill_stores_bytes", optional_json(f.spill_stores_bytes)},
            {"spill_loads_bytes", optional_json(f.spill_loads_bytes)},
            {"cumulative_stack_bytes", optional_json(f.cumulative_stack_bytes)},
            {"shared_bytes", optional_json(f.shared_bytes)},
            {"local_bytes", optional_json(f.local_bytes)},
            {"constant_bytes", cmem},
            {"compile_time_ms", f.compile_time_ms ? Json(*f.compile_time_ms) : Json()},
            {"unmodeled", f.unmodeled},
            {"facts", facts},
        });
    }
    return Json{{"format_version", "cko/ptxas-report-v1"},
                {"evidence_stage", "lowered_code"},
                {"source", profile::source_to_json(report.source)},
                {"functions", functions},
                {"warnings", report.warnings},
                {"errors", report.errors},
                {"notes", report.notes},
                {"other_lines", report.other_lines}};
}

}  // namespace cko::compiler
