// ptxas -v logs: the H200 fixture exactly, spills, multi-arch, callees, older CUDA spellings.
#include "cko/compiler/ptxas_log.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::compiler {
namespace {

PtxasReport parse_fixture(const std::string& name) {
    const std::string text = read_file_capped("tests/fixtures/compiler/" + name, 1 << 20);
    return parse_ptxas_log(text, "sha", name);
}

const PtxasFunction& find(const PtxasReport& r, std::string_view symbol, std::string_view arch) {
    for (const PtxasFunction& f : r.functions) {
        if (f.symbol == symbol && f.arch == arch) {
            return f;
        }
    }
    throw std::runtime_error("no function " + std::string(symbol) + " for " + std::string(arch));
}

TEST(PtxasLog, TheH200FixtureParsesExactly) {
    const PtxasReport r = parse_fixture("ptxas_v.txt");
    ASSERT_EQ(r.functions.size(), 3u);
    const PtxasFunction& gemm = r.functions[0];
    EXPECT_EQ(gemm.symbol, "_Z11sgemm_naivePKfS0_Pfi");
    EXPECT_EQ(gemm.name, "sgemm_naive(float const*, float const*, float*, int)");
    EXPECT_EQ(gemm.arch, "sm_90");
    EXPECT_TRUE(gemm.entry);
    EXPECT_EQ(gemm.registers, 32);
    EXPECT_EQ(gemm.barriers, 0);
    EXPECT_EQ(gemm.stack_frame_bytes, 0);
    EXPECT_EQ(gemm.spill_stores_bytes, 0);
    EXPECT_EQ(gemm.spill_loads_bytes, 0);
    EXPECT_FALSE(gemm.shared_bytes.has_value());
    ASSERT_TRUE(gemm.compile_time_ms.has_value());
    EXPECT_DOUBLE_EQ(*gemm.compile_time_ms, 27.248);
    EXPECT_EQ(find(r, "_Z10scale_vec4PK6float4PS_fi", "sm_90").registers, 18);
    EXPECT_EQ(find(r, "_Z11scale_naivePKfPffi", "sm_90").registers, 12);
    EXPECT_EQ(r.notes, std::vector<std::string>{"0 bytes gmem"});
    EXPECT_EQ(r.other_lines, 0u);
}

TEST(PtxasLog, SpillsStackAndCumulativeStackBecomeFacts) {
    const PtxasReport r = parse_fixture("spill.sm_90.ptxas.txt");
    ASSERT_EQ(r.functions.size(), 1u);
    const PtxasFunction& f = r.functions[0];
    EXPECT_EQ(f.stack_frame_bytes, 144);
    EXPECT_EQ(f.spill_stores_bytes, 276);
    EXPECT_EQ(f.spill_loads_bytes, 296);
    EXPECT_EQ(f.cumulative_stack_bytes, 144);
    bool found = false;
    for (const profile::Fact& fact : f.facts) {
        if (fact.id == "ptxas.spill_stores_bytes") {
            found = true;
            EXPECT_EQ(fact.value, 276);
            EXPECT_EQ(fact.unit, profile::BaseUnit::byte);
            EXPECT_EQ(fact.scope.kernel_mangled, "_Z11spill_heavyPKfPfi");
        }
    }
    EXPECT_TRUE(found);
}

TEST(PtxasLog, OneFunctionPerArchitectureOfAMultiTargetBuild) {
    const PtxasReport r = parse_fixture("mix.multi.ptxas.txt");
    ASSERT_EQ(r.functions.size(), 8u);
    const PtxasFunction& a80 = find(r, "_Z17async_copy_reducePK6float4Pfi", "sm_80");
    EXPECT_EQ(a80.registers, 16);
    EXPECT_EQ(a80.barriers, 1);
    EXPECT_EQ(a80.shared_bytes, 4096);
    EXPECT_EQ(a80.constant_bytes.at(0), 372);
    EXPECT_EQ(find(r, "_Z17async_copy_reducePK6float4Pfi", "sm_90a").registers, 14);
    EXPECT_EQ(find(r, "_Z7mma_f16PKjS0_Pf", "sm_100a").registers, 18);
    EXPECT_EQ(find(r, "_Z7mma_f16PKjS0_Pf", "sm_120").arch, "sm_120");
}

TEST(PtxasLog, ACalledDeviceFunctionIsReportedButNotAnEntry) {
    const PtxasReport r = parse_fixture("callee.sm_89.ptxas.txt");
    ASSERT_EQ(r.functions.size(), 2u);
    EXPECT_TRUE(r.functions[0].entry);
    EXPECT_EQ(r.functions[0].registers, 36);
    EXPECT_FALSE(r.functions[1].entry);
    EXPECT_EQ(r.functions[1].name, "poly(float const*, float, int)");
    EXPECT_EQ(r.functions[1].arch, "sm_89");
    EXPECT_FALSE(r.functions[1].registers.has_value());
    EXPECT_EQ(r.functions[1].stack_frame_bytes, 0);
}

TEST(PtxasLog, OlderSpellingsAndNvccNoiseAreRead) {
    // CUDA 11 prints no barriers and no compile time; nvcc -v interleaves its own command lines.
    const PtxasReport r = parse_ptxas_log(
        "#$ ptxas -arch=sm_80 -m64 -v \"x.ptx\" -o \"x.cubin\"\n"
        "ptxas info    : 0 bytes gmem, 8 bytes cmem[4]\n"
        "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n"
        "ptxas info    : Function properties for _Z1kPf\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, 16 bytes smem, 356 bytes cmem[0], 4 bytes cmem[2], 2 "
        "textures\n"
        "ptxas warning : Registers are spilled to local memory in function '_Z1kPf', 4 bytes spill "
        "stores, 4 bytes spill loads\n",
        "sha", "cuda11.txt");
    ASSERT_EQ(r.functions.size(), 1u);
    const PtxasFunction& f = r.functions[0];
    EXPECT_EQ(f.registers, 255);
    EXPECT_FALSE(f.barriers.has_value());
    EXPECT_EQ(f.shared_bytes, 16);
    EXPECT_EQ(f.constant_bytes.at(2), 4);
    EXPECT_EQ(f.unmodeled, std::vector<std::string>{"2 textures"});
    EXPECT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.other_lines, 1u);
}

