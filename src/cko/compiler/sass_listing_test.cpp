// SASS text: the H200 cuobjdump fixture, sm_90a/sm_100a/sm_120 dumps, nvdisasm, exact signatures.
#include "cko/compiler/sass_listing.hpp"
#include "cko/compiler/sass_report.hpp"
#include "cko/compiler/sass_signatures.hpp"

#include "cko/fact/fact_id.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::compiler {
namespace {

SassListing sass_fixture(const std::string& name) {
    const std::string text = read_file_capped("tests/fixtures/compiler/" + name, 8 << 20);
    return parse_sass_text(text, name);
}

const SassKernel& kernel(const SassListing& l, std::string_view symbol,
                         std::string_view arch = "") {
    for (const SassKernel& k : l.kernels) {
        if (k.symbol == symbol && (arch.empty() || k.arch == arch)) {
            return k;
        }
    }
    throw std::runtime_error("no kernel " + std::string(symbol));
}

std::uint64_t sig(std::string_view name, const SassKernel& k) {
    const SassSignature* s = find_signature(name);
    if (s == nullptr) {
        throw std::runtime_error("no signature " + std::string(name));
    }
    return signature_count(*s, k);
}

TEST(SassListing, TheH200VecDumpHasThreeKernelsAndScaleVec4Loads128Bits) {
    const SassListing l = sass_fixture("vec.sass");
    EXPECT_EQ(l.dialect, SassDialect::cuobjdump);
    EXPECT_EQ(l.architectures, std::vector<std::string>{"sm_90"});
    ASSERT_EQ(l.kernels.size(), 3u);
    const SassKernel& vec4 = kernel(l, "_Z10scale_vec4PK6float4PS_fi");
    EXPECT_EQ(vec4.arch, "sm_90");
    EXPECT_EQ(vec4.mnemonic_counts.at("LDG.E.128.CONSTANT"), 1u);
    EXPECT_EQ(sig("ldg_128", vec4), 1u);
    EXPECT_EQ(sig("stg_128", vec4), 1u);
    const SassKernel& naive = kernel(l, "_Z11scale_naivePKfPffi");
    EXPECT_EQ(sig("ldg_128", naive), 0u);  // LDG.E.CONSTANT is 32-bit
    EXPECT_EQ(sig("local_memory", naive), 0u);
    EXPECT_EQ(l.unrecognized_lines, 0u);
}

TEST(SassListing, SignaturesMatchExactOpcodesNeverSubstrings) {
    const SassListing l = sass_fixture("vec.sass");
    const SassKernel& gemm = kernel(l, "_Z11sgemm_naivePKfS0_Pfi");
    // sgemm_naive has HFMA2.MMA (a move idiom on the FMA pipe), which a substring search for
    // "MMA" or "HMMA" would count as tensor-core use.
    EXPECT_GT(gemm.mnemonic_counts.at("HFMA2.MMA"), 0u);
    EXPECT_EQ(sig("hmma", gemm), 0u);
    EXPECT_EQ(sig("tensor_core", gemm), 0u);
    // RED is not REDUX, STS is not LDGSTS.
    EXPECT_FALSE(signature_matches(*find_signature("global_atomic"), split_opcode("REDUX.SUM")));
    EXPECT_TRUE(
        signature_matches(*find_signature("global_atomic"), split_opcode("RED.E.ADD.F32.FTZ.RN")));
}

TEST(SassListing, AnSm90aCubinWithWgmmaShowsHgmma) {
    for (const char* name : {"wgmma.sm_90a.cuobjdump.sass", "wgmma.sm_90a.nvdisasm.sass"}) {
        const SassListing l = sass_fixture(name);
        EXPECT_EQ(l.architectures, std::vector<std::string>{"sm_90a"}) << name;
        ASSERT_EQ(l.kernels.size(), 1u) << name;
        const SassKernel& k = l.kernels[0];
        EXPECT_EQ(k.arch, "sm_90a");
        EXPECT_EQ(k.mnemonic_counts.at("HGMMA.64x8x16.F32.BF16"), 1u);
        EXPECT_EQ(sig("hgmma", k), 1u);
        EXPECT_EQ(sig("tensor_core", k), 1u);
        EXPECT_EQ(l.unrecognized_lines, 0u) << name << ": " << l.first_unrecognized.front();
    }
    EXPECT_EQ(sass_fixture("wgmma.sm_90a.nvdisasm.sass").dialect, SassDialect::nvdisasm);
}

TEST(SassListing, BothDialectsCountTheSameInstructions) {
    for (const char* stem : {"wgmma.sm_90a", "tma.sm_90", "mix.sm_80"}) {
        const SassListing a = sass_fixture(std::string(stem) + ".cuobjdump.sass");
        const SassListing b = sass_fixture(std::string(stem) + ".nvdisasm.sass");
        ASSERT_EQ(a.kernels.size(), b.kernels.size()) << stem;
        for (const SassKernel& ka : a.kernels) {
            const SassKernel& kb = kernel(b, ka.symbol);
            EXPECT_EQ(ka.opcode_counts, kb.opcode_counts) << stem << " " << ka.symbol;
        }
    }
}

TEST(SassListing, TmaMbarrierAsyncCopyShufflesAtomicsAndSpills) {
    const SassKernel tma = sass_fixture("tma.sm_90.cuobjdump.sass").kernels.at(0);
    EXPECT_EQ(sig("utmaldg", tma), 1u);
    EXPECT_GT(sig("mbarrier", tma), 0u);
    const SassListing mix = sass_fixture("mix.sm_80.cuobjdump.sass");
    const SassKernel& copy = kernel(mix, "_Z17async_copy_reducePK6float4Pfi");
    EXPECT_EQ(sig("ldgsts", copy), 1u);
    EXPECT_EQ(sig("shuffle", copy), 5u);
    EXPECT_EQ(sig("global_atomic", copy), 1u);
    EXPECT_EQ(sig("mufu", copy), 1u);
    EXPECT_EQ(sig("block_barrier", copy), 1u);
    EXPECT_EQ(sig("hmma", kernel(mix, "_Z7mma_f16PKjS0_Pf")), 1u);
    const SassKernel spill = sass_fixture("spill.sm_90.cuobjdump.sass").kernels.at(0);
    EXPECT_EQ(spill.opcode_counts.at("LDL") + spill.opcode_counts.at("STL"),
              sig("local_memory", spill));
    EXPECT_GT(sig("local_memory", spill), 100u);
}

TEST(SassListing, AFatbinWithFourArchitecturesKeepsTheirSuffixes) {
    const SassListing l = sass_fixture("mix.multi.cuobjdump.sass");
    EXPECT_EQ(l.architectures, (std::vector<std::string>{"sm_80", "sm_90a", "sm_100a", "sm_120"}));
    EXPECT_EQ(l.kernels.size(), 8u);
    for (const char* arch : {"sm_80", "sm_90a", "sm_100a", "sm_120"}) {
        EXPECT_EQ(sig("hmma", kernel(l, "_Z7mma_f16PKjS0_Pf", arch)), 1u) << arch;
    }
    EXPECT_EQ(l.unrecognized_lines, 0u);
}

TEST(SassListing, ABlackwellTcgen05KernelShowsUtchmmaInBothDialects) {
    for (const char* name : {"tcgen05.sm_100a.cuobjdump.sass", "tcgen05.sm_100a.nvdisasm.sass"}) {
        const SassListing l = sass_fixture(name);
        ASSERT_EQ(l.kernels.size(), 1u) << name;
        const SassKernel& k = l.kernels[0];
        EXPECT_EQ(k.arch, "sm_100a") << name;
        EXPECT_EQ(sig("utchmma", k), 1u) << name;  // a predicated "@!UP1 UTCHMMA ..."
        EXPECT_EQ(sig("tensor_core", k), 1u) << name;
        EXPECT_EQ(sig("hgmma", k), 0u) << name;
        EXPECT_EQ(l.unrecognized_lines, 0u) << name;
    }
}

TEST(SassListing, Fp8WgmmaTmaStoreIntegerAndFp64MmaAndGlobalAtomics) {
    const SassListing l = sass_fixture("more_ops.sm_90a.cuobjdump.sass");
    ASSERT_EQ(l.kernels.size(), 3u);
    const SassKernel& fp8 = kernel(l, "_Z9wgmma_fp8PKmPf");
    EXPECT_EQ(sig("qgmma", fp8), 1u);
    EXPECT_EQ(sig("hgmma", fp8), 0u);
    EXPECT_EQ(sig("utmastg", kernel(l, "_Z14tma_store_tile14CUtensorMap_stPKf")), 1u);
    const SassKernel& mixed = kernel(l, "_Z16imma_dmma_atomicPKiPKdPiPdS3_");
    EXPECT_EQ(sig("imma", mixed), 1u);
    EXPECT_EQ(mixed.opcode_counts.at("DMMA"), 1u);
    EXPECT_EQ(sig("tensor_core", mixed), 2u);    // IMMA + DMMA
    EXPECT_EQ(sig("global_atomic", mixed), 1u);  // ATOMG
    EXPECT_EQ(l.unrecognized_lines, 0u);
}

TEST(SassListing, ArchitectureSpellingsAreAcceptedByShapeNotByList) {
    for (const char* a : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_100f",
                          "sm_103", "sm_120", "sm_121a"}) {
        EXPECT_TRUE(is_sm_arch(a)) << a;
    }
    for (const char* a : {"sm_9", "sm_1000", "compute_90", "sm_90ab", "sm90"}) {
        EXPECT_FALSE(is_sm_arch(a)) << a;
    }
}

