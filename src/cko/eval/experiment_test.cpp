// experiment new, in process: the minimum effect an experiment gives is held to the Target's rule.
#include "cko/eval/experiment.hpp"

#include "cko/eval/profile_evidence.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using ExperimentTest = testing::FrozenTargetTest;

ExperimentSpec spec_of(const std::filesystem::path& candidate, std::optional<double> min_effect) {
    // std::string values, not literals: GCC 12 at -O3 reports a false -Wrestrict in
    // basic_string::operator=(const char*) here (GCC bug 105329), which -Werror in CI makes fatal.
    ExperimentSpec e;
    e.candidate = candidate;
    e.hypothesis = std::string("h");
    e.mechanism = std::string("m");
    e.failure_closes = std::string("mechanism");
    e.no_falsifier_reason = std::string("test");
    e.minimum_effect_pct = min_effect;
    return e;
}

TEST_F(ExperimentTest, AMinimumEffectOutsideZeroToAThousandIsRefusedNamingTheField) {
    put(dir_ / "cand" / "k.cu", "kernel v1\n");
    for (const double bad : {-1.0, 0.0, 1000.5}) {
        std::string message;
        EXPECT_EQ(code_of([&] { (void)create_experiment(*target_, spec_of(dir_ / "cand", bad)); },
                          &message),
                  ErrorCode::invalid_argument)
            << bad;
        EXPECT_NE(message.find("minimum_effect_pct"), std::string::npos) << message;
    }
    const Json e = create_experiment(*target_, spec_of(dir_ / "cand", 1000.0));
    EXPECT_EQ(load_experiment(*store_, e.at("id").get<std::string>()).minimum_effect_pct, 1000.0);
}

using testing::stored_map;

ExperimentSpec bounded(const std::filesystem::path& candidate, const std::string& source,
                       std::optional<double> typed) {
    ExperimentSpec e = spec_of(candidate, std::nullopt);
    e.gain_bound_source = source;
    e.gain_bound_pct = typed;
    return e;
}

TEST_F(ExperimentTest, AMapItemsBoundIsComputedFromTheMapAndATypedOneMustAgree) {
    const std::string exp = experiment("kernel v1\n");
    const std::string map = stored_map(*store_, exp, "reference");  // of the original
    put(dir_ / "cand" / "k.cu", "kernel v2\n");
    std::string message;
    EXPECT_EQ(code_of(
                  [&] {
                      (void)create_experiment(*target_,
                                              bounded(dir_ / "cand", "map:" + map + "#gemm", 10.0));
                  },
                  &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("gain_bound_pct"), std::string::npos) << message;
    EXPECT_NE(message.find("30.0000%"), std::string::npos) << message;
    const Json e =
        create_experiment(*target_, bounded(dir_ / "cand", "map:" + map + "#gemm", 30.04));
    const auto bound = load_experiment(*store_, e.at("id").get<std::string>()).gain_bound;
    ASSERT_TRUE(bound && bound->computed);
    EXPECT_DOUBLE_EQ(bound->pct, 30.0);  // the largest share: 150 of 500 ns, not 200 of 1000
    EXPECT_EQ(bound->computed->item, "gemm");
    EXPECT_EQ(bound->computed->occurrence, 1);
    EXPECT_EQ(bound->computed->window_ns, 500);
}

TEST_F(ExperimentTest, AMapOfAnotherSubjectAnUnboundMapAnUnknownItemOrNoItemIsRefused) {
    const std::string exp = experiment("kernel v1\n");
    put(dir_ / "cand" / "k.cu", "kernel v2\n");
    const std::string reference = stored_map(*store_, exp, "reference");
    const std::vector<std::pair<std::string, std::string>> refused{
        {"map:" + stored_map(*store_, exp, "candidate") + "#gemm", "but this experiment's base is"},
        {"map:" + stored_map(*store_, "", "") + "#gemm", "bound to no experiment"},
        {"map:" + reference + "#nosuch", "e.g. gemm, layer"},
        {"map:" + reference, "names no item"}};
    for (const auto& row : refused) {
        // Not a structured binding: clang 14 (the sanitizer build) cannot capture one in a lambda.
        const std::string& source = row.first;
        const std::string& says = row.second;
        std::string message;
        EXPECT_EQ(code_of(
                      [&] {
                          (void)create_experiment(*target_,
                                                  bounded(dir_ / "cand", source, std::nullopt));
                      },
                      &message),
                  ErrorCode::invalid_argument)
            << source;
        EXPECT_NE(message.find("gain_bound_source"), std::string::npos) << message;
        EXPECT_NE(message.find(says), std::string::npos) << message;
    }
}

}  // namespace
}  // namespace cko::eval
