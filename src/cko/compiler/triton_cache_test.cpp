// Triton caches: a real Triton 3.6 entry, a 2.x-shaped one, the cubin through the SASS path.
#include "cko/compiler/triton_cache.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace cko::compiler {
namespace {

namespace fs = std::filesystem;
const fs::path kCache = "tests/fixtures/compiler/triton-cache";

TritonOptions no_sass() {
    TritonOptions o;
    o.disassemble = false;
    return o;
}

TEST(TritonCache, KernelsWithLaunchParametersTargetAndArtifacts) {
    const TritonCache c = read_triton_cache(kCache, no_sass());
    ASSERT_EQ(c.kernels.size(), 2u);
    EXPECT_EQ(c.other_json_files, 1u);  // the __grp__ file
    const TritonKernel& add = c.kernels[0];
    EXPECT_EQ(add.name, "add_kernel");
    EXPECT_EQ(add.num_warps, 4);
    EXPECT_EQ(add.num_stages, 2);
    EXPECT_EQ(add.num_ctas, 1);
    EXPECT_EQ(add.shared_bytes, 0);
    EXPECT_EQ(add.backend, "cuda");
    EXPECT_EQ(add.arch, "sm_90");
    EXPECT_EQ(add.warp_size, 32);
    EXPECT_EQ(add.triton_version, "3.6.0");
    EXPECT_EQ(add.ptx_target, "sm_90a");  // Triton asks ptxas for the arch-specific target
    EXPECT_EQ(add.ptx_version, "8.7");
    std::vector<std::string> stages;
    for (const TritonArtifact& a : add.artifacts) {
        stages.push_back(a.stage);
    }
    EXPECT_EQ(stages, (std::vector<std::string>{"ttgir", "llir", "ptx", "cubin"}));
    EXPECT_EQ(add.sass_note, "cubin not disassembled (--no-sass)");
    const TritonKernel& mm = c.kernels[1];
    EXPECT_EQ(mm.name, "matmul_kernel");
    EXPECT_EQ(mm.backend, "cuda");
    EXPECT_EQ(mm.arch, "sm_80");
    EXPECT_EQ(mm.num_stages, 4);
    EXPECT_EQ(mm.shared_bytes, 65536);
    EXPECT_FALSE(mm.num_ctas.has_value());
    EXPECT_EQ(mm.sass_note, "no cubin in the cache entry");
    ASSERT_EQ(mm.facts.size(), 3u);
    EXPECT_EQ(mm.facts[0].id, "triton.num_warps");
}

TEST(TritonCache, TheCubinGoesThroughTheSassPathWhenTheToolExists) {
    const test::TempDir dir("cko-triton-tool");
    const std::string dump =
        fs::absolute("tests/fixtures/compiler/wgmma.sm_90a.cuobjdump.sass").string();
    TritonOptions o;
    o.sass.cuobjdump =
        test::write_executable(dir / "cuobjdump",
                               "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\ncat '" + dump + "'\n")
            .string();
    const TritonCache c = read_triton_cache(kCache, o);
    ASSERT_TRUE(c.kernels[0].sass.has_value());
    EXPECT_EQ(c.kernels[0].sass->input_kind, "binary");
    EXPECT_TRUE(c.kernels[0].sass_note.empty());
}

TEST(TritonCache, ADirectoryWithoutMetadataSaysWhereTritonWritesIt) {
    EXPECT_CKO_ERROR((void)read_triton_cache("tests/fixtures/ncu", no_sass()),
                     ErrorCode::missing_field, "TRITON_CACHE_DIR");
}

TEST(TritonCache, ANonIntegerNumWarpsNamesTheFileAndField) {
    const test::TempDir dir("cko-triton-bad");
    test::write_file(dir / "K" / "k.json", R"({"name": "k", "num_warps": "4"})");
    EXPECT_CKO_ERROR((void)read_triton_cache(dir.path(), no_sass()), ErrorCode::malformed_input,
                     "K/k.json: \"num_warps\"");
}

}  // namespace
}  // namespace cko::compiler
