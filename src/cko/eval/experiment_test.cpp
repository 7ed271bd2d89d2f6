// experiment new, in process: the minimum effect an experiment gives is held to the Target's rule.
#include "cko/eval/experiment.hpp"

#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using ExperimentTest = testing::FrozenTargetTest;

ExperimentSpec spec_of(const std::filesystem::path& candidate, std::optional<double> min_effect) {
    ExperimentSpec e;
    e.candidate = candidate;
    e.hypothesis = "h";
    e.mechanism = "m";
    e.failure_closes = "mechanism";
    e.no_falsifier_reason = "test";
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
