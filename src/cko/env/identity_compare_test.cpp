// The mismatch rule: machine, CPU, GPU set/model and driver invalidate; the rest is noted.
#include "cko/env/identity.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {

Identity sample_identity() {
    Identity id;
    id.host.machine_id = "0123456789abcdef";
    id.host.boot_id = "boot-1";
    id.host.hostname = "gpu-node-7";
    id.host.kernel_release = "6.1.0";
    id.host.arch = "x86_64";
    id.host.cpu_model = "AMD EPYC 9654";
    id.gpu_source = "nvml";
    GpuInfo gpu;
    gpu.uuid = "GPU-a";
    gpu.name = "NVIDIA H200";
    gpu.compute_capability = "9.0";
    gpu.memory_total_bytes = 150754820096ull;
    gpu.driver_version = "570.86.15";
    gpu.cuda_driver_version = "12.8";
    gpu.mig_enabled = false;
    gpu.power_limit_w = 700.0;
    gpu.sm_clock_mhz = 1980;
    id.gpus.push_back(gpu);
    id.driver_version = "570.86.15";
    id.cuda_driver_version = "12.8";
    return id;
}

TEST(IdentityMismatch, SameMachineLaterIsComparable) {
    const Json frozen = sample_identity().to_json();
    Identity now = sample_identity();
    now.gpus[0].sm_clock_mhz = 345;  // volatile state is not identity
    now.host.boot_id = "boot-2";     // a reboot is noted only
    now.host.hostname = "renamed";
    EXPECT_EQ(identity_mismatch(frozen, now), std::nullopt);
    const auto diffs = identity_differences(frozen, now.to_json());
    ASSERT_EQ(diffs.size(), 2u);
    EXPECT_EQ(diffs[0].field, "host.hostname");
    EXPECT_FALSE(diffs[0].invalidates);
    EXPECT_EQ(diffs[1].field, "host.boot_id");
}

TEST(IdentityMismatch, AnotherMachineIsInvalid) {
    const Json frozen = sample_identity().to_json();
    Identity now = sample_identity();
    now.host.machine_id = "fedcba9876543210";
    const auto reason = identity_mismatch(frozen, now);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("host.machine_id was '0123456789abcdef', now 'fedcba9876543210'"),
              std::string::npos)
        << *reason;
}

TEST(IdentityMismatch, AnotherGpuSetIsInvalid) {
    const Json frozen = sample_identity().to_json();
    Identity now = sample_identity();
    now.gpus[0].uuid = "GPU-b";
    const auto reason = identity_mismatch(frozen, now);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("gpus.uuids was 'GPU-a', now 'GPU-b'"), std::string::npos) << *reason;
    now.gpus.clear();
    EXPECT_NE(identity_mismatch(frozen, now)->find("now '(none)'"), std::string::npos);
}

TEST(IdentityMismatch, DriverUpdateAndMigAreInvalidPowerLimitIsNoted) {
    const Json frozen = sample_identity().to_json();
    Identity now = sample_identity();
    now.gpus[0].power_limit_w = 500.0;
    EXPECT_EQ(identity_mismatch(frozen, now), std::nullopt);
    now.driver_version = "575.51.03";
    now.gpus[0].mig_enabled = true;
    const auto reason = identity_mismatch(frozen, now);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("gpus[GPU-a].mig_enabled was 'false', now 'true'"), std::string::npos);
    EXPECT_NE(reason->find("driver_version was '570.86.15', now '575.51.03'"), std::string::npos);
}

TEST(IdentityMismatch, AnUnknownValueCannotProveAChange) {
    Identity frozen_id = sample_identity();
    frozen_id.host.machine_id.clear();  // a container without /etc/machine-id
    Identity now = sample_identity();
    EXPECT_EQ(identity_mismatch(frozen_id.to_json(), now), std::nullopt);
}

TEST(IdentityMismatch, RejectsWhatIsNotAnIdentity) {
    EXPECT_CKO_ERROR((void)identity_mismatch(Json{{"host", {}}}, sample_identity()),
                     ErrorCode::invalid_record);
}

}  // namespace
}  // namespace cko::env
