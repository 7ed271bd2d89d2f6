// The real torch 2.11 trace is counted exactly; gzip, ranks and broken files behave as documented.
#include "cko/profile/kineto/kineto_trace.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>

namespace cko::profile::kineto {
namespace {
namespace fs = std::filesystem;

const fs::path kFixture = "tests/fixtures/torch/torch_trace.json";

using test::read_file;
using test::TempDir;
using test::write_file;

ErrorCode import_error(const fs::path& path) {
    SCOPED_TRACE(path.string());
    return EXPECT_ANY_CKO_ERROR((void)import_kineto_trace(path))->code();
}

// Expected numbers were obtained once with an independent python3 script over the fixture:
// json.load(..., parse_float=Decimal), ns = int(Decimal(ts) * 1000), counting events by ph/cat,
// summing kernel durations by name, pairing ac2g "s"/"f" events by id (f.ts - s.ts, sorted,
// nearest-rank percentiles), and summing args.bytes of gpu_memcpy/gpu_memset.
TEST(KinetoTrace, CountsTheRealTorchTraceExactly) {
    const KinetoTrace t = import_kineto_trace(kFixture, "2.11");
    const TraceSummary& s = t.summary;
    EXPECT_EQ(s.events, 314);
    EXPECT_EQ(s.complete_events, 168);
    EXPECT_EQ(s.categories.at("kernel").count, 25);
    EXPECT_EQ(s.kernel_time_ns, 1840249);
    EXPECT_EQ(s.kernels.size(), 5u);
    const DurationStats& gemm = s.kernels.at("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
    EXPECT_EQ(gemm.count, 5);
    EXPECT_EQ(gemm.total_ns, 875164);
    EXPECT_EQ(gemm.min_ns, 174559);
    EXPECT_EQ(gemm.max_ns, 175711);
    EXPECT_EQ(s.categories.at("cuda_runtime").count, 41);
    EXPECT_EQ(s.categories.at("cuda_runtime").total_ns, 1196658);
    EXPECT_EQ(s.runtime_calls.at("cudaLaunchKernel").count, 20);
    EXPECT_EQ(s.runtime_calls.at("cudaMemsetAsync").count, 10);
    EXPECT_EQ(s.categories.at("cuda_driver").count, 5);
    EXPECT_EQ(s.flows.starts, 46);
    EXPECT_EQ(s.flows.finishes, 40);
    EXPECT_EQ(s.flows.linked, 40);
    EXPECT_EQ(s.flows.unmatched_starts, 6);
    EXPECT_EQ(s.flows.unmatched_finishes, 0);
    EXPECT_EQ(s.flows.launch_to_gpu.min_ns, 9302);
    EXPECT_EQ(s.flows.launch_to_gpu.p50_ns, 129575);
    EXPECT_EQ(s.flows.launch_to_gpu.p90_ns, 198658);
    EXPECT_EQ(s.flows.launch_to_gpu.max_ns, 242508);
    // Nearest rank of 40 latencies: p99 is rank ceil(0.99 * 40) = 40, the maximum.
    EXPECT_EQ(s.flows.launch_to_gpu.p99_ns, 242508);
    EXPECT_EQ(s.memcpy.at("Memcpy DtoH (Device -> Pinned)").time.count, 5);
    EXPECT_EQ(s.memcpy.at("Memcpy DtoH (Device -> Pinned)").time.total_ns, 8095);
    EXPECT_EQ(s.memcpy.at("Memcpy DtoH (Device -> Pinned)").bytes, 20);
    EXPECT_EQ(s.memset.at("Memset (Device)").time.count, 10);
    EXPECT_EQ(s.memset.at("Memset (Device)").bytes, 40);
    const StreamStats& stream = s.streams.at({0, 7});
    EXPECT_EQ(stream.kernels.count + stream.memcpy.count + stream.memset.count, 40);
    EXPECT_EQ(stream.kernels.total_ns + stream.memcpy.total_ns + stream.memset.total_ns, 1855739);
    // The document's busy_ns is the stream's kernels, copies and memsets (10 memsets of 1 ns or
    // more on it): the same 1855739, not the kernels and copies alone.
    ASSERT_GT(stream.memset.total_ns, 0);
    bool seen = false;
    const Json document = s.to_json();
    for (const Json& row : document.at("streams")) {
        if (row.at("device") == 0 && row.at("stream") == 7) {
            EXPECT_EQ(row.at("busy_ns"), 1855739);
            EXPECT_EQ(row.at("memset").at("count"), stream.memset.count);
            seen = true;
        }
    }
    EXPECT_TRUE(seen);
    EXPECT_EQ(s.annotations.at({"user_annotation", "layer"}).time.total_ns, 5854200);
    EXPECT_EQ(s.annotations.at({"gpu_user_annotation", "layer"}).time.total_ns, 2178080);
    EXPECT_EQ(s.unmodeled_phases.at("M"), 58);
    EXPECT_EQ(s.unmodeled_phases.at("i"), 2);
    EXPECT_EQ(s.non_integer_scope_events, 1);
    EXPECT_EQ(s.first_ts_ns, 5122375886701475);
    EXPECT_EQ(s.last_end_ns, 5122375893209556);
}

// A second real trace, gzip-compressed: torch 2.11 on an H200 (tests/device/torch_trace.py), where
// the profiler dropped some flow ends and starts across its cycles. Numbers from the same kind of
// independent python3 script (gzip + json, Decimal timestamps, ac2g pairs keyed by (cat, id)):
// 283 events, 146 complete, 20 kernels for 1983104 ns, 37 "s" and 40 "f" of which 30 pair up.
TEST(KinetoTrace, CountsAGzippedH200TraceWithBrokenFlowsExactly) {
    const KinetoTrace t =
        import_kineto_trace("tests/fixtures/torch/h200_matmul_trace.json.gz", "2.11");
    const TraceSummary& s = t.summary;
    EXPECT_EQ(s.events, 283);
    EXPECT_EQ(s.complete_events, 146);
    EXPECT_EQ(s.categories.at("kernel").count, 20);
    EXPECT_EQ(s.kernel_time_ns, 1983104);
    EXPECT_EQ(s.kernels.size(), 4u);
    EXPECT_EQ(s.categories.at("cuda_runtime").count, 42);
    EXPECT_EQ(s.categories.at("cpu_op").count, 55);
    EXPECT_EQ(s.flows.starts, 37);
    EXPECT_EQ(s.flows.finishes, 40);
    EXPECT_EQ(s.flows.linked, 30);
    EXPECT_EQ(s.flows.unmatched_starts, 7);
    EXPECT_EQ(s.flows.unmatched_finishes, 10);
    EXPECT_EQ(s.unmodeled_phases.at("M"), 58);
}

TEST(KinetoTrace, BindsIdentityAndSource) {
    const KinetoTrace t = import_kineto_trace(kFixture, "2.11");
    EXPECT_EQ(t.identity.schema_version, 1);
    EXPECT_EQ(t.identity.device_properties[0]["name"], "NVIDIA H200");
    EXPECT_EQ(t.identity.cuda_runtime_version, 13000);
    EXPECT_EQ(t.identity.cupti_version, 130001);
    EXPECT_FALSE(t.identity.rank.has_value());
    EXPECT_EQ(t.identity.base_time_ns, 1790857026000000000);
    EXPECT_EQ(t.source.tool, "kineto");
    EXPECT_EQ(t.source.tool_version, "2.11");
    EXPECT_EQ(t.source.dialect, kDialect);
    EXPECT_EQ(t.source.report_sha256, sha256_file_hex(kFixture));
    EXPECT_EQ(t.kernel_facts().size(), 15u);  // 5 kernels x (instances, total, mean)
}

// A trace of several 4 MiB chunks: each chunk is hashed on a second thread while the tokenizer
// parses it, and the next read waits for that hash (trace_reader.cpp, ChunkHasher). The digest is
// the whole file's and every event is counted, plain and gzip (whose compressed chunks are hashed
// the same way).
TEST(KinetoTrace, ATraceOfManyChunksIsHashedWholeAndCountedWhole) {
    TempDir dir;
    std::string text = R"({"schemaVersion": 1, "traceEvents": [)";
    constexpr int kEvents = 60000;  // about 11 MB: three chunks and a tail
    for (int i = 0; i < kEvents; ++i) {
        text += (i == 0 ? "" : ",\n");
        text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 7) +
                R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(1000 + i * 10) +
                R"(.125, "dur": 4.5, "args": {"device": 0, "stream": 7, "correlation": )" +
                std::to_string(i) + R"(, "grid": [1, 1, 1], "note": "padding padding padding"}})";
    }
    text += "]}";
    ASSERT_GT(text.size(), std::size_t{10} << 20);
    const fs::path plain = write_file(dir / "many.json", text);
    const KinetoTrace t = import_kineto_trace(plain);
    EXPECT_EQ(t.source.report_sha256, sha256_hex(text));
    EXPECT_EQ(t.summary.events, kEvents);
    EXPECT_EQ(t.summary.categories.at("kernel").count, kEvents);
    EXPECT_EQ(t.summary.kernel_time_ns, std::int64_t{kEvents} * 4500);

    const fs::path gz = dir / "many.json.gz";
    gzFile out = gzopen(gz.c_str(), "wb1");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    gzclose(out);
    const KinetoTrace packed = import_kineto_trace(gz);
    EXPECT_EQ(packed.source.report_sha256, sha256_file_hex(gz));
    EXPECT_EQ(packed.summary.to_json(), t.summary.to_json());

    // Refused while the chunk is still being hashed: the error waits for the hash before the
    // chunk's memory goes (a binary file of 1 MiB crashed the verb so).
    EXPECT_EQ(import_error(write_file(dir / "zeros.bin", std::string(std::size_t{1} << 20, '\0'))),
              ErrorCode::binary_input);
    std::string late = text;
    late[(std::size_t{9} << 20) + 5] = '\0';  // in the third chunk
    EXPECT_EQ(import_error(write_file(dir / "late.json", late)), ErrorCode::binary_input);
}

TEST(KinetoTrace, GzipGivesTheSameSummary) {
    TempDir dir;
    const fs::path gz = dir / "trace.json.gz";
    const std::string text = read_file(kFixture);
    gzFile out = gzopen(gz.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    gzclose(out);
    const KinetoTrace plain = import_kineto_trace(kFixture);
    const KinetoTrace packed = import_kineto_trace(gz);
    EXPECT_TRUE(packed.gzip);
    // The same figures as the plain file, checked against the known counts (not only each other).
    EXPECT_EQ(packed.summary.to_json(), plain.summary.to_json());
    EXPECT_EQ(packed.summary.events, 314);
    EXPECT_EQ(packed.summary.kernel_time_ns, 1840249);
    EXPECT_EQ(packed.summary.flows.linked, 40);
    EXPECT_NE(packed.source.report_sha256, plain.source.report_sha256);

    const std::string bytes = read_file(gz);
    const fs::path cut = write_file(dir / "cut.json.gz", bytes.substr(0, bytes.size() / 2));
    EXPECT_EQ(import_error(cut), ErrorCode::truncated_input);
}

TEST(KinetoTrace, BrokenFilesFailClosedWithTheirCode) {
    TempDir dir;
    EXPECT_EQ(import_error(write_file(dir / "empty.json", "")), ErrorCode::empty_input);
    EXPECT_EQ(import_error(write_file(dir / "bin.json", std::string("{\0\1", 3))),
              ErrorCode::binary_input);
    const std::string text = read_file(kFixture);
    EXPECT_EQ(import_error(write_file(dir / "cut.json", text.substr(0, text.size() - 200))),
              ErrorCode::truncated_input);
    EXPECT_EQ(
        import_error(write_file(dir / "v2.json", R"({"schemaVersion": 2, "traceEvents": []})")),
        ErrorCode::unsupported_format);
    EXPECT_EQ(import_error(write_file(dir / "nov.json", R"({"traceEvents": []})")),
              ErrorCode::missing_field);
    EXPECT_EQ(import_error(write_file(dir / "noev.json", R"({"schemaVersion": 1})")),
              ErrorCode::missing_field);
    EXPECT_EQ(import_error(write_file(dir / "ts.json", R"({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e3, "dur": 1}]})")),
              ErrorCode::malformed_input);
    EXPECT_EQ(import_error(write_file(dir / "nodur.json", R"({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1}]})")),
              ErrorCode::missing_field);
    EXPECT_EQ(import_error(dir / "missing.json"), ErrorCode::io_error);
}

// docs/profile-traces.md: only a negative dur is left out; a zero-length event is an event like any
// other (counted, timed at 0, its instant bounds the span), and a launch flow whose start and
// finish share a timestamp links with latency 0.
TEST(KinetoTrace, ZeroDurationEventsCountEverywhereOnlyNegativeOnesAreLeftOut) {
    TempDir dir;
    const fs::path p = write_file(dir / "zero.json", R"json({"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 0,
         "args": {"device": 0, "stream": 7, "correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12, "dur": 3,
         "args": {"device": 0, "stream": 7, "correlation": 2}},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 20,
         "dur": 0, "args": {"device": 0, "stream": 7, "bytes": 4}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 9, "dur": 0},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": -1},
        {"ph": "s", "cat": "ac2g", "name": "launch", "id": 1, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "f", "cat": "ac2g", "name": "launch", "id": 1, "pid": 0, "tid": 7, "ts": 10,
         "bp": "e"}]})json");
    const TraceSummary s = import_kineto_trace(p, "2.11").summary;
    EXPECT_EQ(s.complete_events, 5);
    EXPECT_EQ(s.negative_durations, 1);
    const DurationStats& k = s.kernels.at("k");
    EXPECT_EQ(k.count, 2);
    EXPECT_EQ(k.total_ns, 3000);
    EXPECT_EQ(k.min_ns, 0);
    EXPECT_EQ(k.max_ns, 3000);
    EXPECT_EQ(s.kernel_time_ns, 3000);
    EXPECT_EQ(s.memset.at("Memset (Device)").time.count, 1);
    EXPECT_EQ(s.memset.at("Memset (Device)").bytes, 4);
    EXPECT_EQ(s.runtime_calls.at("cudaLaunchKernel").count, 1);
    const StreamStats& stream = s.streams.at({0, 7});
    EXPECT_EQ(stream.kernels.count, 2);
    EXPECT_EQ(stream.memset.count, 1);
    // Span: the first start (9 us, the zero-length launch) to the last end (20 us, the zero-length
    // memset); the negative event at 30 does not extend it.
    EXPECT_EQ(s.to_json().at("span_ns"), 11000);
    EXPECT_EQ(s.flows.linked, 1);
    EXPECT_EQ(s.flows.launch_to_gpu.min_ns, 0);
    EXPECT_EQ(s.flows.launch_to_gpu.max_ns, 0);
}

