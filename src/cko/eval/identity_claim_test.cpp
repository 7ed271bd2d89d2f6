// The identity rule: each gap alone, gaps combined, none; a manual lowering meets it and the lower
// wins; it never raises a claim; what it reads of an environment and of comparisons' observations.
#include "cko/eval/identity_claim.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using store::ClaimLayer;

MeasuredIdentity clean() {
    return MeasuredIdentity{true, false, {}, {}};
}

TEST(IdentityClaim, WithoutAGapTheTargetsLayerStandsAndNothingIsListed) {
    for (const ClaimLayer layer : {ClaimLayer::kernel, ClaimLayer::workload, ClaimLayer::serving}) {
        const IdentityClaim c = identity_claim(clean(), layer);
        EXPECT_TRUE(c.gaps.empty());
        EXPECT_FALSE(c.lowers());
        EXPECT_EQ(c.word(), store::claim_layer_name(layer));
    }
    EXPECT_EQ(identity_claim(clean(), ClaimLayer::serving).to_json(),
              (Json{{"supports", "serving"}, {"lowers", false}, {"gaps", Json::array()}}));
}

TEST(IdentityClaim, NoMachineIdAloneCapsAtKernelSayingWhy) {
    MeasuredIdentity id = clean();
    id.machine_id_known = false;
    const IdentityClaim c = identity_claim(id, ClaimLayer::workload);
    ASSERT_EQ(c.gaps.size(), 1u);
    EXPECT_EQ(c.gaps[0].gap, IdentityGap::no_machine_id);
    EXPECT_EQ(c.gaps[0].caps_at, store::LoweredTo::kernel);
    EXPECT_NE(c.gaps[0].reason.find("no machine id was recorded"), std::string::npos);
    EXPECT_TRUE(c.lowers());
    EXPECT_EQ(c.word(), "kernel");
    EXPECT_EQ(identity_claim(id, ClaimLayer::serving).word(), "kernel");
}

TEST(IdentityClaim, AContainerAloneCapsAtKernelNamingItsHints) {
    MeasuredIdentity id = clean();
    id.in_container = true;
    id.container_hints = {"/.dockerenv exists"};
    const IdentityClaim c = identity_claim(id, ClaimLayer::serving);
    ASSERT_EQ(c.gaps.size(), 1u);
    EXPECT_EQ(c.gaps[0].gap, IdentityGap::container);
    EXPECT_NE(c.gaps[0].reason.find("inside a container (/.dockerenv exists)"), std::string::npos)
        << c.gaps[0].reason;
    EXPECT_EQ(c.word(), "kernel");
}

TEST(IdentityClaim, UnverifiedGpuReadingsAloneLeaveNoClaimNamingTheWindows) {
    MeasuredIdentity id = clean();
    id.unverified_gpu_windows = {"confirm inv-1 (improved): no GPU reader in 2 call(s)"};
    const IdentityClaim c = identity_claim(id, ClaimLayer::kernel);
    ASSERT_EQ(c.gaps.size(), 1u);
    EXPECT_EQ(c.gaps[0].gap, IdentityGap::gpu_unverified);
    EXPECT_EQ(c.gaps[0].caps_at, store::LoweredTo::unconfirmed);
    EXPECT_NE(c.gaps[0].reason.find("confirm inv-1 (improved): no GPU reader"), std::string::npos);
    EXPECT_TRUE(c.lowers());
    EXPECT_EQ(c.word(), "unconfirmed");
}

TEST(IdentityClaim, GapsCombinedAreAllListedAndTheLowestCapWins) {
    const MeasuredIdentity id{false, true, {"/.dockerenv exists"}, {"audit inv-2 (improved): x"}};
    const IdentityClaim c = identity_claim(id, ClaimLayer::serving);
    ASSERT_EQ(c.gaps.size(), 3u);
    EXPECT_EQ(c.gaps[0].gap, IdentityGap::no_machine_id);
    EXPECT_EQ(c.gaps[1].gap, IdentityGap::container);
    EXPECT_EQ(c.gaps[2].gap, IdentityGap::gpu_unverified);
    EXPECT_EQ(c.word(), "unconfirmed");
    const Json j = c.to_json();
    EXPECT_EQ(j.at("supports"), "unconfirmed");
    EXPECT_EQ(j.at("gaps").at(1).at("gap"), "container");
    EXPECT_EQ(j.at("gaps").at(1).at("caps_at"), "kernel");
}

