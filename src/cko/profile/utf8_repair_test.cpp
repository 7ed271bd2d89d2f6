// Invalid UTF-8 (Latin-1 bytes, overlongs, surrogates, cut sequences) becomes U+FFFD; valid text is
// untouched.
#include "cko/profile/utf8_repair.hpp"

#include <gtest/gtest.h>

namespace cko::profile {
namespace {

TEST(Utf8Repair, ValidTextIsKeptAsIs) {
    for (const std::string_view s : {"", "plain ascii text of some length", "caf\xC3\xA9",
                                     "\xE2\x82\xAC 10", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF"}) {
        EXPECT_TRUE(is_valid_utf8(s)) << s;
        std::string copy(s);
        EXPECT_EQ(repair_utf8_in_place(copy), 0u);
        EXPECT_EQ(copy, s);
    }
}

TEST(Utf8Repair, Latin1BytesBecomeReplacementCharacters) {
    std::string name = "Jos\xE9 M\xFCller";  // Latin-1 é and ü
    EXPECT_FALSE(is_valid_utf8(name));
    EXPECT_EQ(repair_utf8_in_place(name), 2u);
    EXPECT_EQ(name, "Jos\xEF\xBF\xBD M\xEF\xBF\xBDller");
    EXPECT_TRUE(is_valid_utf8(name));
}

TEST(Utf8Repair, MalformedSequencesAreRefusedByteByByte) {
    for (const std::string_view bad :
         {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5", "\x80",
          "\xE2\x82", "abcdefgh\xFF"}) {
        EXPECT_FALSE(is_valid_utf8(bad)) << testing::PrintToString(bad);
        std::string out;
        EXPECT_GT(repair_utf8(bad, out), 0u);
        EXPECT_TRUE(is_valid_utf8(out));
    }
}

TEST(Utf8Repair, RepairsAreCountedForTheNote) {
    Utf8Repairs repairs;
    std::string scratch;
    EXPECT_EQ(repairs.repaired("fine", scratch), "fine");
    EXPECT_TRUE(repairs.note().empty());
    EXPECT_EQ(repairs.repaired("\xE9t\xE9", scratch), "\xEF\xBF\xBDt\xEF\xBF\xBD");
    std::string s = "\xFF";
    repairs.repair(s);
    EXPECT_EQ(repairs.strings(), 2u);
    EXPECT_EQ(repairs.bytes(), 3u);
    EXPECT_NE(repairs.note().find("2 string(s)"), std::string::npos);
}

}  // namespace
}  // namespace cko::profile
