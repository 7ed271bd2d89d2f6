// `cuobjdump -res-usage` output: "Function NAME:" then "REG:16 STACK:0 SHARED:4096 ..." per arch.
#include "cko/compiler/ptxas_log.hpp"

#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cko::compiler {
namespace {

bool apply_item(std::string_view key, std::int64_t value, PtxasFunction& f) {
    if (key == "REG") {
        f.registers = value;
    } else if (key == "STACK") {
        f.stack_frame_bytes = value;
    } else if (key == "SHARED") {
        f.shared_bytes = value;
    } else if (key == "LOCAL") {
        f.local_bytes = value;
    } else if (key.starts_with("CONSTANT[") && key.ends_with("]")) {
        int bank = 0;
        const std::string_view b = key.substr(9, key.size() - 10);
        const auto [ptr, ec] = std::from_chars(b.data(), b.data() + b.size(), bank);
        if (ec != std::errc() || ptr != b.data() + b.size()) {
            return false;
        }
        f.constant_bytes[bank] = value;
    } else {
        return false;
    }
    return true;
}

}  // namespace

PtxasReport parse_res_usage(std::string_view text, std::string_view report_sha256,
                            std::string_view source_name) {
    PtxasReport report;
    std::string arch;
    bool expect_usage = false;
    for_each_line(text, [&](std::string_view raw, std::size_t number) {
        const std::string_view s = trim(raw);
        if (s.starts_with("arch = ")) {
            arch = std::string(trim(s.substr(7)));
            expect_usage = false;
            return;
        }
        if (s.starts_with("Function ") && s.ends_with(":")) {
            PtxasFunction f;
            f.symbol = std::string(trim(s.substr(9, s.size() - 10)));
            f.name = demangle(f.symbol);
            f.arch = arch;
            f.entry = true;  // cuobjdump lists kernels and device functions alike; ptxas -v tells
                             // them apart
            report.functions.push_back(std::move(f));
            expect_usage = true;
            return;
        }
        if (expect_usage && s.starts_with("REG:")) {
            PtxasFunction& f = report.functions.back();
            std::string_view rest = s;
            while (!rest.empty()) {
                const std::size_t space = rest.find(' ');
                const std::string_view item = rest.substr(0, space);
                rest =
                    space == std::string_view::npos ? std::string_view() : trim(rest.substr(space));
                const std::size_t colon = item.rfind(':');
                std::int64_t value = 0;
                const std::string_view v =
                    colon == std::string_view::npos ? std::string_view() : item.substr(colon + 1);
                const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
                if (colon == std::string_view::npos || ec != std::errc() ||
                    ptr != v.data() + v.size()) {
                    throw Error(ErrorCode::malformed_input,
                                fmt::format("{}:{}: '{}' is not KEY:NUMBER", source_name, number,
                                            valid_utf8(item.substr(0, 100))),
                                Json{{"path", std::string(source_name)}, {"line", number}});
                }
                if (!apply_item(item.substr(0, colon), value, f) && value != 0) {
                    f.unmodeled.emplace_back(item);
                }
            }
            expect_usage = false;
            return;
        }
        if (s.empty() || s.starts_with("Fatbin") || s.starts_with("==") ||
            s.starts_with("code version") || s.starts_with("host =") ||
            s.starts_with("compile_size") || s == "Resource usage:" || s == "Common:" ||
            s.starts_with("GLOBAL:") || s.starts_with("identifier") || s.starts_with("producer")) {
            if (s.starts_with("GLOBAL:")) {
                report.notes.push_back(fmt::format("{} ({})", s, arch.empty() ? "-" : arch));
            }
            return;
        }
        ++report.other_lines;
    });
    if (report.functions.empty()) {
        throw Error(ErrorCode::missing_field,
                    fmt::format("{}: no \"Function NAME:\" with resource usage: pass the output of "
                                "`cuobjdump -res-usage BINARY`",
                                source_name),
                    Json{{"path", std::string(source_name)}});
    }
    for (PtxasFunction& f : report.functions) {
        build_ptxas_facts(f);
    }
    report.source.report_sha256 = std::string(report_sha256);
    report.source.tool = "cuobjdump";
    report.source.dialect = "cuobjdump-res-usage";
    report.source.parser_version = "cko-res-usage-1";
    return report;
}

PtxasReport parse_resource_report(std::string_view text, std::string_view report_sha256,
                                  std::string_view source_name) {
    if (text.find("Resource usage:") != std::string_view::npos) {
        return parse_res_usage(text, report_sha256, source_name);
    }
    return parse_ptxas_log(text, report_sha256, source_name);
}

}  // namespace cko::compiler
