// SASS diff: same code in two dialects diffs to nothing; a changed load width shows as such.
#include "cko/compiler/sass_diff.hpp"

#include "cko/util/files.hpp"

#include <gtest/gtest.h>

namespace cko::compiler {
namespace {

SassReport report(const std::string& text, const std::string& name) {
    return make_sass_report(parse_sass_text(text, name), {}, "text");
}

std::string fixture(const std::string& name) {
    return read_file_capped("tests/fixtures/compiler/" + name, 8 << 20);
}

TEST(SassDiff, TheSameCodeInBothDialectsHasNoChange) {
    const SassDiff d = diff_sass(report(fixture("mix.sm_80.cuobjdump.sass"), "a"),
                                 report(fixture("mix.sm_80.nvdisasm.sass"), "b"));
    ASSERT_EQ(d.kernels.size(), 2u);
    for (const SassKernelDiff& k : d.kernels) {
        EXPECT_TRUE(k.opcodes.empty()) << k.symbol;
        EXPECT_TRUE(k.signatures.empty()) << k.symbol;
    }
    EXPECT_TRUE(d.only_in_a.empty());
    EXPECT_TRUE(d.only_in_b.empty());
}

TEST(SassDiff, NarrowerLoadsAndAMissingKernelAreReported) {
    std::string b = fixture("vec.sass");
    const std::size_t at = b.find("LDG.E.128.CONSTANT");
    ASSERT_NE(at, std::string::npos);
    b.replace(at, 18, "LDG.E.64.CONSTANT ");
    const std::size_t f = b.find("Function : _Z11sgemm_naive");
    b.replace(f, 26, "Function : _Z11sgemm_other");
    const SassReport ra = report(fixture("vec.sass"), "a");
    const SassReport rb = report(b, "b");
    const SassDiff d = diff_sass(ra, rb);
    bool saw = false;
    for (const SassKernelDiff& k : d.kernels) {
        if (k.symbol == "_Z10scale_vec4PK6float4PS_fi") {
            ASSERT_EQ(k.signatures.size(), 1u);
            EXPECT_EQ(k.signatures[0].name, "ldg_128");
            EXPECT_EQ(k.signatures[0].a, 1u);
            EXPECT_EQ(k.signatures[0].b, 0u);
            EXPECT_TRUE(k.opcodes.empty());  // still one LDG
            saw = true;
        }
    }
    EXPECT_TRUE(saw);
    ASSERT_EQ(d.only_in_a.size(), 1u);
    EXPECT_EQ(d.only_in_a[0].first.substr(0, 15), "_Z11sgemm_naive");
    ASSERT_EQ(d.only_in_b.size(), 1u);
    const Json j = sass_diff_to_json(d, ra, rb);
    EXPECT_EQ(j["format_version"], "cko/sass-diff-v1");
}

}  // namespace
}  // namespace cko::compiler