TEST(PtxasLog, AnUnreadablePropertiesLineNamesTheLine) {
    EXPECT_CKO_ERROR(
        (void)parse_ptxas_log("ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n"
                              "ptxas info    : Function properties for _Z1kPf\n"
                              "    lots of bytes stack frame\n",
                              "sha", "bad.txt"),
        ErrorCode::malformed_input, "bad.txt:3");
}

TEST(PtxasLog, ALogWithoutFunctionsSaysHowToMakeOne) {
    EXPECT_CKO_ERROR((void)parse_ptxas_log("nvcc warning : nothing\n", "sha", "empty.txt"),
                     ErrorCode::missing_field, "-Xptxas -v");
}

}  // namespace
}  // namespace cko::compiler

namespace cko::compiler {
namespace {

TEST(ResUsage, CuobjdumpResourceUsageOfAFourArchitectureFatbin) {
    const std::string text =
        read_file_capped("tests/fixtures/compiler/mix.multi.res-usage.txt", 1 << 20);
    const PtxasReport r = parse_resource_report(text, "sha", "mix.multi.res-usage.txt");
    EXPECT_EQ(r.source.dialect, "cuobjdump-res-usage");
    ASSERT_EQ(r.functions.size(), 8u);
    const PtxasFunction& f = r.functions[2];
    EXPECT_EQ(f.symbol, "_Z17async_copy_reducePK6float4Pfi");
    EXPECT_EQ(f.arch, "sm_90a");
    EXPECT_EQ(f.registers, 14);
    EXPECT_EQ(f.shared_bytes, 5120);  // the binary's figure includes reserved shared memory
    EXPECT_EQ(f.constant_bytes.at(0), 548);
    EXPECT_FALSE(f.spill_stores_bytes.has_value());
    EXPECT_TRUE(f.unmodeled.empty());
    EXPECT_EQ(r.other_lines, 0u);
}

}  // namespace
}  // namespace cko::compiler
