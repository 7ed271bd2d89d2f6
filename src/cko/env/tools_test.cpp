// Tool versions from real --version texts, the parallel probe with its timeout, and the
// counter-permission decision.
#include "cko/env/tools.hpp"

#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {
namespace fs = std::filesystem;

TEST(Tools, VersionOfEachToolsOutput) {
    std::string line;
    EXPECT_EQ(parse_tool_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                 "Copyright (c) 2005-2024 NVIDIA Corporation\n"
                                 "Built on Thu_Mar_28_02:18:24_PDT_2024\n"
                                 "Cuda compilation tools, release 12.4, V12.4.131\n"
                                 "Build cuda_12.4.r12.4/compiler.34097967_0\n",
                                 &line),
              "12.4.131");
    EXPECT_EQ(line, "Cuda compilation tools, release 12.4, V12.4.131");
    EXPECT_EQ(parse_tool_version("NVIDIA (R) Nsight Compute Command Line Profiler\n"
                                 "Copyright (c) 2018-2024 NVIDIA Corporation\n"
                                 "Version 2024.1.1.0 (build 33998838) (public-release)\n"),
              "2024.1.1.0");
    EXPECT_EQ(parse_tool_version("NVIDIA Nsight Systems version 2024.2.1.106-242134037904v0\n"),
              "2024.2.1.106-242134037904v0");
    EXPECT_EQ(parse_tool_version("cuobjdump: NVIDIA (R) CUDA Object Dump Tool\n"
                                 "Copyright (c) 2005-2024 NVIDIA Corporation\n"
                                 "Built on Tue_Feb_27_16:16:43_PST_2024\n"
                                 "Cuda compilation tools, release 12.4, V12.4.99\n"),
              "12.4.99");
    EXPECT_EQ(parse_tool_version("NVIDIA (R) Compute Sanitizer\nCopyright (c) 2020-2024 NVIDIA "
                                 "Corporation\nVersion 2024.1.0.0 (build 33807211) "
                                 "(public-release)\n"),
              "2024.1.0.0");
    EXPECT_EQ(parse_tool_version("usage: frobnicate [options]\n", &line), "");
    EXPECT_EQ(line, "");
}

void write_script(const fs::path& path, const std::string& body) {
    (void)test::write_executable(path, "#!/bin/sh\n" + body + "\n");
}

TEST(Tools, ProbeFindsRunsAndTimesOut) {
    const test::TempDir scratch;
    const fs::path dir = scratch / "tools_test_bin";
    fs::create_directories(dir);
    write_script(dir / "nvcc", "echo 'Cuda compilation tools, release 12.8, V12.8.61'");
    write_script(dir / "ncu", "exec sleep 5");
    write_script(dir / "nsys", "echo broken >&2; exit 2");
    const auto tools =
        probe_tools({"nvcc", "ncu", "nsys", "nvdisasm"}, {dir}, std::chrono::milliseconds(300));
    ASSERT_EQ(tools.size(), 4u);
    EXPECT_EQ(tools[0].version, "12.8.61");
    EXPECT_TRUE(tools[0].error.empty()) << tools[0].error;
    EXPECT_EQ(tools[0].path, (dir / "nvcc").string());
    EXPECT_NE(tools[1].error.find("did not finish within 300 ms"), std::string::npos);
    EXPECT_EQ(tools[2].error, "--version exited 2");
    EXPECT_FALSE(tools[3].found());
    EXPECT_TRUE(tools[3].to_json()["path"].is_null());
}

TEST(Tools, CounterPermissionFromDriverParameter) {
    const std::string params = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n";
    EXPECT_EQ(profiling_admin_only(params), true);
    EXPECT_EQ(profiling_admin_only("RmProfilingAdminOnly: 0\n"), false);
    EXPECT_FALSE(profiling_admin_only("EnableMSI: 1\n"));

    EXPECT_EQ(counter_permission(true, false).permitted, false);
    EXPECT_NE(counter_permission(true, false).detail.find("ERR_NVGPUCTRPERM"), std::string::npos);
    EXPECT_EQ(counter_permission(true, true).permitted, true);
    EXPECT_EQ(counter_permission(false, false).permitted, true);
    EXPECT_FALSE(counter_permission(std::nullopt, true).permitted);
}

}  // namespace
}  // namespace cko::env
