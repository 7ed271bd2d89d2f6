// The timeline store: lanes and names are interned once, a reversed interval is refused.
#include "cko/timeline/timeline.hpp"

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

namespace cko::timeline {
namespace {

TEST(Timeline, InternsLanesAndNamesOncePerSource) {
    Timeline t;
    const SourceId a = t.begin_source("a.json");
    const SourceId b = t.begin_source("b.json");
    const LaneKey stream{LaneKind::gpu_stream, 0, 7};
    EXPECT_EQ(t.lane(a, stream), t.lane(a, stream));
    EXPECT_NE(t.lane(a, stream), t.lane(b, stream));  // same stream number, another rank
    EXPECT_EQ(t.name("k"), t.name("k"));
    EXPECT_NE(t.name("k"), t.name("K"));
    t.end_source(b, 3);
    EXPECT_EQ(t.sources()[b].rank, 3);
    EXPECT_FALSE(t.sources()[a].rank.has_value());
}

TEST(Timeline, RefusesAnIntervalThatEndsBeforeItStarts) {
    Timeline t;
    const SourceId s = t.begin_source("x");
    EXPECT_THROW(t.add(s, {LaneKind::gpu_stream, 0, 1}, Category::compute_kernel, "k", 10, 9),
                 Error);
    t.add(s, {LaneKind::gpu_stream, 0, 1}, Category::compute_kernel, "k", 10, 10);  // zero length
    EXPECT_EQ(t.intervals().size(), 1u);
}

TEST(Timeline, ClassifiesCommunicationKernelsAndSyncCalls) {
    EXPECT_EQ(kernel_category("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)"),
              Category::communication_kernel);
    EXPECT_EQ(kernel_category("NCCL_kernel"), Category::communication_kernel);
    EXPECT_EQ(kernel_category("void gemm<128>()"), Category::compute_kernel);
    EXPECT_EQ(api_call_category("cudaStreamSynchronize", Category::cuda_runtime), Category::sync);
    EXPECT_EQ(api_call_category("cuCtxSynchronize", Category::cuda_driver), Category::sync);
    EXPECT_EQ(api_call_category("cudaLaunchKernel", Category::cuda_runtime),
              Category::cuda_runtime);
    EXPECT_TRUE(is_gpu_work(Category::memset));
    EXPECT_FALSE(is_gpu_work(Category::cuda_runtime));
    EXPECT_TRUE(is_memory_op(Category::memcpy_p2p));
    EXPECT_FALSE(is_memory_op(Category::communication_kernel));
    EXPECT_TRUE(is_cpu_work(Category::sync));
    EXPECT_FALSE(is_cpu_work(Category::annotation));
}

}  // namespace
}  // namespace cko::timeline
