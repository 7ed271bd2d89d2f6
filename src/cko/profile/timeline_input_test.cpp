// Both importers feed the one timeline: an nsys export built from the 3.24.14 fixture and the
// torch fixtures map with numbers worked out by hand from their rows.
#include "cko/profile/timeline_input.hpp"

#include "cko/profile/nsys/testing/sql_export.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace cko::profile {
namespace {
namespace fs = std::filesystem;
namespace tl = timeline;

using nsys::testing::SqlExport;

const tl::ItemTime& item(const tl::WindowMap& w, const std::string& name) {
    const auto it = std::find_if(w.items.begin(), w.items.end(),
                                 [&](const tl::ItemTime& i) { return i.name == name; });
    if (it == w.items.end()) {
        throw std::runtime_error("no item " + name);
    }
    return *it;
}

TEST(TimelineInput, NsysExportMapsWithTheFixturesHandCountedNumbers) {
    const SqlExport e("tests/fixtures/nsys/schema_3_24_14.sql");
    const LoadedTimeline loaded = load_timeline({e.path()});
    ASSERT_EQ(loaded.inputs.size(), 1u);
    EXPECT_EQ(loaded.inputs[0].format, "nsys");
    EXPECT_EQ(loaded.inputs[0].source.dialect, "nsys-sqlite-3.24.14");
    // 4 kernels + 1 copy + 6 runtime calls.
    EXPECT_EQ(loaded.inputs[0].intervals, 11);
    const tl::ExecutionMap map = tl::compute_execution_map(loaded.timeline, {});
    ASSERT_EQ(map.parts.size(), 1u);
    const tl::WindowMap& w = map.parts[0].windows[0];
    // Window: cudaMalloc starts at 100, cudaMemcpy ends at 19800.
    EXPECT_EQ(w.duration_ns(), 19700);
    // Busy: scale 1000 + 1200 + 1400, vec_add 2000, the copy 640; nothing overlaps.
    EXPECT_EQ(w.gpu_busy_ns, 6240);
    EXPECT_EQ(item(w, "scale(float*, float, int)").exposed_ns, 3600);
    EXPECT_EQ(item(w, "vec_add(const float*, const float*, float*, int)").exposed_ns, 2000);
    EXPECT_EQ(item(w, "memcpy_h2d").exposed_ns, 640);
    // Idle 13460: in API calls 5+6+7+8 (launches) + 300 (cudaMalloc) + 100 + 60 (cudaMemcpy
    // around its copy) = 486; the rest, 12974, has nothing recorded.
    EXPECT_EQ(w.idle.cpu_launch_ns, 486);
    EXPECT_EQ(w.idle.unrecorded_ns, 12974);
    EXPECT_EQ(w.idle.cpu_sync_ns, 0);
    // Correlation ids 1-4 (kernels) and 6 (the copy) name runtime calls.
    EXPECT_EQ(map.parts[0].linked_launches, 5);
}

TEST(TimelineInput, NvtxRangesAreWindowsAndOpenRangesAreNoted) {
    const SqlExport e("tests/fixtures/nsys/schema_3_24_14.sql",
                      "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
                      "INTEGER NOT NULL, text TEXT, textId INTEGER, domainId INTEGER, globalTid "
                      "INTEGER);"
                      "INSERT INTO NVTX_EVENTS VALUES (9000, 13500, 59, 'step', NULL, 0, 0),"
                      "(13500, 18500, 59, 'step', NULL, 0, 0), (19000, NULL, 59, 'open', NULL, "
                      "0, 0);");
    const LoadedTimeline loaded = load_timeline({e.path()});
    ASSERT_EQ(loaded.notes.size(), 1u);
    EXPECT_NE(loaded.notes[0].find("1 NVTX ranges without an end"), std::string::npos);
    tl::MapOptions o;
    o.window = "step";
    const tl::ExecutionMap map = tl::compute_execution_map(loaded.timeline, o);
    ASSERT_EQ(map.parts[0].windows.size(), 2u);
    // [9000,13500): scale [10000,11000) + [12000,13200) = 2200.
    EXPECT_EQ(map.parts[0].windows[0].gpu_busy_ns, 2200);
    // [13500,18500): scale [14000,15400) + vec_add [16000,18000) = 3400.
    EXPECT_EQ(map.parts[0].windows[1].gpu_busy_ns, 3400);
}

TEST(TimelineInput, TorchFixtureFeedsGpuAndCpuLanesAndNotesWhatItLeftOut) {
    const LoadedTimeline loaded = load_timeline({"tests/fixtures/torch/torch_trace.json"});
    ASSERT_EQ(loaded.inputs.size(), 1u);
    EXPECT_EQ(loaded.inputs[0].format, "torch");
    // 25 kernels + 5 memcpy + 10 memset + 41 runtime + 5 driver + 70 cpu_op + 5 annotations.
    EXPECT_EQ(loaded.inputs[0].intervals, 161);
    bool noted = false;
    for (const auto& n : loaded.notes) {
        noted = noted || n.find("5 gpu_user_annotation rows") != std::string::npos;
    }
    EXPECT_TRUE(noted);
    tl::MapOptions o;
    o.window = "layer";
    const tl::ExecutionMap map = tl::compute_execution_map(loaded.timeline, o);
    ASSERT_EQ(map.parts.size(), 1u);
    EXPECT_EQ(map.parts[0].windows.size(), 5u);
}

TEST(TimelineInput, AnEmptyGpuSideBesideGpuLikeRowsIsSaidNotBlamedOnTheCpu) {
    // CUPTI range-profiler rows only: no kernel, memcpy or memset interval, so the map's GPU is
    // idle throughout. The map must say why instead of attributing that idle time silently.
    const LoadedTimeline loaded =
        load_timeline({"tests/fixtures/torch/cupti_range_profiler_trace.json"});
    tl::MapOptions o;
    const tl::ExecutionMap map = tl::compute_execution_map(loaded.timeline, o);
    const Json doc = map_document(loaded, map);
    bool noted = false;
    for (const auto& n : doc["notes"]) {
        noted = noted || n.get<std::string>().find("no GPU interval") != std::string::npos;
    }
    EXPECT_TRUE(noted) << doc["notes"].dump();
    bool counted = false;
    for (const auto& n : loaded.notes) {
        counted = counted || n.find("3 cuda_profiler_range rows") != std::string::npos;
    }
    EXPECT_TRUE(counted) << testing::PrintToString(loaded.notes);
}

// [18] The same for nsys: an export whose GPU work is only graph-level rows
// (--cuda-graph-trace=graph) has no kernel, memcpy or memset interval. Before, the map showed an
// idle GPU and blamed the CPU, with no note.
TEST(TimelineInput, AnNsysExportWithOnlyGraphTraceRowsSaysItsGpuSideIsEmpty) {
    const SqlExport e("tests/fixtures/nsys/graph_trace_only.sql");
    const LoadedTimeline loaded = load_timeline({e.path()});
    const tl::ExecutionMap map = tl::compute_execution_map(loaded.timeline, {});
    const Json doc = map_document(loaded, map);
    bool noted = false;
    for (const auto& n : doc["notes"]) {
        noted =
            noted || n.get<std::string>().find(
                         "3 GPU-like rows were left out (CUPTI_ACTIVITY_KIND_GRAPH_TRACE: 3)") !=
                         std::string::npos;
    }
    EXPECT_TRUE(noted) << doc["notes"].dump();
    // An export with kernel rows gets no such note.
    const SqlExport full("tests/fixtures/nsys/schema_3_24_14.sql");
    const LoadedTimeline with_kernels = load_timeline({full.path()});
    for (const auto& n : with_kernels.notes) {
        EXPECT_EQ(n.find("GPU-like"), std::string::npos) << n;
    }
}

TEST(TimelineInput, SeveralTorchTracesMustNameDistinctRanks) {
    const fs::path t = "tests/fixtures/torch/torch_trace.json";
    EXPECT_CKO_ERROR((void)load_timeline({t, t}), ErrorCode::missing_field);
    EXPECT_THROW((void)load_timeline({"tests/fixtures/torch/none.json"}), Error);
}

}  // namespace
}  // namespace cko::profile