TEST(SassListing, AnNvdisasmListingWithOnlyHeaderflagsNamesItsArchitecture) {
    // Older nvdisasm listings print no `.target` line: the ELF header flags are the only place the
    // listing states its SM (EF_CUDA_SM80; EF_CUDA_ACCELERATORS marks the "a" variant).
    const SassListing l = sass_fixture("headerflags.sm_80.nvdisasm.sass");
    EXPECT_EQ(l.dialect, SassDialect::nvdisasm);
    EXPECT_EQ(l.architectures, std::vector<std::string>{"sm_80"});
    ASSERT_EQ(l.kernels.size(), 1u);
    EXPECT_EQ(l.kernels[0].arch, "sm_80");
    EXPECT_EQ(l.kernels[0].mnemonic_counts.at("LDGSTS.E.BYPASS.128"), 1u);

    const std::string text =
        "\t.headerflags\t@\"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
        "\t.section\t.text._Z1kv,\"ax\",@progbits\n"
        "_Z1kv:\n"
        "        /*0000*/                   EXIT ;\n";
    const SassListing a = parse_sass_text(text, "accelerators");
    ASSERT_EQ(a.kernels.size(), 1u);
    EXPECT_EQ(a.kernels[0].arch, "sm_90a");
}

TEST(SassListing, TextWithoutInstructionsIsRefusedWithTheFix) {
    EXPECT_CKO_ERROR((void)parse_sass_text("hello\nworld\n", "notes.txt"),
                     ErrorCode::unsupported_format, "cuobjdump --dump-sass");
}

TEST(SassReport, EverySignatureFactIsInTheFactVocabulary) {
    const SassListing l = sass_fixture("wgmma.sm_90a.cuobjdump.sass");
    const SassReport r = make_sass_report(l, {}, "text");
    for (const profile::Fact& f : r.kernels.at(0).facts) {
        EXPECT_NE(fact::lookup_fact_id(f.id), nullptr) << f.id;
    }
    for (const SassSignature& s : sass_signatures()) {
        EXPECT_NE(fact::lookup_fact_id("sass.has." + std::string(s.name)), nullptr) << s.name;
    }
}

}  // namespace
}  // namespace cko::compiler
