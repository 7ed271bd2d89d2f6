// experiment new, in process: the minimum effect an experiment gives is held to the Target's rule.
#include "cko/eval/experiment.hpp"

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

}  // namespace
}  // namespace cko::eval
