// The tool versions each importer was tested on (one table), and how a stated version compares.
#pragma once

#include "cko/profile/fact.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile {

// One tested range of one importer: every version v with from <= v whose leading components are
// at most `through`'s ("2025.3" takes 2025.3.0 ... 2025.3.9, not 2025.4). `field` says what is
// compared: "tool_version" (the tool's release; for kineto the torch version that wrote the
// trace) or "schema_version" (the nsys export schema). `evidence` names the fixtures and tests
// that read it, and `widening` why versions between the tested points are taken ("" when none).
struct TestedRange {
    std::string_view tool;  // Source::tool: "ncu", "nsys", "kineto"
    std::string_view field;
    std::string_view from;
    std::string_view through;
    std::string_view evidence;
    std::string_view widening;
};

// The table. docs/profile-traces.md, "Tested versions", states it row by row
// (TestedVersions.TheDocsStateEveryRange checks that).
[[nodiscard]] const std::vector<TestedRange>& tested_ranges();

// The numeric components a version starts with: "2025.3.1.0" -> {2025,3,1,0}, "2.11.0+cu130" ->
// {2,11,0}, "2.5.0a0" -> {2,5,0}; nullopt when it does not start with a digit.
[[nodiscard]] std::optional<std::vector<int>> version_components(std::string_view version);

enum class VersionStatus {
    tested,      // within one of the importer's ranges
    not_stated,  // "": neither the export nor the caller said
    untested,    // stated, and outside every range (or not a version at all)
};

struct VersionCheck {
    VersionStatus status = VersionStatus::not_stated;
    std::string tool;     // as given
    std::string field;    // "tool_version" or "schema_version"
    std::string version;  // as given
    std::string ranges;   // "2020.1.x, 2025.3.x": the importer's ranges, for messages
    // What is unknown or untested, in words: "the NCU version is not stated" / "NCU 1999.9 is
    // outside the versions cko was tested on (...)"; "" when tested.
    std::string problem;
};

// Compares one stated version with the importer's ranges for `field`. A tool with no row for
// `field` is tested whatever the version (nothing is checked for it).
[[nodiscard]] VersionCheck check_tested_version(std::string_view tool, std::string_view field,
                                                std::string_view version);

// The notes a read prints for a source whose version (or, for nsys, export schema) is not stated
// or outside the tested ranges, each naming what is unknown; none when tested. A standalone read
// reads it anyway: it binds nothing.
[[nodiscard]] std::vector<std::string> version_notes(const Source& source);

// "2020.1.x, 2025.3.x" ("2023.2 – 2026.1.x" for a range of several releases).
[[nodiscard]] std::string tested_ranges_text(std::string_view tool, std::string_view field);

// The tool's name in messages: "NCU", "Nsight Systems", "torch" (kineto traces).
[[nodiscard]] std::string tool_display_name(std::string_view tool);

}  // namespace cko::profile
