// Every bad spec field is named in the error together with a fix; good specs read back exactly.
#include "cko/eval/target_spec.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cko::eval {
namespace {

const std::string kGood = R"(
[target]
name = "softmax"
claim_layer = "kernel"
original = "src"
change_scope = ["src/softmax.cu"]

[cases]
dir = "cases"
ids = ["main", "long_rows"]

[driver]
argv = ["python3", "bench/driver.py"]
capabilities = ["single_subject", "paired_in_process"]
identity_paths = ["bench"]
env_allow = ["PATH", "LD_LIBRARY_PATH"]

[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 0.5
constraints = [
  { name = "peak_mem_bytes", unit = "byte", direction = "lower", max_regression_pct = 2.0 },
]

[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-5

[statistics]
confidence = 0.95
min_pairs = 6
max_pairs = 40
samples_per_call = 5
sequential = true

[limits]
command_timeout_s = 300
operation_timeout_s = 3600
resource_wait_timeout_s = 120
cleanup_timeout_s = 30
gpu_seconds_budget = 1800
deadline = "2026-12-01T00:00:00Z"

[resources]
gpus = "auto"
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "fixture lacks: " << from;
    if (at != std::string::npos) {
        text.replace(at, from.size(), to);
    }
    return text;
}

TEST(TargetSpec, TheProtocolExampleReadsBack) {
    const TargetSpec s = parse_target_spec(kGood, "/t/cko.toml");
    EXPECT_EQ(s.name, "softmax");
    EXPECT_EQ(s.base_dir, "/t");
    EXPECT_EQ(s.case_ids, (std::vector<std::string>{"main", "long_rows"}));
    EXPECT_EQ(s.primary.direction, stats::Direction::lower);
    EXPECT_DOUBLE_EQ(s.minimum_effect_pct, 0.5);
    ASSERT_EQ(s.constraints.size(), 1u);
    EXPECT_DOUBLE_EQ(s.constraints[0].max_regression_pct, 2.0);
    EXPECT_EQ(s.deadline_unix_s, 1796083200);  // date -u -d 2026-12-01T00:00:00Z +%s
    EXPECT_TRUE(s.can_pair_in_process());
    EXPECT_EQ(s.gpus_mode, "auto");
    EXPECT_EQ(s.to_json()["objective"]["constraints"][0]["name"], "peak_mem_bytes");
}

TEST(TargetSpec, FrozenJsonReadsBackToTheSameSpec) {
    const TargetSpec s = parse_target_spec(kGood, "/t/cko.toml");
    const TargetSpec back = TargetSpec::from_json(s.to_json(), "/t");
    EXPECT_EQ(back.to_json(), s.to_json());
    EXPECT_EQ(back.deadline_text, "2026-12-01T00:00:00Z");
    EXPECT_EQ(back.gpus_mode, "auto");
}

TEST(TargetSpec, ASlurmLauncherReadsBackAndALocalOneKeepsItsFrozenForm) {
    const TargetSpec local = parse_target_spec(kGood, "/t/cko.toml");
    EXPECT_EQ(local.launcher, "local");
    EXPECT_FALSE(local.to_json()["driver"].contains("launcher"));  // old Targets keep their ids
    const TargetSpec s = parse_target_spec(
        replace(kGood, "env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "env_allow = [\"PATH\"]\nlauncher = \"slurm\"\n[slurm]\npartition = "
                "\"gpu\"\naccount = \"p1\"\n"
                "gpus_per_call = 1\nconstraint = \"h100\"\ntime_limit = \"00:30:00\"\nsubmit = "
                "\"sbatch\"\n"
                "extra_args = [\"--exclusive\", \"--nodelist=n17\"]\ncko = \"/shared/bin/cko\""),
        "/t/cko.toml");
    EXPECT_TRUE(s.uses_slurm());
    EXPECT_EQ(s.slurm.partition, "gpu");
    EXPECT_EQ(s.slurm.gpus_per_call, 1);
    EXPECT_EQ(s.slurm.submit, "sbatch");
    EXPECT_EQ(s.slurm.extra_args, (std::vector<std::string>{"--exclusive", "--nodelist=n17"}));
    const TargetSpec back = TargetSpec::from_json(s.to_json(), "/t");
    EXPECT_TRUE(back.uses_slurm());
    EXPECT_EQ(back.to_json(), s.to_json());
}

TEST(TargetSpec, TheInitTemplateIsAValidSpec) {
    const TargetSpec s = parse_target_spec(target_spec_template("demo"), "cko.toml");
    EXPECT_EQ(s.name, "demo");
    // A driver written with either SDK serves sessions, so the template asks for them: without
    // `session` every call would start the driver (and import torch) again ([19]).
    EXPECT_TRUE(s.serves_sessions());
}

struct BadSpec {
    const char* from;
    const char* to;
    const char* field;  // must appear in the error's details.field
};

class BadSpecs : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecs, NameTheFieldAndTheFix) {
    const BadSpec& b = GetParam();
    const std::string text = replace(kGood, b.from, b.to);
    SCOPED_TRACE(std::string("a spec with ") + b.to);
    if (const auto e = EXPECT_CKO_ERROR((void)parse_target_spec(text, "cko.toml"),
                                        ErrorCode::invalid_spec, b.field)) {
        EXPECT_EQ(e->details()["field"], b.field) << e->what();
        EXPECT_FALSE(e->details()["fix"].get<std::string>().empty());
    }
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadSpecs,
    ::testing::Values(
        BadSpec{"name = \"softmax\"", "", "target.name"},
        BadSpec{"name = \"softmax\"", "name = \"soft max\"", "target.name"},
        BadSpec{"claim_layer = \"kernel\"", "claim_layer = \"system\"", "target.claim_layer"},
        BadSpec{"original = \"src\"", "original = \"../elsewhere\"", "target.original"},
        BadSpec{"original = \"src\"", "original = \"/abs/src\"", "target.original"},
        BadSpec{"change_scope = [\"src/softmax.cu\"]", "change_scope = []", "target.change_scope"},
        BadSpec{"[target]", "[target]\nnmae = \"typo\"", "target.nmae"},
        BadSpec{"ids = [\"main\", \"long_rows\"]", "ids = [\"main\", \"main\"]", "cases.ids[1]"},
        BadSpec{"ids = [\"main\", \"long_rows\"]", "ids = [\"../x\"]", "cases.ids[0]"},
        BadSpec{"argv = [\"python3\", \"bench/driver.py\"]", "argv = \"python3 bench/driver.py\"",
                "driver.argv"},
        BadSpec{"capabilities = [\"single_subject\", \"paired_in_process\"]",
                "capabilities = [\"paired_in_process\"]", "driver.capabilities"},
        BadSpec{"capabilities = [\"single_subject\", \"paired_in_process\"]",
                "capabilities = [\"single_subject\", \"teleport\"]", "driver.capabilities[1]"},
        BadSpec{"direction = \"lower\", aggregation", "direction = \"down\", aggregation",
                "objective.primary.direction"},
        BadSpec{"aggregation = \"median\"", "aggregation = \"mean\"",
                "objective.primary.aggregation"},
        BadSpec{"primary = { name = \"latency_us\", ", "primary = { ", "objective.primary.name"},
        BadSpec{"minimum_effect_pct = 0.5", "minimum_effect_pct = 0",
                "objective.minimum_effect_pct"},
        BadSpec{"minimum_effect_pct = 0.5", "minimum_effect_pct = \"0.5\"",
                "objective.minimum_effect_pct"},
        BadSpec{"minimum_effect_pct = 0.5", "minimum_effect_pct = -2",
                "objective.minimum_effect_pct"},
        BadSpec{"minimum_effect_pct = 0.5", "minimum_effect_pct = 1000.5",
                "objective.minimum_effect_pct"},
        BadSpec{"max_regression_pct = 2.0", "max_regression_pct = -1",
                "objective.constraints[0].max_regression_pct"},
        BadSpec{"{ name = \"peak_mem_bytes\"", "{ name = \"latency_us\"",
                "objective.constraints[0].name"},
        BadSpec{"max_regression_pct = 2.0", "max_regression_pct = 2.0, accept_per_case = \"yes\"",
                "objective.constraints[0].accept_per_case"},
        BadSpec{"operator = \"<=\"", "operator = \"=<\"", "correctness.operator"},
        BadSpec{"threshold = 1e-5", "threshold = nan", "correctness.threshold"},
        BadSpec{"metric = \"max_rel_err\"\n", "", "correctness.metric"},
        BadSpec{"confidence = 0.95", "confidence = 1.5", "statistics.confidence"},
        BadSpec{"max_pairs = 40", "max_pairs = 4", "statistics.max_pairs"},
        BadSpec{"min_pairs = 6", "min_pairs = 2", "statistics.min_pairs"},
        BadSpec{"samples_per_call = 5", "samples_per_call = 2.5", "statistics.samples_per_call"},
        BadSpec{"command_timeout_s = 300", "command_timeout_s = 0", "limits.command_timeout_s"},
        BadSpec{"command_timeout_s = 300", "command_timeout_s = 7200", "limits.command_timeout_s"},
        BadSpec{"deadline = \"2026-12-01T00:00:00Z\"", "deadline = \"tomorrow\"",
                "limits.deadline"},
        BadSpec{"gpus = \"auto\"", "gpus = [\"0\"]", "resources.gpus[0]"},
        BadSpec{"gpus = \"auto\"", "gpus = 0", "resources.gpus"},
        BadSpec{"[statistics]", "[statistcs]\n[statistics]", "statistcs"},
        BadSpec{"[cases]\ndir = \"cases\"\n", "[cases]\n", "cases.dir"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]", "launcher = \"pbs\"",
                "driver.launcher"},
        BadSpec{"[resources]", "[slurm]\npartition = \"gpu\"\n[resources]", "slurm"},
        BadSpec{"[resources]", "[driver2]\n[resources]", "driver2"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "launcher = \"slurm\"\n[slurm]\nextra_args = [\"--output=/tmp/x\"]",
                "slurm.extra_args[0]"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "launcher = \"slurm\"\n[slurm]\ntime_limit = \"1h\"", "slurm.time_limit"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "launcher = \"slurm\"\n[slurm]\nsubmit = \"salloc\"", "slurm.submit"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "launcher = \"slurm\"\n[slurm]\ncko = \"bin/cko\"", "slurm.cko"},
        BadSpec{"env_allow = [\"PATH\", \"LD_LIBRARY_PATH\"]",
                "launcher = \"slurm\"\n[slurm]\npartion = \"gpu\"", "slurm.partion"}));

std::string error_of(const std::string& text) {
    const test::CaughtError e =
        test::error_thrown_by([&] { (void)parse_target_spec(text, "/t/cko.toml"); });
    return e ? e->what() : "";
}

TEST(TargetSpec, AMisspelledRequiredKeySuggestsTheRightOne) {
    const std::string msg =
        error_of(replace(kGood, "minimum_effect_pct = 0.5", "minimum_efect_pct = 0.5"));
    EXPECT_NE(msg.find("objective.minimum_effect_pct: missing"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean minimum_effect_pct"), std::string::npos) << msg;
}

TEST(TargetSpec, EveryUnknownKeyOfATableIsNamedAtOnce) {
    const std::string msg = error_of(replace(
        kGood, "confidence = 0.95\n", "confidense = 0.95\nmax_pair = 3\nconfidence = 0.95\n"));
    EXPECT_NE(msg.find("confidense (did you mean confidence?)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("max_pair (did you mean max_pairs?)"), std::string::npos) << msg;
}

// One rule wherever a minimum effect enters: (0, 1000], the upper end included.
TEST(TargetSpec, TheMinimumEffectRuleIsOneIntervalOpenAtZeroClosedAtAThousand) {
    EXPECT_DOUBLE_EQ(
        parse_target_spec(replace(kGood, "minimum_effect_pct = 0.5", "minimum_effect_pct = 1000"),
                          "/t/cko.toml")
            .minimum_effect_pct,
        1000.0);
    EXPECT_EQ(minimum_effect_problem(1000), "");
    EXPECT_EQ(minimum_effect_problem(0.01), "");
    EXPECT_NE(minimum_effect_problem(0), "");
    EXPECT_NE(minimum_effect_problem(-1), "");
    EXPECT_NE(minimum_effect_problem(1000.001), "");
    EXPECT_NE(minimum_effect_problem(std::nan("")), "");
}

TEST(TargetSpec, ACaseRegressionToleranceIsReadAndBounded) {
    const TargetSpec s =
        parse_target_spec(replace(kGood, "minimum_effect_pct = 0.5",
                                  "minimum_effect_pct = 0.5\nmax_case_regression_pct = 2"),
                          "/t/cko.toml");
    EXPECT_DOUBLE_EQ(s.max_case_regression_pct, 2.0);
    EXPECT_DOUBLE_EQ(parse_target_spec(kGood, "/t/cko.toml").max_case_regression_pct, 0.0);
    EXPECT_NE(error_of(replace(kGood, "minimum_effect_pct = 0.5",
                               "minimum_effect_pct = 0.5\nmax_case_regression_pct = -1"))
                  .find("objective.max_case_regression_pct"),
              std::string::npos);
}

// [18]: a constraint may allow per-case acceptance; the key is frozen only when set (so that
// Targets without it keep their ids) and read back typed.
TEST(TargetSpec, AConstraintsPerCaseAcceptanceIsReadAndFrozenOnlyWhenSet) {
    const TargetSpec plain = parse_target_spec(kGood, "/t/cko.toml");
    EXPECT_FALSE(plain.constraints.at(0).accept_per_case);
    EXPECT_FALSE(plain.to_json()["objective"]["constraints"][0].contains("accept_per_case"));
    const TargetSpec s =
        parse_target_spec(replace(kGood, "max_regression_pct = 2.0",
                                  "max_regression_pct = 2.0, accept_per_case = true"),
                          "/t/cko.toml");
    EXPECT_TRUE(s.constraints.at(0).accept_per_case);
    EXPECT_EQ(s.to_json()["objective"]["constraints"][0]["accept_per_case"], true);
    EXPECT_TRUE(TargetSpec::from_json(s.to_json(), "/t").constraints.at(0).accept_per_case);
    EXPECT_FALSE(TargetSpec::from_json(plain.to_json(), "/t").constraints.at(0).accept_per_case);
}

// [limits] farthest_stage (issue 23): a closed word, frozen only when given (so that Targets
// without it keep their ids), read back typed.
TEST(TargetSpec, TheFarthestStageIsAClosedWordFrozenOnlyWhenGiven) {
    const TargetSpec none = parse_target_spec(kGood, "/t/cko.toml");
    EXPECT_FALSE(none.farthest_stage);
    EXPECT_FALSE(none.to_json().at("limits").contains("farthest_stage"));
    const std::string limited = replace(kGood, "cleanup_timeout_s = 30",
                                        "cleanup_timeout_s = 30\nfarthest_stage = \"confirm\"");
    const TargetSpec s = parse_target_spec(limited, "/t/cko.toml");
    ASSERT_TRUE(s.farthest_stage);
    EXPECT_EQ(*s.farthest_stage, Stage::confirm);
    const TargetSpec back = TargetSpec::from_json(s.to_json(), "/t");
    EXPECT_EQ(back.farthest_stage, Stage::confirm);
    EXPECT_EQ(back.to_json(), s.to_json());
    if (const auto e = EXPECT_CKO_ERROR(
            (void)parse_target_spec(replace(kGood, "cleanup_timeout_s = 30",
                                            "cleanup_timeout_s = 30\nfarthest_stage = \"select\""),
                                    "/t/cko.toml"),
            ErrorCode::invalid_spec, "screen, confirm, audit")) {
        EXPECT_EQ(e->details().at("field"), "limits.farthest_stage");
    }
}

// Issue [18], observation: the host-load and steal limits are stated per Target, with defaults,
// frozen with the spec, and read back (a Target frozen before them gets the defaults). Before, an
// [observation] table was an unknown key.
TEST(TargetSpec, ObservationLimitsAreReadFrozenAndDefaulted) {
    const TargetSpec d = parse_target_spec(kGood, "/t/cko.toml");
    EXPECT_DOUBLE_EQ(d.observation.max_host_load_per_cpu, 1.0);
    EXPECT_DOUBLE_EQ(d.observation.max_host_steal_pct, 5.0);
    const TargetSpec s = parse_target_spec(
        kGood + "\n[observation]\nmax_host_load_per_cpu = 2.5\nmax_host_steal_pct = 10\n",
        "/t/cko.toml");
    EXPECT_DOUBLE_EQ(s.observation.max_host_load_per_cpu, 2.5);
    const Json frozen = s.to_json();
    EXPECT_EQ(frozen["observation"]["max_host_steal_pct"], 10.0);
    EXPECT_DOUBLE_EQ(TargetSpec::from_json(frozen, "/t").observation.max_host_load_per_cpu, 2.5);
    Json old = frozen;
    old.erase("observation");
    EXPECT_DOUBLE_EQ(TargetSpec::from_json(old, "/t").observation.max_host_load_per_cpu, 1.0);
    EXPECT_NE(error_of(kGood + "\n[observation]\nmax_host_load_per_cpu = 0\n")
                  .find("observation.max_host_load_per_cpu"),
              std::string::npos);
    EXPECT_NE(error_of(kGood + "\n[observation]\nmax_host_steal_pct = 101\n")
                  .find("observation.max_host_steal_pct"),
              std::string::npos);
    EXPECT_NE(error_of(kGood + "\n[observation]\nmax_load = 2\n").find("max_load"),
              std::string::npos);
}

TEST(TargetSpec, SyntaxErrorsNameTheLine) {
    if (const auto e = EXPECT_CKO_ERROR((void)parse_target_spec("[target\nname = 1", "spec.toml"),
                                        ErrorCode::invalid_spec)) {
        EXPECT_NE(e->details()["field"].get<std::string>().find("spec.toml:1:"), std::string::npos)
            << e->what();
    }
}

TEST(TargetSpec, DiagnosticTargetsNeedNoWorkload) {
    const TargetSpec s =
        parse_target_spec("[target]\nname = \"look\"\nmode = \"diagnostic\"\n", "cko.toml");
    EXPECT_TRUE(s.diagnostic);
}

TEST(Correctness, OperatorsAndNonFiniteValues) {
    EXPECT_TRUE(correctness_passes("<=", 1e-6, 1e-5));
    EXPECT_FALSE(correctness_passes("<", 1e-5, 1e-5));
    EXPECT_TRUE(correctness_passes(">=", 0.99, 0.99));
    EXPECT_FALSE(correctness_passes("<=", std::nan(""), 1.0));
    EXPECT_TRUE(correctness_passes("==", 0.0, 0.0));
}

}  // namespace
}  // namespace cko::eval
