// Evidence identity: an export is bound to a Target only with a tested tool version and the
// Target's own device; otherwise it is refused, or kept as foreign evidence that nothing may cite.
#include "cko/eval/profile_identity.hpp"

#include "cko/eval/decision.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

constexpr const char* kUuid = "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";

// What `cko profile ncu tests/fixtures/ncu/ncu_raw.csv --json` says of its device, in miniature.
Json h200_ncu_document() {
    return Json{{"format_version", "cko/ncu-report-v3"},
                {"device_name", "NVIDIA H200"},
                {"launches", Json::array({Json{{"compute_capability", "9.0"}}})}};
}

Json ncu_sources(const std::string& version) {
    return Json::array({Json{{"path", "ncu_raw.csv"},
                             {"report_sha256", std::string(64, 'a')},
                             {"tool", "ncu"},
                             {"tool_version", version},
                             {"dialect", "ncu-csv-raw"},
                             {"parser_version", "test"}}});
}

store::TargetRecord target_on(const std::string& gpu_name, const std::string& cc) {
    store::TargetRecord t;
    t.id = "tgt-test";
    t.environment = Json{{"gpus", Json::array()}, {"tools", Json::array()}};
    t.gpus = std::vector<std::string>{};
    if (!gpu_name.empty()) {
        t.environment["gpus"].push_back(
            Json{{"uuid", kUuid}, {"name", gpu_name}, {"compute_capability", cc}});
        t.gpus->push_back(kUuid);
    }
    return t;
}

std::vector<IdentityProblem> problems_of(const Json& document, const Json& sources,
                                         const store::TargetRecord& target) {
    ProfileIdentity identity = read_profile_identity("ncu", document, sources, Json());
    compare_with_target(identity, target, false);
    return identity.problems;
}

TEST(ProfileIdentity, AnH200ExportIsNoEvidenceOfACpuOnlyTarget) {
    const auto problems = problems_of(h200_ncu_document(), ncu_sources(""), target_on("", ""));
    ASSERT_FALSE(problems.empty());
    const Error e = identity_refusal(problems);
    EXPECT_EQ(e.code(), ErrorCode::environment_mismatch);
    const std::string message = e.what();
    EXPECT_NE(message.find("NVIDIA H200 (compute capability 9.0)"), std::string::npos) << message;
    EXPECT_NE(message.find("Target tgt-test has no GPU"), std::string::npos) << message;
    EXPECT_NE(message.find("--foreign"), std::string::npos) << message;
    // The unknown version is named too, not hidden behind the first problem.
    EXPECT_NE(message.find("the NCU version is not stated"), std::string::npos) << message;
    EXPECT_EQ(e.details().at("field"), "device");
}

