// Binary inputs: magic sniffing, cuobjdump run on a cubin (a stand-in script here), missing tool.
#include "cko/compiler/sass_input.hpp"

#include "cko/compiler/sass_signatures.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace cko::compiler {
namespace {

namespace fs = std::filesystem;

TEST(SassInput, MagicTellsCubinsAndFatbinsFromText) {
    std::ifstream cubin("tests/fixtures/compiler/wgmma.sm_90a.cubin", std::ios::binary);
    std::string head(4, '\0');
    cubin.read(head.data(), 4);
    EXPECT_EQ(sniff_binary(head), BinaryKind::elf);
    std::ifstream fatbin("tests/fixtures/compiler/mix.multi.fatbin", std::ios::binary);
    fatbin.read(head.data(), 4);
    EXPECT_EQ(sniff_binary(head), BinaryKind::fatbin);
    EXPECT_EQ(sniff_binary("\tcode for sm_90"), BinaryKind::not_binary);
}

class FakeTool : public test::ScratchTest {
protected:
    std::string write_tool(const std::string& body) {
        return test::write_executable(dir_ / "cuobjdump", "#!/bin/sh\n" + body).string();
    }
};

TEST_F(FakeTool, ABinaryGoesThroughCuobjdumpAndKeepsItsArchitectureSuffix) {
    const std::string dump =
        fs::absolute("tests/fixtures/compiler/wgmma.sm_90a.cuobjdump.sass").string();
    SassInputOptions options;
    options.cuobjdump = write_tool(
        "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.85'; "
        "exit 0; fi\n"
        "[ \"$1\" = --dump-sass ] || exit 9\ncat '" +
        dump + "'\n");
    const SassReport r = load_sass("tests/fixtures/compiler/wgmma.sm_90a.cubin", options);
    EXPECT_EQ(r.input_kind, "binary");
    EXPECT_EQ(r.source.tool, "cuobjdump");
    EXPECT_EQ(r.source.tool_version, "13.0.85");
    EXPECT_EQ(r.source.dialect, "cuobjdump-sass-of-elf");
    ASSERT_EQ(r.listing.kernels.size(), 1u);
    EXPECT_EQ(r.listing.kernels[0].arch, "sm_90a");
    EXPECT_EQ(signature_count(*find_signature("hgmma"), r.listing.kernels[0]), 1u);
}

TEST_F(FakeTool, AFailingDisassemblerIsAToolError) {
    SassInputOptions options;
    options.cuobjdump = write_tool("echo 'cuobjdump fatal: bad file' >&2; exit 1\n");
    EXPECT_CKO_ERROR((void)load_sass("tests/fixtures/compiler/wgmma.sm_90a.cubin", options),
                     ErrorCode::tool_failed);
}

TEST(SassInput, AMissingDisassemblerGivesTheThreeWaysOut) {
    SassInputOptions options;
    options.cuobjdump = "/nonexistent/cuobjdump";
    EXPECT_CKO_ERROR((void)load_sass("tests/fixtures/compiler/wgmma.sm_90a.cubin", options),
                     ErrorCode::tool_failed, "--cuobjdump PATH",
                     "cuobjdump --dump-sass wgmma.sm_90a.cubin");
}

TEST(SassInput, ATextDumpIsReadAsText) {
    const SassReport r = load_sass("tests/fixtures/compiler/vec.sass", {});
    EXPECT_EQ(r.input_kind, "text");
    EXPECT_EQ(r.source.dialect, "cuobjdump-sass-text");
    EXPECT_EQ(r.source.report_sha256.size(), 64u);
}

}  // namespace
}  // namespace cko::compiler
