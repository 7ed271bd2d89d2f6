// The unit table converts every spelling the tools print into base units, and knows what it does
// not know.
#include "cko/profile/fact.hpp"

#include <gtest/gtest.h>

namespace cko::profile {
namespace {

TEST(UnitTable, ConvertsTimeSpellingsToNanoseconds) {
    EXPECT_DOUBLE_EQ(lookup_unit("usecond")->factor, 1e3);
    EXPECT_DOUBLE_EQ(lookup_unit("msecond")->factor, 1e6);
    EXPECT_EQ(lookup_unit("nsecond")->unit, BaseUnit::ns);
}

TEST(UnitTable, ConvertsRatesAndSizes) {
    EXPECT_EQ(lookup_unit("Gbyte/second")->unit, BaseUnit::byte_per_second);
    EXPECT_DOUBLE_EQ(lookup_unit("Gbyte/second")->factor, 1e9);
    EXPECT_DOUBLE_EQ(lookup_unit("Kbyte")->factor, 1e3);
    EXPECT_EQ(lookup_unit("cycle/nsecond")->unit, BaseUnit::hertz);
    EXPECT_DOUBLE_EQ(lookup_unit("Ghz")->factor, 1e9);
}

TEST(UnitTable, UnknownSpellingIsUnknownNotGuessed) {
    EXPECT_FALSE(lookup_unit("furlong/fortnight").has_value());
    EXPECT_FALSE(lookup_unit("USECOND").has_value());
}

TEST(FactJson, CarriesUnitNameAndScope) {
    Fact f{"duration", 2048.0, BaseUnit::ns, Scope{}, "gpu__time_duration.sum"};
    f.scope.kernel = "scale_vec4";
    f.scope.launch_id = 3;
    f.scope.grid = std::array<std::int64_t, 3>{256, 1, 1};
    const auto j = fact_to_json(f);
    EXPECT_EQ(j["unit"], "ns");
    EXPECT_EQ(j["scope"]["kernel"], "scale_vec4");
    EXPECT_EQ(j["scope"]["launch_id"], 3);
    EXPECT_EQ(j["scope"]["grid"][0], 256);
    EXPECT_FALSE(j["scope"].contains("stream"));
}

}  // namespace
}  // namespace cko::profile