TEST(ProfileIdentity, AVersionOutsideTheTestedRangesIsRefusedNamingRangeAndFix) {
    const auto problems =
        problems_of(h200_ncu_document(), ncu_sources("1999.9"), target_on("NVIDIA H200", "9.0"));
    ASSERT_EQ(problems.size(), 1U);
    const Error e = identity_refusal(problems);
    EXPECT_EQ(e.code(), ErrorCode::tool_version_unknown);
    const std::string message = e.what();
    EXPECT_NE(message.find("NCU 1999.9 is outside the versions cko was tested on (2020.1.x, "
                           "2025.3.x)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("--tool-version"), std::string::npos) << message;
    EXPECT_NE(message.find("--foreign"), std::string::npos) << message;
    EXPECT_EQ(e.details().at("field"), "tool_version");
    EXPECT_EQ(e.details().at("seen"), "1999.9");
}

TEST(ProfileIdentity, AnExportWithoutAVersionIsRefusedAskingForOne) {
    const auto problems =
        problems_of(h200_ncu_document(), ncu_sources(""), target_on("NVIDIA H200", "9.0"));
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_EQ(problems[0].code, ErrorCode::tool_version_unknown);
    EXPECT_NE(problems[0].message.find("pass --tool-version VERSION"), std::string::npos);
}

TEST(ProfileIdentity, TheTargetsOwnDeviceAndATestedVersionBind) {
    EXPECT_TRUE(
        problems_of(h200_ncu_document(), ncu_sources("2025.3.1.0"), target_on("NVIDIA H200", "9.0"))
            .empty());
}

TEST(ProfileIdentity, AnotherGpuIsRefusedNamingBoth) {
    const auto problems = problems_of(h200_ncu_document(), ncu_sources("2025.3.1.0"),
                                      target_on("NVIDIA A100-SXM4-80GB", "8.0"));
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_EQ(problems[0].code, ErrorCode::environment_mismatch);
    EXPECT_NE(problems[0].what.find("made on NVIDIA H200 (compute capability 9.0), but Target "
                                    "tgt-test measures on NVIDIA A100-SXM4-80GB (compute "
                                    "capability 8.0)"),
              std::string::npos)
        << problems[0].what;
}

TEST(ProfileIdentity, AnotherReleaseOfTheTargetsOwnToolIsAMismatch) {
    store::TargetRecord t = target_on("NVIDIA H200", "9.0");
    t.environment["tools"].push_back(Json{{"name", "ncu"}, {"version", "2025.3.2.0"}});
    const auto problems = problems_of(h200_ncu_document(), ncu_sources("2025.3.1.0"), t);
    ASSERT_EQ(problems.size(), 1U);
    EXPECT_EQ(problems[0].code, ErrorCode::environment_mismatch);
    EXPECT_EQ(problems[0].field, "tool_version");
    t.environment["tools"][0]["version"] = "2025.3.1.0";
    EXPECT_TRUE(problems_of(h200_ncu_document(), ncu_sources("2025.3.1"), t).empty());
}

TEST(ProfileIdentity, ACollectedProfileTakesTheVersionItsProfilerReported) {
    ProfileIdentity identity = read_profile_identity("ncu", h200_ncu_document(), ncu_sources(""),
                                                     Json{{"tool_version", "2025.3.1.0"}});
    compare_with_target(identity, target_on("NVIDIA H200", "9.0"), true);
    EXPECT_TRUE(identity.problems.empty());
}

// `profile collect` has no --foreign: a collected profile's fix names the import that keeps it as
// foreign evidence (before, it told the caller to pass a flag collect does not take).
TEST(ProfileIdentity, ACollectedProfilesFixNamesTheImportNotAFlagCollectLacks) {
    ProfileIdentity identity = read_profile_identity("ncu", h200_ncu_document(), ncu_sources(""),
                                                     Json{{"tool_version", "2019.5.0.0"}});
    compare_with_target(identity, target_on("NVIDIA H200", "9.0"), true);
    ASSERT_EQ(identity.problems.size(), 1U);
    const std::string fix = identity.problems[0].details.at("fix");
    EXPECT_EQ(fix.find("with --foreign"), std::string::npos) << fix;
    EXPECT_NE(fix.find("cko profile ncu|nsys|torch FILE --root R --experiment EXP --subject S "
                       "--foreign"),
              std::string::npos)
        << fix;
}

class ProfileIdentityStore : public testing::FrozenTargetTest {};

// This host's Target is frozen without GPUs: CPU-only.
TEST_F(ProfileIdentityStore, ABoundGpuExportIsRefusedAndForeignOneIsKeptButNeverCited) {
    const std::string exp = experiment("kernel v1\n");
    ProfileEvidence e{"ncu", h200_ncu_document(), ncu_sources(""), exp, "candidate", Json()};
    std::string message;
    EXPECT_EQ(code_of([&] { (void)keep_profile(*store_, e); }, &message),
              ErrorCode::environment_mismatch)
        << message;
    EXPECT_TRUE(list_profiles(*store_).empty());

    e.foreign = true;
    const KeptProfile kept = keep_profile(*store_, e);
    EXPECT_TRUE(kept.foreign);
    ASSERT_EQ(kept.foreign_reasons.size(), 2U);
    const Json record = load_profile(*store_, kept.ref.id);
    EXPECT_TRUE(record.at("foreign").get<bool>());
    EXPECT_EQ(record.at("foreign_reasons").size(), 2U);
    EXPECT_EQ(record.at("identity").at("devices")[0].at("name"), "NVIDIA H200");
    EXPECT_TRUE(list_profiles(*store_).at(0).at("foreign").get<bool>());

    EXPECT_EQ(
        code_of(
            [&] { (void)resolve_evidence(*target_, kept.ref.id, load_experiment(*store_, exp)); },
            &message),
        ErrorCode::invalid_argument);
    EXPECT_NE(message.find("is foreign evidence"), std::string::npos) << message;
}

TEST_F(ProfileIdentityStore, AForeignMapIsNoGainBound) {
    const Json map{
        {"format_version", "cko/map-v1"},
        {"parts",
         Json::array({Json{{"windows", Json::array({Json{{"gpu", {{"busy_ns", 5}}}}})}}})}};
    const Json sources = Json::array({Json{{"tool", "kineto"}, {"tool_version", "2.11"}}});
    // Kept without an experiment, a mismatch makes it foreign rather than refusing it.
    const KeptProfile kept =
        keep_profile(*store_, ProfileEvidence{"map", map, sources, "", "", Json()});
    ASSERT_TRUE(kept.foreign);
    ExperimentSpec s;
    s.candidate = dir_ / "cand-bound";
    put(s.candidate / "k.cu", "kernel bound\n");
    s.hypothesis = "h";
    s.mechanism = "m";
    s.failure_closes = "mechanism";
    s.no_falsifier_reason = "test";
    s.gain_bound_pct = 1;
    s.gain_bound_source = "map:" + kept.ref.id + "#k";
    std::string message;
    EXPECT_EQ(code_of([&] { (void)create_experiment(*target_, s); }, &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("gain_bound_source"), std::string::npos) << message;
    EXPECT_NE(message.find("foreign evidence"), std::string::npos) << message;
}

TEST_F(ProfileIdentityStore, ACpuOnlyTraceOfATestedTorchBindsToACpuOnlyTarget) {
    const std::string exp = experiment("kernel v2\n");
    const Json trace{{"format_version", "cko/profile-torch-v1"},
                     {"traces", Json::array({Json{{"summary", {{"kernel_time_ns", 0}}}}})}};
    const Json sources = Json::array({Json{{"tool", "kineto"}, {"tool_version", "2.11.0"}}});
    const KeptProfile kept =
        keep_profile(*store_, ProfileEvidence{"torch", trace, sources, exp, "reference", Json()});
    EXPECT_FALSE(kept.foreign);
}

}  // namespace
}  // namespace cko::eval
