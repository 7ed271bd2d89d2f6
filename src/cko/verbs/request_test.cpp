// A request definition yields the schema an MCP client sees and checks what a client sends.
#include "cko/verbs/request.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <vector>

namespace cko::verbs {
namespace {

RequestDef sample() {
    Param samples = integer_param("samples", "Samples per subject", 5);
    samples.minimum = 1;
    return RequestDef{{root_param(), required(positional(string_param("id", "Invocation id"))),
                       samples, list_param("env_allow", "Extra variables"),
                       flag_param("detach", "Background")}};
}

// The code of the cko::Error the request is refused with; `internal` when it is accepted.
ErrorCode code_of(const RequestDef& def, const Json& request) {
    return test::error_thrown_by([&] { (void)def.normalize(request); })->code();
}

TEST(RequestDef, SchemaListsEveryKeyWithItsTypeDefaultAndTheRequiredOnes) {
    const Json s = sample().schema();
    EXPECT_EQ(s["type"], "object");
    EXPECT_EQ(s["additionalProperties"], false);
    EXPECT_EQ(s["properties"]["samples"]["type"], "integer");
    EXPECT_EQ(s["properties"]["samples"]["default"], 5);
    EXPECT_EQ(s["properties"]["samples"]["minimum"], 1.0);
    EXPECT_EQ(s["properties"]["env_allow"]["items"]["type"], "string");
    EXPECT_EQ(s["required"], Json::array({"id"}));
}

TEST(RequestDef, NormalizeFillsDefaultsAndTheRootFromTheEnvironment) {
    ::setenv("CKO_ROOT", "/tmp/some-root", 1);
    const Json n = sample().normalize(Json{{"id", "inv-1"}});
    ::unsetenv("CKO_ROOT");
    EXPECT_EQ(n["root"], "/tmp/some-root");
    EXPECT_EQ(n["samples"], 5);
    EXPECT_FALSE(n.contains("env_allow"));
    const Request r(n);
    EXPECT_EQ(r.text("id"), "inv-1");
    EXPECT_TRUE(r.list("env_allow").empty());
    EXPECT_FALSE(r.flag("detach"));
}

// A verb that reads a key its definition lacks (a misspelling in the verb's code) fails at once,
// naming the key, instead of getting "" or 0 for it.
TEST(RequestDef, ARequestBuiltWithItsDefinitionRefusesToReadAKeyItDoesNotHave) {
    const RequestDef def = sample();
    const Request r(def, def.normalize(Json{{"id", "inv-1"}}));
    EXPECT_EQ(r.text("id"), "inv-1");
    EXPECT_EQ(r.integer("samples"), 5);
    EXPECT_FALSE(r.has("env_allow"));
    for (const auto& read : std::vector<std::function<void()>>{
             [&] { (void)r.text("idd"); }, [&] { (void)r.integer("sample"); },
             [&] { (void)r.flag("detached"); }, [&] { (void)r.list("env_alow"); },
             [&] { (void)r.has("root_dir"); }, [&] { (void)r.number("samples_"); }}) {
        // A key outside the definition is not read.
        EXPECT_CKO_ERROR(read(), ErrorCode::internal, "its definition does not have");
    }
}

TEST(RequestDef, AcceptsTheCliSpellingAndAScalarForAList) {
    const Json n = sample().normalize(Json{{"id", "x"}, {"env-allow", "PATH"}});
    EXPECT_EQ(n["env_allow"], Json::array({"PATH"}));
}

TEST(RequestDef, RejectsUnknownKeysWrongTypesRangesAndMissingRequiredKeys) {
    const RequestDef def = sample();
    EXPECT_EQ(code_of(def, Json{{"id", "x"}, {"sampels", 3}}), ErrorCode::invalid_request);
    EXPECT_EQ(code_of(def, Json{{"id", "x"}, {"samples", "3"}}), ErrorCode::invalid_request);
    EXPECT_EQ(code_of(def, Json{{"id", "x"}, {"samples", 0}}), ErrorCode::invalid_request);
    EXPECT_EQ(code_of(def, Json{{"samples", 3}}), ErrorCode::invalid_request);
    EXPECT_EQ(code_of(def, Json::array()), ErrorCode::invalid_request);
    if (const auto e = test::error_thrown_by([&] {
            (void)def.normalize(Json{{"id", "x"}, {"sampels", 3}});
        })) {
        EXPECT_NE(std::string(e->what()).find("known keys: root, id, samples"), std::string::npos)
            << e->what();
    }
}

TEST(RequestDef, CliOptionNamesUseDashes) {
    EXPECT_EQ(cli_option_name("case_file"), "--case-file");
}

}  // namespace
}  // namespace cko::verbs