std::string rank_trace(int rank, int kernels) {
    std::string events;
    for (int i = 0; i < kernels; ++i) {
        events += std::string(i ? "," : "") +
                  R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
                  std::to_string(10 * i) + R"(.5, "dur": 2.25, "args": {"stream": 7}})";
    }
    return R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )" +
           std::to_string(rank) + R"(, "world_size": 2}, "traceEvents": [)" + events + "]}";
}

TEST(KinetoTrace, SeveralRanksAreOrderedAndMustBeNamed) {
    TempDir dir;
    const fs::path r1 = write_file(dir / "r1.json", rank_trace(1, 3));
    const fs::path r0 = write_file(dir / "r0.json", rank_trace(0, 2));
    const auto traces = import_kineto_traces({r1, r0});
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_EQ(traces[0].identity.rank, 0);
    EXPECT_EQ(traces[1].identity.rank, 1);
    EXPECT_EQ(traces[1].identity.world_size, 2);
    EXPECT_EQ(traces[1].summary.kernels.at("k").total_ns, 6750);
    EXPECT_CKO_ERROR((void)import_kineto_traces({r1, r1}), ErrorCode::invalid_argument);
    EXPECT_CKO_ERROR((void)import_kineto_traces({r0, kFixture}), ErrorCode::missing_field);
}

}  // namespace
}  // namespace cko::profile::kineto
