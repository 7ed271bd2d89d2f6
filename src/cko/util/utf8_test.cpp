// UTF-8: ill-formed bytes replaced, well-formed text untouched, tails never cut inside a character.
#include "cko/util/utf8.hpp"

#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko {
namespace {

TEST(Utf8, WellFormedTextIsKept) {
    EXPECT_TRUE(is_valid_utf8("plain \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
    EXPECT_EQ(utf8_or_replaced("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Utf8, IllFormedSequencesAreRefusedAndReplaced) {
    EXPECT_FALSE(is_valid_utf8("\xFF"));
    EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
    EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(is_valid_utf8("ab\xE2\x82"));        // cut at the end
    EXPECT_EQ(utf8_or_replaced("a\xFF"
                               "b"),
              "a\xEF\xBF\xBD"
              "b");
    // One U+FFFD per maximal ill-formed subpart: a cut 3-byte character is one replacement.
    EXPECT_EQ(utf8_or_replaced("x\xE2\x82y"), "x\xEF\xBF\xBDy");
    EXPECT_TRUE(is_valid_utf8(utf8_or_replaced("\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80\xFE")));
}

TEST(Utf8, TailNeverStartsInsideACharacter) {
    const std::string text = "\xE2\x82\xAC\xE2\x82\xAC";  // two euro signs, 6 bytes
    EXPECT_EQ(utf8_tail(text, 5), "\xE2\x82\xAC");
    EXPECT_EQ(utf8_tail(text, 4), "\xE2\x82\xAC");
    EXPECT_EQ(utf8_tail(text, 3), "\xE2\x82\xAC");
    EXPECT_EQ(utf8_tail(text, 2), "");
    EXPECT_EQ(utf8_tail(text, 6), text);
}

TEST(Utf8, JsonStringsAndKeysAreMadeValid) {
    const Json j = json_with_valid_utf8(Json{{"k\xFF", {std::string("v\xFE"), 1}}});
    EXPECT_EQ(j.at("k\xEF\xBF\xBD")[0], "v\xEF\xBF\xBD");
    EXPECT_EQ(j.at("k\xEF\xBF\xBD")[1], 1);
}

// Issue 11 item 3: a path argument with a non-UTF-8 byte made `--json` abort with no output.
TEST(Utf8, ErrorsEchoingOutsideBytesArePrintable) {
    const Error e(ErrorCode::not_found, "cannot open /tmp/\xFF.json",
                  Json{{"path", std::string("/tmp/\xFF.json")}});
    EXPECT_TRUE(is_valid_utf8(e.what()));
    const std::string printed = e.to_json().dump(2);  // strict dump: throws on ill-formed bytes
    EXPECT_NE(printed.find("/tmp/\xEF\xBF\xBD.json"), std::string::npos);
}

// Issue 11 item 11: a 10 MB hypothesis was stored whole.
TEST(Utf8, FreeTextIsCappedNamingTheField) {
    EXPECT_NO_THROW(require_free_text(std::string(kFreeTextMaxBytes, 'h'), "hypothesis"));
    if (const auto e = EXPECT_CKO_ERROR(
            require_free_text(std::string(kFreeTextMaxBytes + 1, 'h'), "hypothesis"),
            ErrorCode::field_too_long)) {
        EXPECT_EQ(e->details()["field"], "hypothesis");
    }
}

}  // namespace
}  // namespace cko
