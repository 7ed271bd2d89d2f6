// The error table: one spelling per code, round-trips, and exit classes as DESIGN.md §2 says.
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <set>

namespace cko {
namespace {

TEST(ErrorCodes, EveryNameRoundTripsAndIsUnique) {
    std::set<std::string_view> seen;
    for (int i = 0; i <= static_cast<int>(ErrorCode::internal); ++i) {
        const auto code = static_cast<ErrorCode>(i);
        const auto name = error_code_name(code);
        EXPECT_TRUE(seen.insert(name).second) << name;
        EXPECT_EQ(error_code_from_name(name), code);
    }
    EXPECT_FALSE(error_code_from_name("no_such_code").has_value());
}

TEST(ErrorCodes, ExitClassesFollowTheDesign) {
    EXPECT_EQ(Error(ErrorCode::json_duplicate_key, "x").exit_code(), 2);
    EXPECT_EQ(Error(ErrorCode::spawn_failed, "x").exit_code(), 3);
    EXPECT_EQ(Error(ErrorCode::timed_out, "x").exit_code(), 4);
}

TEST(ErrorJson, HasCodeMessageAndDetails) {
    const Error e(ErrorCode::unsafe_path, "cases.ids[0]: bad",
                  nlohmann::json{{"field", "cases.ids[0]"}});
    const auto j = e.to_json();
    EXPECT_EQ(j["error"]["code"], "unsafe_path");
    EXPECT_EQ(j["error"]["message"], "cases.ids[0]: bad");
    EXPECT_EQ(j["error"]["details"]["field"], "cases.ids[0]");
}

TEST(ErrorJson, NonObjectDetailsAreWrapped) {
    const Error e(ErrorCode::internal, "m", nlohmann::json(42));
    EXPECT_EQ(e.details()["value"], 42);
}

}  // namespace
}  // namespace cko
