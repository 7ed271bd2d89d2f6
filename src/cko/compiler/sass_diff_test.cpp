// SASS diff: same code in two dialects diffs to nothing; a changed load width shows as such.
#include "cko/compiler/sass_diff.hpp"

#include "cko/util/files.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

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

// A listing of one kernel `k` for `arch` whose body is the given instruction lines.
std::string listing(const std::string& arch, const std::vector<std::string>& body,
                    const std::string& symbol = "_Z1kPf") {
    std::string t =
        "\n\tcode for " + arch + "\n\t.target\t" + arch + "\n\n\t\tFunction : " + symbol + "\n";
    int offset = 0;
    for (const std::string& line : body) {
        char addr[32];
        std::snprintf(addr, sizeof addr, "/*%04x*/", offset);
        t += std::string("        ") + addr + "                   " + line + " ;\n";
        offset += 16;
    }
    return t;
}

// docs/compiler.md: kernels are matched by symbol AND architecture; counts are compared both ways
// (an opcode only in B is a change from 0), the delta is b − a, an unchanged kernel is listed with
// nothing changed.
TEST(SassDiff, MatchesBySymbolAndArchAndCountsEveryOpcodeOfEitherSide) {
    const SassReport a = report(listing("sm_90", {"LDG.E R0, desc[UR4][R2.64]", "FADD R0, R0, R0",
                                                  "FADD R0, R0, R0", "EXIT"}) +
                                    listing("sm_80", {"EXIT"}, "_Z4onlyv"),
                                "a");
    const SassReport b =
        report(listing("sm_90", {"LDG.E R0, desc[UR4][R2.64]", "FFMA R0, R0, R0, R0",
                                 "STG.E desc[UR4][R2.64], R0", "EXIT"}) +
                   listing("sm_90", {"EXIT"}, "_Z4onlyv"),
               "b");
    const SassDiff d = diff_sass(a, b);
    ASSERT_EQ(d.kernels.size(), 1u);
    const SassKernelDiff& k = d.kernels[0];
    EXPECT_EQ(k.symbol, "_Z1kPf");
    EXPECT_EQ(k.instructions_a, 4u);
    EXPECT_EQ(k.instructions_b, 4u);
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> ops;
    for (const CountChange& c : k.opcodes) {
        ops[c.name] = {c.a, c.b};
    }
    const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> want = {
        {"FADD", {2, 0}}, {"FFMA", {0, 1}}, {"STG", {0, 1}}};
    EXPECT_EQ(ops, want);  // LDG and EXIT are unchanged: not listed
    // The same symbol on another architecture is a different kernel: only in A and only in B.
    ASSERT_EQ(d.only_in_a.size(), 1u);
    EXPECT_EQ(d.only_in_a[0], (std::pair<std::string, std::string>{"_Z4onlyv", "sm_80"}));
    ASSERT_EQ(d.only_in_b.size(), 1u);
    EXPECT_EQ(d.only_in_b[0], (std::pair<std::string, std::string>{"_Z4onlyv", "sm_90"}));
    const Json j = sass_diff_to_json(d, a, b);
    for (const Json& c : j["kernels"][0]["opcodes"]) {
        EXPECT_EQ(c["delta"], c["b"].get<std::int64_t>() - c["a"].get<std::int64_t>()) << c;
    }
    // Identical kernels: listed, with nothing changed.
    const SassDiff same = diff_sass(a, a);
    ASSERT_EQ(same.kernels.size(), 2u);
    for (const SassKernelDiff& s : same.kernels) {
        EXPECT_TRUE(s.opcodes.empty() && s.signatures.empty()) << s.symbol;
    }
}

}  // namespace
}  // namespace cko::compiler
