// Dialects and damage the importer must read by meaning: torch 1.8-1.9 CamelCase categories, GPU
// work under unknown categories, Latin-1 bytes, timestamps with sub-nanosecond digits.
#include "cko/profile/kineto/kineto_trace.hpp"

#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace cko::profile::kineto {
namespace {
namespace fs = std::filesystem;

// A trace written in a scratch directory of its own.
class TempFile {
public:
    explicit TempFile(const std::string& text) { test::write_file(path_, text); }
    [[nodiscard]] const fs::path& path() const { return path_; }

private:
    test::TempDir dir_{"cko-kineto-dialect"};
    fs::path path_ = dir_ / "trace.json";
};

bool has_note(const KinetoTrace& t, std::string_view text) {
    for (const auto& n : t.notes) {
        if (n.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// Counted by hand from the fixture (tests/fixtures/torch/torch18_camelcase_trace.json, written in
// the shape torch 1.8-1.9 exported): 24 events, 13 complete; gemm 8+10 us, add 4 us; one HtoD copy
// of 4096 bytes (6 us) and one memset of 1024 bytes (2 us); async/launch flows with latencies
// 15, 15, 7, 5, 4 us.
TEST(KinetoDialect, CamelCaseCategoriesOfTorch18AreCountedExactly) {
    const KinetoTrace t = import_kineto_trace("tests/fixtures/torch/torch18_camelcase_trace.json");
    const TraceSummary& s = t.summary;
    EXPECT_EQ(t.source.dialect, kDialectCamelCase);
    EXPECT_EQ(s.events, 24);
    EXPECT_EQ(s.complete_events, 13);
    EXPECT_EQ(s.camel_case_events, 13);
    ASSERT_EQ(s.kernels.size(), 2u);
    EXPECT_EQ(s.kernels.at("void gemm_kernel<float, 64>(float const*, float const*, float*)").count,
              2);
    EXPECT_EQ(s.kernels.at("void add_kernel(float*, float const*, int)").total_ns, 4000);
    EXPECT_EQ(s.kernel_time_ns, 22000);
    EXPECT_EQ(s.memcpy.at("Memcpy HtoD (Pageable -> Device)").bytes, 4096);
    EXPECT_EQ(s.memcpy.at("Memcpy HtoD (Pageable -> Device)").time.total_ns, 6000);
    EXPECT_EQ(s.memset.at("Memset (Device)").bytes, 1024);
    EXPECT_EQ(s.runtime_calls.at("cudaLaunchKernel").count, 3);
    EXPECT_EQ(s.runtime_calls.at("cudaLaunchKernel").total_ns, 16000);
    ASSERT_EQ(s.streams.size(), 1u);
    const StreamStats& stream = s.streams.at({0, 7});
    EXPECT_EQ(stream.kernels.count, 3);
    EXPECT_EQ(stream.memcpy.count, 1);
    EXPECT_EQ(stream.memset.count, 1);
    EXPECT_EQ(s.flows.starts, 5);
    EXPECT_EQ(s.flows.linked, 5);
    EXPECT_EQ(s.flows.other_flows, 0);
    EXPECT_EQ(s.flows.launch_to_gpu.min_ns, 4000);
    EXPECT_EQ(s.flows.launch_to_gpu.p50_ns, 7000);
    EXPECT_EQ(s.flows.launch_to_gpu.max_ns, 15000);
    EXPECT_TRUE(s.unmodeled_gpu_categories.empty());
    EXPECT_TRUE(has_note(t, "torch 1.8-1.9"));
}

// tests/fixtures/torch/torch19_driver_annotation_trace.json, written in the shape torch 1.9
// exported, covers the spellings the fixture above lacks: a `Driver` call, `User annotation` and
// `GPU user annotation` (with one `user_annotation` of the same name, as a trace mixing both
// generations would have), and async flows of which only those named `launch` are launch flows.
// Counted by hand: 14 events, 8 complete, 7 of them CamelCase; launch latencies 15 and 20 us.
TEST(KinetoDialect, DriverCallsAnnotationsAndAsyncLaunchFlowsOfTorch19) {
    const KinetoTrace t =
        import_kineto_trace("tests/fixtures/torch/torch19_driver_annotation_trace.json");
    const TraceSummary& s = t.summary;
    EXPECT_EQ(t.source.dialect, kDialectCamelCase);
    EXPECT_EQ(s.events, 14);
    EXPECT_EQ(s.complete_events, 8);
    EXPECT_EQ(s.camel_case_events, 7);
    ASSERT_EQ(s.driver_calls.count("cuLaunchKernel"), 1u);
    EXPECT_EQ(s.driver_calls.at("cuLaunchKernel").count, 1);
    EXPECT_EQ(s.driver_calls.at("cuLaunchKernel").total_ns, 4000);
    EXPECT_EQ(s.runtime_calls.at("cudaLaunchKernel").total_ns, 6000);
    // Both spellings of the CPU annotation are one row under the current name.
    ASSERT_EQ(s.annotations.size(), 2u);
    const AnnotationStats& cpu = s.annotations.at({"user_annotation", "forward"});
    EXPECT_EQ(cpu.time.count, 2);
    EXPECT_EQ(cpu.time.total_ns, 130000);
    EXPECT_EQ(cpu.first_start_ns, 1625000001010000);
    EXPECT_EQ(cpu.last_end_ns, 1625000001180000);
    EXPECT_EQ(s.annotations.at({"gpu_user_annotation", "forward"}).time.total_ns, 50000);
    EXPECT_EQ(s.kernels.size(), 2u);
    EXPECT_EQ(s.kernel_time_ns, 18000);
    EXPECT_EQ(s.flows.starts, 2);
    EXPECT_EQ(s.flows.finishes, 2);
    EXPECT_EQ(s.flows.linked, 2);
    EXPECT_EQ(s.flows.other_flows, 1);  // async "fwd_bwd" is not a launch
    EXPECT_EQ(s.flows.launch_to_gpu.min_ns, 15000);
    EXPECT_EQ(s.flows.launch_to_gpu.max_ns, 20000);
    EXPECT_TRUE(s.unmodeled_gpu_categories.empty());
    const Json j = t.to_json()["summary"];
    EXPECT_EQ(j["cuda_driver"][0]["name"], "cuLaunchKernel");
}

std::string one_trace(const std::string& events) {
    return R"({"schemaVersion": 1, "traceEvents": [)" + events + "]}";
}

const std::string kGpuLikeEvent =
    R"({"ph": "X", "cat": "GpuKernelV9", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
        "args": {"device": 0, "stream": 7, "correlation": 3}})";

TEST(KinetoDialect, GpuWorkUnderUnknownCategoriesIsNeverAnIdleGpu) {
    const TempFile only_unknown(one_trace(kGpuLikeEvent + "," + kGpuLikeEvent));
    // A trace whose GPU work cko cannot read is not summarised as an idle GPU.
    EXPECT_CKO_ERROR((void)import_kineto_trace(only_unknown.path()), ErrorCode::unsupported_format,
                     "'GpuKernelV9' (2)");
    // With known GPU work beside it, the unknown rows are named in the notes and counted.
    const TempFile mixed(one_trace(kGpuLikeEvent + R"(,
        {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 20, "dur": 1,
         "args": {"device": 0, "stream": 7, "correlation": 4}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 40}
    )"));
    const KinetoTrace t = import_kineto_trace(mixed.path());
    EXPECT_EQ(t.summary.unmodeled_gpu_categories.at("GpuKernelV9"), 1);
    EXPECT_EQ(t.summary.kernels.size(), 1u);
    EXPECT_TRUE(has_note(t, "GpuKernelV9"));
    EXPECT_EQ(t.to_json()["summary"]["unmodeled"]["gpu_like_categories"]["GpuKernelV9"], 1);
}

TEST(KinetoDialect, CuptiRangeProfilerRowsAreCountedButNeverKernelTime) {
    // Recorded with the CUPTI range profiler (cat "cuda_profiler_range"): one row per kernel
    // launch with its counters in args, and ts/dur that libkineto's CuptiRangeProfiler makes up
    // by splitting the profiling span evenly. 3 rows of 2 kernels, 2 cpu_op rows.
    const KinetoTrace t =
        import_kineto_trace("tests/fixtures/torch/cupti_range_profiler_trace.json");
    const TraceSummary& s = t.summary;
    EXPECT_TRUE(s.kernels.empty());
    EXPECT_EQ(s.kernel_time_ns, 0);
    EXPECT_TRUE(s.streams.empty());
    ASSERT_EQ(s.profiler_ranges.size(), 2u);
    EXPECT_EQ(
        s.profiler_ranges.at("void gemm_kernel<float, 64>(float const*, float const*, float*)"), 2);
    EXPECT_EQ(s.profiler_ranges.at("void relu_kernel(float*, int)"), 1);
    EXPECT_TRUE(has_note(t, "3 CUPTI range-profiler rows")) << testing::PrintToString(t.notes);
    EXPECT_TRUE(has_note(t, "not GPU time")) << testing::PrintToString(t.notes);
    const Json j = t.to_json()["summary"];
    EXPECT_EQ(j["profiler_ranges"].size(), 2u);
    EXPECT_EQ(j["profiler_ranges"][0]["count"], 2);
}

TEST(KinetoDialect, RowsUnderGpuNamedCategoriesAreCountedByCategory) {
    // No correlation id, but a category that names the GPU: not modelled, so counted and noted.
    const TempFile trace(one_trace(R"(
        {"ph": "X", "cat": "gpu_hw_counter", "name": "sm_active", "pid": 0, "tid": 1, "ts": 0,
         "dur": 5},
        {"ph": "X", "cat": "gpu_hw_counter", "name": "sm_active", "pid": 0, "tid": 1, "ts": 5,
         "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 20, "dur": 1,
         "args": {"device": 0, "stream": 7, "correlation": 4}},
        {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 0, "dur": 9}
    )"));
    const KinetoTrace t = import_kineto_trace(trace.path());
    EXPECT_EQ(t.summary.unmodeled_gpu_categories.at("gpu_hw_counter"), 2);
    EXPECT_EQ(t.summary.unmodeled_gpu_categories.count("python_function"), 0u);
    EXPECT_TRUE(has_note(t, "'gpu_hw_counter' (2)")) << testing::PrintToString(t.notes);
}

TEST(KinetoDialect, CpuOnlyTracesStayAccepted) {
    const TempFile cpu(one_trace(
        R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0, "dur": 4})"));
    const KinetoTrace t = import_kineto_trace(cpu.path());
    EXPECT_TRUE(t.summary.kernels.empty());
    EXPECT_TRUE(t.notes.empty());
}

// Latin-1 bytes in a kernel name, an annotation, an arg cko never reads, and a top-level member.
TEST(KinetoDialect, Latin1BytesAreRepairedAndNoted) {
    const KinetoTrace t = import_kineto_trace("tests/fixtures/torch/latin1_trace.json");
    const std::string kernel = "gemm_\xEF\xBF\xBDkernel";
    ASSERT_EQ(t.summary.kernels.count(kernel), 1u);
    EXPECT_EQ(t.summary.kernels.at(kernel).count, 2);
    EXPECT_EQ(t.summary.kernels.at(kernel).total_ns, 6000);
    EXPECT_EQ(t.summary.annotations.count({"user_annotation", "r\xEF\xBF\xBDsum\xEF\xBF\xBD step"}),
              1u);
    EXPECT_TRUE(has_note(t, "5 string(s) held invalid UTF-8"));
    EXPECT_TRUE(has_note(t, "6 byte(s) replaced"));
    std::string text;
    ASSERT_NO_THROW(text = t.to_json().dump());
    EXPECT_TRUE(is_valid_utf8(text));
}

TEST(KinetoDialect, SubNanosecondDigitsAreRoundedAndNoted) {
    const TempFile rounded(one_trace(
        R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100.0004, "dur": 2.0005},
           {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 110.25, "dur": 1.999999999})"));
    const KinetoTrace t = import_kineto_trace(rounded.path());
    EXPECT_EQ(t.summary.kernels.at("k").total_ns, 2001 + 2000);
    EXPECT_EQ(t.summary.first_ts_ns, 100000);
    EXPECT_EQ(t.summary.rounded_timestamps, 3);
    EXPECT_TRUE(has_note(t, "3 ts/dur values"));
}

}  // namespace
}  // namespace cko::profile::kineto
