// Binary inputs: magic sniffing, cuobjdump run on a cubin (a stand-in script here), missing tool.
#include "cko/compiler/sass_input.hpp"

#include "cko/compiler/sass_signatures.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
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

class FakeTool : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("cko-fake-cuobjdump-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write_tool(const std::string& body) {
        const fs::path tool = dir_ / "cuobjdump";
        std::ofstream(tool) << "#!/bin/sh\n" << body;
        ::chmod(tool.c_str(), 0755);
        return tool.string();
    }
    fs::path dir_;
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
    try {
        (void)load_sass("tests/fixtures/compiler/wgmma.sm_90a.cubin", options);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::tool_failed);
    }
}

TEST(SassInput, AMissingDisassemblerGivesTheThreeWaysOut) {
    SassInputOptions options;
    options.cuobjdump = "/nonexistent/cuobjdump";
    try {
        (void)load_sass("tests/fixtures/compiler/wgmma.sm_90a.cubin", options);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::tool_failed);
        const std::string m = e.what();
        EXPECT_NE(m.find("--cuobjdump PATH"), std::string::npos) << m;
        EXPECT_NE(m.find("cuobjdump --dump-sass wgmma.sm_90a.cubin"), std::string::npos) << m;
    }
}

TEST(SassInput, ATextDumpIsReadAsText) {
    const SassReport r = load_sass("tests/fixtures/compiler/vec.sass", {});
    EXPECT_EQ(r.input_kind, "text");
    EXPECT_EQ(r.source.dialect, "cuobjdump-sass-text");
    EXPECT_EQ(r.source.report_sha256.size(), 64u);
}

}  // namespace
}  // namespace cko::compiler