TEST(IdentityClaim, AGapAtOrAboveTheTargetsLayerIsListedButLowersNothing) {
    MeasuredIdentity id = clean();
    id.machine_id_known = false;
    id.in_container = true;
    const IdentityClaim c = identity_claim(id, ClaimLayer::kernel);
    EXPECT_EQ(c.gaps.size(), 2u);
    EXPECT_FALSE(c.lowers());
    EXPECT_EQ(c.word(), "kernel");  // never raised, never lowered below what a gap caps
}

TEST(IdentityClaim, AManualLoweringAndTheIdentityCombineTheLowerWins) {
    MeasuredIdentity id = clean();
    id.in_container = true;
    const IdentityClaim kernel_cap = identity_claim(id, ClaimLayer::serving);
    // Manual unconfirmed (-1) is below the identity's kernel: it wins.
    EXPECT_EQ(claim_word(combined_claim_rank(-1, kernel_cap)), "unconfirmed");
    // No manual lowering (the Target's serving, 2): the identity's kernel wins.
    EXPECT_EQ(claim_word(combined_claim_rank(2, kernel_cap)), "kernel");
    // No gap: the manual word stands; nothing raises it.
    EXPECT_EQ(claim_word(combined_claim_rank(0, identity_claim(clean(), ClaimLayer::serving))),
              "kernel");
    EXPECT_EQ(claim_word(1), "workload");
}

TEST(IdentityClaim, MeasuredIdentityReadsTheEnvironmentAndFirmFormalWindowsOfAGpuTarget) {
    const Json env{{"host",
                    {{"machine_id", nullptr},
                     {"in_container", true},
                     {"container_hints", Json::array({"/.dockerenv exists"})}}}};
    const Json observed{
        {"applied", true},
        {"gpu", {{"readings", 10}, {"readings_missing", 0}, {"calls_without_reader", 0}}}};
    const Json gap{
        {"applied", true},
        {"gpu", {{"readings", 10}, {"readings_missing", 3}, {"calls_without_reader", 0}}}};
    const Json comparisons =
        Json::array({Json{{"type", "confirm"},
                          {"id", "inv-1"},
                          {"state", "succeeded"},
                          {"verdict", "improved"},
                          {"observation", observed}},
                     Json{{"type", "audit"},
                          {"id", "inv-2"},
                          {"state", "succeeded"},
                          {"verdict", "regressed"},
                          {"observation", Json{{"applied", false}, {"gpu", nullptr}}}},
                     Json{{"type", "confirm"},
                          {"id", "inv-3"},
                          {"state", "succeeded"},
                          {"verdict", "mixed"},
                          {"observation", gap}},
                     Json{{"type", "confirm"},
                          {"id", "inv-4"},
                          {"state", "succeeded"},
                          {"verdict", "improved"},
                          {"observation", nullptr}},
                     // Claims nothing, or only triages: never a gap.
                     Json{{"type", "confirm"},
                          {"id", "inv-5"},
                          {"state", "succeeded"},
                          {"verdict", "inconclusive"},
                          {"observation", gap}},
                     Json{{"type", "screen"},
                          {"id", "inv-6"},
                          {"state", "succeeded"},
                          {"verdict", "improved"},
                          {"observation", gap}},
                     Json{{"type", "confirm"},
                          {"id", "inv-7"},
                          {"state", "failed"},
                          {"verdict", "improved"},
                          {"observation", gap}}});
    const MeasuredIdentity gpu = measured_identity(env, true, comparisons);
    EXPECT_FALSE(gpu.machine_id_known);
    EXPECT_TRUE(gpu.in_container);
    EXPECT_EQ(gpu.container_hints, std::vector<std::string>{"/.dockerenv exists"});
    EXPECT_EQ(gpu.unverified_gpu_windows,
              (std::vector<std::string>{
                  "audit inv-2 (regressed): the driver ran on a node this host's monitor does not "
                  "observe",
                  "confirm inv-3 (mixed): a target GPU was missing from 3 of 10 readings",
                  "confirm inv-4 (improved): its record holds no observation of the target GPUs"}));
    // A CPU-only Target has no GPU to verify; a recorded machine id is known.
    const MeasuredIdentity cpu = measured_identity(
        Json{{"host", {{"machine_id", "3d12"}, {"in_container", false}}}}, false, comparisons);
    EXPECT_TRUE(cpu.machine_id_known);
    EXPECT_FALSE(cpu.in_container);
    EXPECT_TRUE(cpu.unverified_gpu_windows.empty());
}

}  // namespace
}  // namespace cko::eval
