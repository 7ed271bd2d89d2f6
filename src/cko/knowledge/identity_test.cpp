// Identity: versions, compute capabilities from arch spellings, families by range, doctor
// documents.
#include "cko/knowledge/identity.hpp"

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

namespace cko::knowledge {
namespace {

TEST(Identity, VersionsCompareNumericallyAndIgnoreLocalTails) {
    EXPECT_LT(*Version::parse("2.9"), *Version::parse("2.11.0+cu130"));
    EXPECT_EQ(*Version::parse("13.0"), *Version::parse("13"));
    EXPECT_EQ(Version::parse("2.11.0+cu130")->text(), "2.11.0");
    // Printed as spelled (the H200's driver read "580.159.4" before), compared as numbers.
    EXPECT_EQ(Version::parse("580.159.04")->text(), "580.159.04");
    EXPECT_EQ(*Version::parse("580.159.04"), *Version::parse("580.159.4"));
    EXPECT_FALSE(Version::parse("latest").has_value());
    EXPECT_FALSE(Version::parse(".5").has_value());
}

TEST(Identity, ArchSuffixesKeepTheirComputeCapability) {
    EXPECT_EQ(cc_from_arch("sm_90a")->text(), "9.0");
    EXPECT_EQ(cc_from_arch("sm_100f")->text(), "10.0");
    EXPECT_EQ(cc_from_arch("sm_120")->text(), "12.0");
    EXPECT_EQ(cc_from_arch("compute_89")->text(), "8.9");
    EXPECT_FALSE(cc_from_arch("gfx942").has_value());
}

TEST(Identity, FamiliesAreRangesSoNewMinorRevisionsBelong) {
    EXPECT_EQ(family_of({8, 6}), ArchFamily::ampere);
    EXPECT_EQ(family_of({8, 7}), ArchFamily::ampere);
    EXPECT_EQ(family_of({8, 9}), ArchFamily::ada);
    EXPECT_EQ(family_of({9, 0}), ArchFamily::hopper);
    EXPECT_EQ(family_of({10, 3}), ArchFamily::blackwell);
    EXPECT_EQ(family_of({12, 1}), ArchFamily::blackwell_consumer);
    EXPECT_FALSE(family_of({6, 1}).has_value());
}

TEST(Identity, ADoctorDocumentGivesComputeCapabilityCudaAndDriver) {
    const Json doctor = Json::parse(R"({"format_version": "cko/doctor-v1", "identity": {
        "driver_version": "580.159.03",
        "gpus": [{"compute_capability": "9.0"}, {"compute_capability": "9.0"}],
        "tools": [{"name": "nvcc", "version": "13.0.88"}]}})");
    const Identity id = identity_from_doctor(doctor, "d.json");
    EXPECT_EQ(id.arch, "sm_90");
    EXPECT_EQ(id.cc->text(), "9.0");
    EXPECT_EQ(id.cuda->text(), "13.0.88");
    EXPECT_EQ(id.driver->text(), "580.159.03");  // as the driver spells it
}

TEST(Identity, GpusOfDifferentComputeCapabilitiesMustBeChosenBetween) {
    const Json doctor = Json::parse(R"({"format_version": "cko/doctor-v1", "identity": {
        "gpus": [{"compute_capability": "9.0"}, {"compute_capability": "8.0"}]}})");
    EXPECT_THROW((void)identity_from_doctor(doctor, "d.json"), Error);
    EXPECT_THROW((void)identity_from_doctor(Json::parse(R"({"format_version": "x"})"), "d.json"),
                 Error);
}

TEST(Identity, FrameworkNamesHaveOneSpelling) {
    EXPECT_EQ(canonical_framework("PyTorch"), "torch");
    EXPECT_EQ(canonical_framework("tensorrt-llm"), "tensorrt_llm");
    EXPECT_EQ(canonical_framework("vllm"), "vllm");
}

}  // namespace
}  // namespace cko::knowledge
