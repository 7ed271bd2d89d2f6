// The tested tool-version ranges per importer: what the fixtures and tests cover, and nothing more.
#include "cko/profile/tested_versions.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::profile {
namespace {

// A range's `through` takes every later component ("2025.3" = 2025.3.x), because patch releases
// of one minor keep its report layout; any other widening is stated in the row's `widening`.
const std::vector<TestedRange> kTestedRanges = {
    {"ncu", "tool_version", "2020.1", "2020.1",
     "tests/fixtures/ncu/ncu_details_2020_1.csv (the details page with the section and metric "
     "names of NCU 2019.5-2020.1; NcuCsv tests)",
     ""},
    {"ncu", "tool_version", "2025.3", "2025.3",
     "tests/fixtures/ncu/ncu_raw.csv, ncu_details.csv (real H200 exports, NCU 2025.3.1.0; "
     "ncu_csv_test, cli_ncu, cli_profile_collect)",
     ""},
    {"nsys", "tool_version", "2023.2", "2026.1",
     "tests/fixtures/nsys/schema_3_1_7_export_meta_data.sql (2023.2.3), vec.sqlite (a real H200 "
     "export, 2025.3.2.0), schema_3_24_14.sql (2026.1.1.204); nsys_export_test, cli_trace, "
     "cli_nsys_schema",
     "the reader checks every table and column it reads, by name and type, and refuses a missing "
     "one naming it, so a release between the tested ones is read right or refused in words"},
    {"nsys", "schema_version", "3.1.7", "3.25",
     "export schemas 3.1.7, 3.20.3 (vec.sqlite), 3.24.14 and 3.25.0 (the databases "
     "nsys_export_test builds)",
     "as for the release: columns are probed by name and type, not pinned to a schema"},
    {"kineto", "tool_version", "1.8", "1.9",
     "tests/fixtures/torch/torch18_camelcase_trace.json, torch19_driver_annotation_trace.json "
     "(the CamelCase categories and driver annotations of torch 1.8-1.9; cli_torch_dialects)",
     ""},
    {"kineto", "tool_version", "2.11", "2.11",
     "tests/fixtures/torch/torch_trace.json, h200_matmul_trace.json.gz (real H200 traces, torch "
     "2.11; kineto tests, cli_trace, cli_map)",
     ""},
};

// <0, 0, >0 as a is below, equal to or above b; missing components count as 0.
int compare_components(const std::vector<int>& a, const std::vector<int>& b) {
    const std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const int x = i < a.size() ? a[i] : 0;
        const int y = i < b.size() ? b[i] : 0;
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return 0;
}

bool within(const TestedRange& range, const std::vector<int>& version) {
    const auto from = version_components(range.from);
    const auto through = version_components(range.through);
    if (!from || !through || compare_components(version, *from) < 0) {
        return false;
    }
    std::vector<int> leading = version;
    leading.resize(through->size(), 0);
    return compare_components(leading, *through) <= 0;
}

std::vector<const TestedRange*> rows_of(std::string_view tool, std::string_view field) {
    std::vector<const TestedRange*> out;
    for (const TestedRange& r : kTestedRanges) {
        if (r.tool == tool && r.field == field) {
            out.push_back(&r);
        }
    }
    return out;
}

std::string field_words(std::string_view tool, std::string_view field) {
    return field == "schema_version" ? tool_display_name(tool) + " export schema"
                                     : tool_display_name(tool);
}

}  // namespace

const std::vector<TestedRange>& tested_ranges() {
    return kTestedRanges;
}

std::optional<std::vector<int>> version_components(std::string_view version) {
    std::vector<int> out;
    std::size_t i = 0;
    while (i < version.size() && version[i] >= '0' && version[i] <= '9') {
        int value = 0;
        std::size_t digits = 0;
        while (i < version.size() && version[i] >= '0' && version[i] <= '9' && digits < 9) {
            value = value * 10 + (version[i] - '0');
            ++i;
            ++digits;
        }
        out.push_back(value);
        if (i + 1 < version.size() && version[i] == '.' && version[i + 1] >= '0' &&
            version[i + 1] <= '9') {
            ++i;
            continue;
        }
        break;
    }
    if (out.empty()) {
        return std::nullopt;
    }
    return out;
}

VersionCheck check_tested_version(std::string_view tool, std::string_view field,
                                  std::string_view version) {
    VersionCheck c;
    c.tool = tool;
    c.field = field;
    c.version = version;
    c.ranges = tested_ranges_text(tool, field);
    const std::vector<const TestedRange*> rows = rows_of(tool, field);
    if (rows.empty()) {
        c.status = VersionStatus::tested;
        return c;
    }
    const std::string what = field_words(tool, field);
    if (version.empty()) {
        c.status = VersionStatus::not_stated;
        c.problem =
            fmt::format("the {} version is not stated (cko was tested on {})", what, c.ranges);
        return c;
    }
    const auto components = version_components(version);
    const bool ok = components && std::any_of(rows.begin(), rows.end(), [&](const auto* r) {
                        return within(*r, *components);
                    });
    c.status = ok ? VersionStatus::tested : VersionStatus::untested;
    if (!ok) {
        c.problem = fmt::format("{} {} is outside the versions cko was tested on ({})", what,
                                version, c.ranges);
    }
    return c;
}

std::vector<std::string> version_notes(const Source& source) {
    std::vector<VersionCheck> checks{
        check_tested_version(source.tool, "tool_version", source.tool_version)};
    constexpr std::string_view kNsysDialect = "nsys-sqlite-";
    if (source.tool == "nsys" && source.dialect.starts_with(kNsysDialect)) {
        checks.push_back(check_tested_version(source.tool, "schema_version",
                                              source.dialect.substr(kNsysDialect.size())));
    }
    std::vector<std::string> notes;
    for (const VersionCheck& c : checks) {
        if (c.status == VersionStatus::not_stated && c.field == "tool_version") {
            notes.push_back(
                c.problem +
                ": read anyway; to keep it as a Target's evidence, pass --tool-version");
        } else if (c.status != VersionStatus::tested) {
            notes.push_back(c.problem + ": read anyway, its facts not checked for that version");
        }
    }
    return notes;
}

std::string tested_ranges_text(std::string_view tool, std::string_view field) {
    std::vector<std::string> parts;
    for (const TestedRange* r : rows_of(tool, field)) {
        parts.push_back(r->from == r->through ? fmt::format("{}.x", r->through)
                                              : fmt::format("{} - {}.x", r->from, r->through));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::string tool_display_name(std::string_view tool) {
    if (tool == "ncu") {
        return "NCU";
    }
    if (tool == "nsys") {
        return "Nsight Systems";
    }
    if (tool == "kineto") {
        return "torch";
    }
    return std::string(tool);
}

}  // namespace cko::profile
