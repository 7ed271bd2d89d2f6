// Strict JSON: every rejection names the JSON path; canonical bytes never change.
#include "cko/util/json.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cko {
namespace {

// Runs the parser and returns the error it threw, failing the test if it did not throw.
Error parse_error_of(std::string_view text, const JsonLimits& limits = {}) {
    SCOPED_TRACE(text);
    return *EXPECT_ANY_CKO_ERROR((void)parse_json_strict(text, limits, "test.json"));
}

TEST(StrictJson, AcceptsOrdinaryDocuments) {
    const Json j = parse_json_strict(R"({"a":[1,-2,3.5,"x",true,null],"b":{"c":{}}})");
    EXPECT_EQ(j["a"][2], 3.5);
    EXPECT_TRUE(j["b"]["c"].is_object());
}

TEST(StrictJson, DuplicateKeyRejectedWithItsPath) {
    const Error e = parse_error_of(R"({"runs":[{"id":1},{"id":2,"id":3}]})");
    EXPECT_EQ(e.code(), ErrorCode::json_duplicate_key);
    EXPECT_EQ(e.details()["path"], "$.runs[1].id");
    EXPECT_NE(std::string(e.what()).find("test.json"), std::string::npos);
}

TEST(StrictJson, DuplicateTopLevelKeyRejected) {
    EXPECT_EQ(parse_error_of(R"({"a":1,"a":1})").details()["path"], "$.a");
}

TEST(StrictJson, NanAndInfinityLiteralsRejected) {
    EXPECT_EQ(parse_error_of(R"({"x":[1,NaN]})").code(), ErrorCode::json_non_finite);
    EXPECT_EQ(parse_error_of(R"({"x":[1,NaN]})").details()["path"], "$.x[1]");
    EXPECT_EQ(parse_error_of(R"({"x":Infinity})").code(), ErrorCode::json_non_finite);
    EXPECT_EQ(parse_error_of(R"({"x":-Infinity})").code(), ErrorCode::json_non_finite);
}

TEST(StrictJson, OverflowingNumberRejected) {
    const Error e = parse_error_of(R"({"samples":[1.0,1e400]})");
    EXPECT_EQ(e.code(), ErrorCode::json_non_finite);
    EXPECT_EQ(e.details()["path"], "$.samples[1]");
}

TEST(StrictJson, TrailingGarbageRejected) {
    EXPECT_EQ(parse_error_of(R"({"a":1} x)").code(), ErrorCode::json_parse);
    EXPECT_EQ(parse_error_of(R"({"a":1}{"b":2})").code(), ErrorCode::json_parse);
}

TEST(StrictJson, InvalidUtf8Rejected) {
    const std::string bad = "{\"name\":\"ab\xff\"}";
    const Error e = parse_error_of(bad);
    EXPECT_EQ(e.code(), ErrorCode::json_invalid_utf8);
    EXPECT_EQ(e.details()["path"], "$.name");
}

TEST(StrictJson, DeepNestingRejectedWithPath) {
    std::string deep;
    for (int i = 0; i < 100; ++i) {
        deep += "[";
    }
    for (int i = 0; i < 100; ++i) {
        deep += "]";
    }
    const Error e = parse_error_of(deep, JsonLimits{1 << 20, 64});
    EXPECT_EQ(e.code(), ErrorCode::json_too_deep);
    EXPECT_EQ(e.details()["path"].get<std::string>().substr(0, 7), "$[0][0]");
    // Exactly at the limit is fine.
    std::string ok(64, '[');
    ok += std::string(64, ']');
    EXPECT_NO_THROW((void)parse_json_strict(ok, JsonLimits{1 << 20, 64}));
}

TEST(StrictJson, SizeLimitRejected) {
    const std::string text = R"({"padding":")" + std::string(2000, 'x') + "\"}";
    const Error e = parse_error_of(text, JsonLimits{1000, 64});
    EXPECT_EQ(e.code(), ErrorCode::json_too_large);
    EXPECT_EQ(e.details()["limit"], 1000);
}

TEST(StrictJson, OddKeysArePathQuoted) {
    const Error e = parse_error_of(R"({"a b":{"x":1,"x":2}})");
    EXPECT_EQ(e.details()["path"], R"($["a b"].x)");
}

TEST(CanonicalJson, SortsKeysDropsWhitespaceKeepsUtf8) {
    const Json j =
        parse_json_strict("{ \"z\": 1, \"a\": [ true, \"\\u00e9\" ], \"M\": {\"y\":2,\"b\":3} }");
    EXPECT_EQ(canonical_json(j), "{\"M\":{\"b\":3,\"y\":2},\"a\":[true,\"\xc3\xa9\"],\"z\":1}");
}

TEST(CanonicalJson, SameValueSameBytesWhateverTheInputOrder) {
    const Json a = parse_json_strict(R"({"b":0.1,"a":{"d":[1,2],"c":"x"}})");
    const Json b = parse_json_strict(R"({"a":{"c":"x","d":[1,2]},"b":0.1})");
    EXPECT_EQ(canonical_json(a), canonical_json(b));
    EXPECT_EQ(canonical_json(a), R"({"a":{"c":"x","d":[1,2]},"b":0.1})");
    // Round trip: parsing the canonical bytes and writing again gives the same bytes.
    EXPECT_EQ(canonical_json(parse_json_strict(canonical_json(a))), canonical_json(a));
}

TEST(CanonicalJson, RefusesNonFiniteWithPath) {
    Json j{{"samples", {1.0, std::nan("")}}};
    if (const auto e = EXPECT_CKO_ERROR((void)canonical_json(j), ErrorCode::json_non_finite)) {
        EXPECT_EQ(e->details()["path"], "$.samples[1]");
    }
}

TEST(CanonicalJson, WritesInvalidUtf8AsReplacementCharacter) {
    // A driver's file name or stderr must never make a record unwritable (issue 11, item 4).
    const Json j{{"name", std::string("a\xff\xc3")}, {std::string("k\xfe"), 1}};
    const std::string bytes = canonical_json(j);
    EXPECT_EQ(bytes, "{\"k\xEF\xBF\xBD\":1,\"name\":\"a\xEF\xBF\xBD\xEF\xBF\xBD\"}");
    EXPECT_EQ(canonical_json(parse_json_strict(bytes)), bytes);  // stored bytes parse back strictly
}

TEST(PrintableJson, NeverThrowsOnIllFormedBytes) {
    const Json j{{"path", std::string("/tmp/\x80x")}};
    const std::string out = printable_json(j);
    EXPECT_NE(out.find("/tmp/\xEF\xBF\xBDx"), std::string::npos);
    EXPECT_NO_THROW((void)parse_json_strict(out));
}

}  // namespace
}  // namespace cko
