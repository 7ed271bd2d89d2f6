// The tested-version table: what each importer's fixtures cover is tested, anything else is not,
// and the docs state every row.
#include "cko/profile/tested_versions.hpp"

#include "cko/profile/nsys/nsys_database.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace cko::profile {
namespace {

TEST(TestedVersions, ReadsTheNumbersAVersionStartsWith) {
    EXPECT_EQ(version_components("2025.3.1.0"), (std::vector<int>{2025, 3, 1, 0}));
    EXPECT_EQ(version_components("2.11.0+cu130"), (std::vector<int>{2, 11, 0}));
    EXPECT_EQ(version_components("2.5.0a0"), (std::vector<int>{2, 5, 0}));
    EXPECT_EQ(version_components("3."), (std::vector<int>{3}));
    EXPECT_FALSE(version_components("").has_value());
    EXPECT_FALSE(version_components("v2.1").has_value());
}

TEST(TestedVersions, TheFixturesVersionsAreTestedAndOthersAreNot) {
    EXPECT_EQ(check_tested_version("ncu", "tool_version", "2025.3.1.0").status,
              VersionStatus::tested);
    EXPECT_EQ(check_tested_version("ncu", "tool_version", "2020.1").status, VersionStatus::tested);
    EXPECT_EQ(check_tested_version("ncu", "tool_version", "2025.4.0").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("ncu", "tool_version", "2023.1.0").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("nsys", "tool_version", "2025.3.2.0").status,
              VersionStatus::tested);
    EXPECT_EQ(check_tested_version("nsys", "tool_version", "2026.2.0").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("kineto", "tool_version", "2.11.0+cu130").status,
              VersionStatus::tested);
    EXPECT_EQ(check_tested_version("kineto", "tool_version", "1.8.1").status,
              VersionStatus::tested);
    EXPECT_EQ(check_tested_version("kineto", "tool_version", "2.5.1").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("kineto", "tool_version", "torch").status,
              VersionStatus::untested);
}

TEST(TestedVersions, EveryNsysSchemaWithAFixtureIsInTheRangeAndTheNextMajorIsNot) {
    for (const std::string& schema : nsys::schema_versions_with_fixtures()) {
        EXPECT_EQ(check_tested_version("nsys", "schema_version", schema).status,
                  VersionStatus::tested)
            << schema;
    }
    EXPECT_EQ(check_tested_version("nsys", "schema_version", "3.26.0").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("nsys", "schema_version", "3.1.6").status,
              VersionStatus::untested);
    EXPECT_EQ(check_tested_version("nsys", "schema_version", "4.0").status,
              VersionStatus::untested);
}

TEST(TestedVersions, AProblemNamesTheVersionSeenAndTheRanges) {
    const VersionCheck future = check_tested_version("ncu", "tool_version", "1999.9");
    EXPECT_EQ(future.problem,
              "NCU 1999.9 is outside the versions cko was tested on (2020.1.x, 2025.3.x)");
    const VersionCheck none = check_tested_version("kineto", "tool_version", "");
    EXPECT_EQ(none.status, VersionStatus::not_stated);
    EXPECT_EQ(none.problem,
              "the torch version is not stated (cko was tested on 1.8 - 1.9.x, 2.11.x)");
    EXPECT_EQ(check_tested_version("nsys", "schema_version", "").problem,
              "the Nsight Systems export schema version is not stated (cko was tested on 3.1.7 - "
              "3.25.x)");
}

TEST(TestedVersions, AToolWithoutARowIsNotChecked) {
    EXPECT_EQ(check_tested_version("map", "tool_version", "").status, VersionStatus::tested);
}

TEST(TestedVersions, TheDocsStateEveryRange) {
    const std::string text = test::read_file("docs/profile-traces.md");
    ASSERT_FALSE(text.empty()) << "run from the source tree";
    for (const TestedRange& r : tested_ranges()) {
        const std::string range = r.from == r.through ? fmt::format("{}.x", r.through)
                                                      : fmt::format("{} - {}.x", r.from, r.through);
        const std::string row = fmt::format("| `{}` | `{}` | {} |", r.tool, r.field, range);
        EXPECT_NE(text.find(row), std::string::npos)
            << "docs/profile-traces.md has no row starting " << row;
    }
}

}  // namespace
}  // namespace cko::profile
