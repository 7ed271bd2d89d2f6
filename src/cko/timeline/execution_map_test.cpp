// The execution map on hand-built timelines; every expected number is worked out in the comments.
#include "cko/timeline/execution_map.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace cko::timeline {
namespace {

constexpr LaneKey gpu(std::int64_t device, std::int64_t stream) {
    return {LaneKind::gpu_stream, device, stream};
}
constexpr LaneKey cpu(std::int64_t tid) {
    return {LaneKind::cpu_thread, 100, tid};
}

const ItemTime& item(const WindowMap& w, ItemKind kind, const std::string& name) {
    const auto it = std::find_if(w.items.begin(), w.items.end(), [&](const ItemTime& i) {
        return i.kind == kind && i.name == name;
    });
    if (it == w.items.end()) {
        throw std::runtime_error("no item " + name);
    }
    return *it;
}

// GPU stream 1: A [0,10) and B [10,20) touching; stream 2: C [5,15) over both, D [30,30) of zero
// length. CPU thread: cpu_op [20,35) around a launch [22,28), a sync [40,50).
Timeline single_device() {
    Timeline t;
    const SourceId s = t.begin_source("hand");
    t.add(s, gpu(0, 1), Category::compute_kernel, "A", 0, 10);
    t.add(s, gpu(0, 1), Category::compute_kernel, "B", 10, 20);
    t.add(s, gpu(0, 2), Category::compute_kernel, "C", 5, 15);
    t.add(s, gpu(0, 2), Category::compute_kernel, "D", 30, 30);
    t.add(s, cpu(1), Category::cpu_op, "aten::mm", 20, 35);
    t.add(s, cpu(1), Category::cuda_runtime, "cudaLaunchKernel", 22, 28);
    t.add(s, cpu(1), Category::sync, "cudaStreamSynchronize", 40, 50);
    t.end_source(s, std::nullopt);
    return t;
}

TEST(ExecutionMap, OverlappingTouchingAndZeroLengthIntervalsOnOneDevice) {
    const ExecutionMap map = compute_execution_map(single_device(), MapOptions{});
    ASSERT_EQ(map.parts.size(), 1u);
    ASSERT_EQ(map.parts[0].windows.size(), 1u);
    const WindowMap& w = map.parts[0].windows[0];
    // Whole trace: first start 0, last end 50.
    EXPECT_EQ(w.start_ns, 0);
    EXPECT_EQ(w.end_ns, 50);
    // Union of A, B, C = [0,20) (A and B touch at 10, C lies inside): 20; D adds nothing.
    EXPECT_EQ(w.gpu_busy_ns, 20);
    EXPECT_EQ(w.gpu_idle_ns, 30);
    // One idle stretch [20,50): the zero-length D at 30 does not split it.
    EXPECT_EQ(w.idle_gaps, 1);
    ASSERT_EQ(w.longest_gaps.size(), 1u);
    EXPECT_EQ(w.longest_gaps[0].start_ns, 20);
    EXPECT_EQ(w.longest_gaps[0].end_ns, 50);
    // Idle [20,50): [20,22) op 2, [22,28) launch 6, [28,35) op 7, [35,40) nothing 5, [40,50)
    // sync 10.
    EXPECT_EQ(w.idle.cpu_other_ns, 9);
    EXPECT_EQ(w.idle.cpu_launch_ns, 6);
    EXPECT_EQ(w.idle.unrecorded_ns, 5);
    EXPECT_EQ(w.idle.cpu_sync_ns, 10);
    // Running at once: [0,5) 1, [5,15) 2, [15,20) 1, the rest 0.
    ASSERT_EQ(w.concurrency_ns.size(), 3u);
    EXPECT_EQ(w.concurrency_ns[0], 30);
    EXPECT_EQ(w.concurrency_ns[1], 10);
    EXPECT_EQ(w.concurrency_ns[2], 10);
    // Recorded: GPU [0,20) + CPU [20,35) + [40,50) = 45 of 50; [35,40) is unobserved.
    EXPECT_EQ(w.recorded_ns, 45);
    // Exposed: A alone on [0,5), B alone on [15,20); C always shares; D has no length.
    EXPECT_EQ(item(w, ItemKind::kernel, "A").exposed_ns, 5);
    EXPECT_EQ(item(w, ItemKind::kernel, "B").exposed_ns, 5);
    EXPECT_EQ(item(w, ItemKind::kernel, "C").exposed_ns, 0);
    EXPECT_EQ(item(w, ItemKind::kernel, "C").total_ns, 10);
    EXPECT_EQ(item(w, ItemKind::kernel, "D").count, 1);
    EXPECT_EQ(item(w, ItemKind::kernel, "D").total_ns, 0);
    // The one GPU category is exposed wherever the GPU is busy; total is the sum 10+10+10+0.
    const ItemTime& compute = item(w, ItemKind::category, "compute_kernel");
    EXPECT_EQ(compute.exposed_ns, 20);
    EXPECT_EQ(compute.union_ns, 20);
    EXPECT_EQ(compute.total_ns, 30);
    // CPU categories, exposed while the GPU idles and only they run: cpu_op [20,22)+[28,35) = 9
    // (inside the launch both run: nobody's), sync [40,50) = 10, the launch 0.
    EXPECT_EQ(item(w, ItemKind::category, "cpu_op").exposed_ns, 9);
    EXPECT_EQ(item(w, ItemKind::category, "sync").exposed_ns, 10);
    EXPECT_EQ(item(w, ItemKind::category, "cuda_runtime").exposed_ns, 0);
    EXPECT_EQ(item(w, ItemKind::category, "cuda_runtime").total_ns, 6);
}

// docs/map.md: an idle instant goes to `cpu_sync` when a CPU thread is in a sync call, before
// `cpu_launch`, even when the sync runs inside a runtime call (a blocking cudaMemcpy that waits in
// cudaStreamSynchronize) or on another thread of the source during a launch.
TEST(ExecutionMap, IdleTimeInASyncGoesToSyncBeforeTheLaunchAroundIt) {
    Timeline t;
    const SourceId s = t.begin_source("hand");
    t.add(s, gpu(0, 1), Category::compute_kernel, "A", 0, 10);
    t.add(s, cpu(1), Category::cuda_runtime, "cudaMemcpy", 10, 40);  // idle [10,40) inside it
    t.add(s, cpu(1), Category::sync, "cudaStreamSynchronize", 15, 25);
    t.add(s, cpu(2), Category::sync, "cudaDeviceSynchronize", 30, 35);  // another thread
    t.add(s, gpu(0, 1), Category::compute_kernel, "B", 40, 50);
    t.end_source(s, std::nullopt);
    const ExecutionMap map = compute_execution_map(t, MapOptions{});
    const WindowMap& w = map.parts.at(0).windows.at(0);
    EXPECT_EQ(w.gpu_idle_ns, 30);
    // sync [15,25) + [30,35) = 15; the launch keeps the rest, [10,15) + [25,30) + [35,40) = 15.
    EXPECT_EQ(w.idle.cpu_sync_ns, 15);
    EXPECT_EQ(w.idle.cpu_launch_ns, 15);
    EXPECT_EQ(w.idle.cpu_other_ns, 0);
    EXPECT_EQ(w.idle.unrecorded_ns, 0);
}

TEST(ExecutionMap, AmdahlBoundOfExposedTime) {
    // A: 5 ns exposed of a 50 ns window. Removed: 10 %; 2x faster: 5 % (2.5 ns saved).
    EXPECT_DOUBLE_EQ(amdahl_gain_pct(5, 50, std::numeric_limits<double>::infinity()), 10.0);
    EXPECT_DOUBLE_EQ(amdahl_gain_pct(5, 50, 2.0), 5.0);
    EXPECT_DOUBLE_EQ(amdahl_gain_pct(5, 0, 2.0), 0.0);
    MapOptions o;
    o.speedup = 2.0;
    const Json j = execution_map_to_json(compute_execution_map(single_device(), o));
    const Json& items = j["parts"][0]["windows"][0]["items"];
    const auto a =
        std::find_if(items.begin(), items.end(), [](const Json& i) { return i["name"] == "A"; });
    ASSERT_NE(a, items.end());
    EXPECT_DOUBLE_EQ((*a)["amdahl_gain_pct"].get<double>(), 5.0);
    EXPECT_DOUBLE_EQ((*a)["amdahl_speedup"].get<double>(), 100.0 / 95.0);
    EXPECT_DOUBLE_EQ((*a)["removable_pct"].get<double>(), 10.0);
    // A is 10 of the 30 ns of GPU work.
    EXPECT_NEAR((*a)["gpu_time_share_pct"].get<double>(), 100.0 / 3.0, 1e-12);
}

TEST(ExecutionMap, RefusesASpeedupThatIsNotAboveOne) {
    MapOptions o;
    o.speedup = 1.0;
    EXPECT_THROW((void)compute_execution_map(single_device(), o), Error);
}

// Device 0: compute K [0,100) on stream 1, an H2D copy [50,150) on stream 2, an NCCL kernel
// [80,120) on stream 3. Device 1: K2 [0,40).
Timeline two_devices() {
    Timeline t;
    const SourceId s = t.begin_source("multi");
    t.add(s, gpu(0, 1), Category::compute_kernel, "K", 0, 100);
    t.add(s, gpu(0, 2), Category::memcpy_h2d, "Memcpy HtoD", 50, 150);
    t.add(s, gpu(0, 3), kernel_category("ncclDevKernel_AllReduce"), "ncclDevKernel_AllReduce", 80,
          120);
    t.add(s, gpu(1, 1), Category::compute_kernel, "K2", 0, 40);
    t.end_source(s, std::nullopt);
    return t;
}

TEST(ExecutionMap, OverlapOfComputeWithCopiesAndCommunicationPerDevice) {
    const ExecutionMap map = compute_execution_map(two_devices(), MapOptions{});
    ASSERT_EQ(map.parts.size(), 2u);
    const WindowMap& d0 = map.parts[0].windows[0];
    EXPECT_EQ(map.parts[0].device, 0);
    EXPECT_EQ(map.parts[0].gpu_streams, 3);
    EXPECT_EQ(d0.duration_ns(), 150);
    EXPECT_EQ(d0.gpu_busy_ns, 150);
    EXPECT_EQ(d0.compute_ns, 100);
    EXPECT_EQ(d0.memory_ns, 100);
    EXPECT_EQ(d0.communication_ns, 40);
    EXPECT_EQ(d0.compute_memory_overlap_ns, 50);         // [50,100)
    EXPECT_EQ(d0.compute_communication_overlap_ns, 20);  // [80,100)
    // [0,50) 1, [50,80) 2, [80,100) 3, [100,120) 2, [120,150) 1.
    ASSERT_EQ(d0.concurrency_ns.size(), 4u);
    EXPECT_EQ(d0.concurrency_ns[1], 80);
    EXPECT_EQ(d0.concurrency_ns[2], 50);
    EXPECT_EQ(d0.concurrency_ns[3], 20);
    EXPECT_EQ(item(d0, ItemKind::kernel, "K").exposed_ns, 50);
    EXPECT_EQ(item(d0, ItemKind::kernel, "Memcpy HtoD").exposed_ns, 30);
    EXPECT_EQ(item(d0, ItemKind::kernel, "ncclDevKernel_AllReduce").exposed_ns, 0);
    EXPECT_EQ(item(d0, ItemKind::category, "memcpy_h2d").exposed_ns, 30);
    EXPECT_EQ(item(d0, ItemKind::category, "communication_kernel").exposed_ns, 0);
    // Device 1 shares the source's window [0,150): busy 40, idle 110 with nothing recorded.
    const WindowMap& d1 = map.parts[1].windows[0];
    EXPECT_EQ(map.parts[1].device, 1);
    EXPECT_EQ(d1.duration_ns(), 150);
    EXPECT_EQ(d1.gpu_busy_ns, 40);
    EXPECT_EQ(d1.idle.unrecorded_ns, 110);
    EXPECT_EQ(item(d1, ItemKind::kernel, "K2").exposed_ns, 40);

    MapOptions only1;
    only1.device = 1;
    const ExecutionMap one = compute_execution_map(two_devices(), only1);
    ASSERT_EQ(one.parts.size(), 1u);
    EXPECT_EQ(one.parts[0].device, 1);
    MapOptions none;
    none.device = 5;
    EXPECT_THROW((void)compute_execution_map(two_devices(), none), Error);
}

// Rank 0 and rank 1 each with stream 7 and "train_step" windows [0,100) and [150,250); kernel X
// [10,60) and [90,160) (across the first window's end and into the second), a nested "fwd"
// [0,50) inside the first step. Rank 1 has its own kernel only.
Timeline two_ranks() {
    Timeline t;
    const SourceId r0 = t.begin_source("rank0.json");
    t.add(r0, cpu(1), Category::annotation, "train_step", 0, 100);
    t.add(r0, cpu(1), Category::annotation, "fwd", 0, 50);
    t.add(r0, cpu(1), Category::annotation, "train_step", 150, 250);
    t.add(r0, gpu(0, 7), Category::compute_kernel, "X", 10, 60);
    t.add(r0, gpu(0, 7), Category::compute_kernel, "X", 90, 160);
    t.end_source(r0, 0);
    const SourceId r1 = t.begin_source("rank1.json");
    t.add(r1, cpu(1), Category::annotation, "train_step", 1000, 1100);
    t.add(r1, gpu(0, 7), Category::compute_kernel, "Y", 1000, 1030);
    t.end_source(r1, 1);
    return t;
}

TEST(ExecutionMap, WindowsPerAnnotationOccurrenceWithClippingAndNesting) {
    MapOptions o;
    o.window = "train_step";
    o.rank = 0;
    const ExecutionMap map = compute_execution_map(two_ranks(), o);
    ASSERT_EQ(map.parts.size(), 1u);
    EXPECT_EQ(map.parts[0].rank, 0);
    ASSERT_EQ(map.parts[0].windows.size(), 2u);
    const WindowMap& w0 = map.parts[0].windows[0];
    const WindowMap& w1 = map.parts[0].windows[1];
    // Step 0 [0,100): X [10,60) and [90,100) clipped: busy 60, idle 40, three gaps
    // [0,10), [60,90), and none after 100 (busy up to the window end).
    EXPECT_EQ(w0.gpu_busy_ns, 60);
    EXPECT_EQ(w0.gpu_idle_ns, 40);
    EXPECT_EQ(w0.idle_gaps, 2);
    EXPECT_EQ(item(w0, ItemKind::kernel, "X").count, 2);
    EXPECT_EQ(item(w0, ItemKind::kernel, "X").total_ns, 60);
    EXPECT_EQ(item(w0, ItemKind::kernel, "X").exposed_ns, 60);
    // Annotations exposed while the GPU idles and only they are open: [0,10) has fwd and
    // train_step open (nobody's), [60,90) train_step alone: 30.
    EXPECT_EQ(item(w0, ItemKind::annotation, "train_step").exposed_ns, 30);
    EXPECT_EQ(item(w0, ItemKind::annotation, "fwd").exposed_ns, 0);
    EXPECT_EQ(item(w0, ItemKind::annotation, "fwd").total_ns, 50);
    // No CPU work is recorded (annotations are ranges, not work): idle is unrecorded, coverage
    // is the GPU time only.
    EXPECT_EQ(w0.idle.unrecorded_ns, 40);
    EXPECT_EQ(w0.recorded_ns, 60);
    // Step 1 [150,250): X clipped to [150,160): busy 10, idle 90.
    EXPECT_EQ(w1.occurrence, 1u);
    EXPECT_EQ(w1.gpu_busy_ns, 10);
    EXPECT_EQ(item(w1, ItemKind::kernel, "X").exposed_ns, 10);

    const Json agg = execution_map_to_json(map)["parts"][0]["aggregate"];
    EXPECT_EQ(agg["occurrences"], 2);
    EXPECT_DOUBLE_EQ(agg["gpu_busy_ns"]["median"].get<double>(), 35.0);  // (60 + 10) / 2
    EXPECT_EQ(agg["gpu_busy_ns"]["min"], 10);
    EXPECT_EQ(agg["gpu_busy_ns"]["max"], 60);
    // fwd exists in step 0 only: its total counts 0 in step 1, so the median is 25.
    const auto fwd = std::find_if(agg["items"].begin(), agg["items"].end(),
                                  [](const Json& i) { return i["name"] == "fwd"; });
    ASSERT_NE(fwd, agg["items"].end());
    EXPECT_DOUBLE_EQ((*fwd)["total_ns"]["median"].get<double>(), 25.0);
}

// docs/map.md: intervals are clipped to the window; a zero-length interval belongs to it when it
// lies in [start, end] (both ends); an interval of some length that only touches an edge does not;
// an interval that starts long before the window and reaches into it does.
TEST(ExecutionMap, WindowEdgesClipTouchAndIncludeZeroLengthEndpoints) {
    Timeline t;
    const SourceId s = t.begin_source("edges");
    t.add(s, cpu(1), Category::annotation, "step", 100, 200);
    t.add(s, gpu(0, 1), Category::compute_kernel, "long", 0, 150);     // from far before the window
    t.add(s, gpu(0, 2), Category::compute_kernel, "before", 50, 100);  // touches the start
    t.add(s, gpu(0, 2), Category::compute_kernel, "at_start", 100, 100);
    t.add(s, gpu(0, 2), Category::compute_kernel, "at_end", 200, 200);
    t.add(s, gpu(0, 2), Category::compute_kernel, "after", 200, 260);  // touches the end
    t.add(s, gpu(0, 2), Category::compute_kernel, "beyond", 201, 201);
    t.end_source(s, std::nullopt);
    MapOptions o;
    o.window = "step";
    const ExecutionMap map = compute_execution_map(t, o);
    const WindowMap& w = map.parts.at(0).windows.at(0);
    EXPECT_EQ(w.start_ns, 100);
    EXPECT_EQ(w.end_ns, 200);
    EXPECT_EQ(w.gpu_busy_ns, 50);  // long, clipped to [100,150)
    EXPECT_EQ(w.gpu_idle_ns, 50);
    EXPECT_EQ(item(w, ItemKind::kernel, "long").count, 1);
    EXPECT_EQ(item(w, ItemKind::kernel, "long").total_ns, 50);
    EXPECT_EQ(item(w, ItemKind::kernel, "at_start").count, 1);
    EXPECT_EQ(item(w, ItemKind::kernel, "at_end").count, 1);
    for (const char* outside : {"before", "after", "beyond"}) {
        const auto it = std::find_if(w.items.begin(), w.items.end(), [&](const ItemTime& i) {
            return i.kind == ItemKind::kernel && i.name == outside;
        });
        EXPECT_TRUE(it == w.items.end() || it->count == 0) << outside;
    }
    // One idle gap, [150,200): the zero-length at_end does not split or shorten it.
    EXPECT_EQ(w.idle_gaps, 1);
}

TEST(ExecutionMap, RanksAreSeparatePartsAndAPrefixSelectsWindows) {
    MapOptions o;
    o.window = "train*";
    const ExecutionMap map = compute_execution_map(two_ranks(), o);
    ASSERT_EQ(map.parts.size(), 2u);
    EXPECT_EQ(map.parts[1].rank, 1);
    ASSERT_EQ(map.parts[1].windows.size(), 1u);
    // Rank 1's stream 7 is its own: Y only, 30 of 100.
    EXPECT_EQ(map.parts[1].windows[0].gpu_busy_ns, 30);
    EXPECT_EQ(item(map.parts[1].windows[0], ItemKind::kernel, "Y").exposed_ns, 30);
    MapOptions bad = o;
    bad.rank = 4;
    EXPECT_THROW((void)compute_execution_map(two_ranks(), bad), Error);
}

TEST(ExecutionMap, AWindowNameNoAnnotationCarriesIsNotFoundAndListsTheNames) {
    MapOptions o;
    o.window = "step";
    EXPECT_CKO_ERROR((void)compute_execution_map(two_ranks(), o), ErrorCode::not_found,
                     "'train_step'");
}

TEST(ExecutionMap, GanttShowsWhatEachLaneDoesPerColumn) {
    MapOptions o;
    o.gantt_columns = 10;  // 5 ns per column over [0,50)
    const WindowMap w = compute_execution_map(single_device(), o).parts[0].windows[0];
    ASSERT_EQ(w.gantt.size(), 3u);  // two GPU streams, then the CPU thread; D has no length
    EXPECT_EQ(w.gantt[0].lane, "GPU 0 stream 1");
    EXPECT_EQ(w.gantt[0].cells, "KKKK      ");
    EXPECT_EQ(w.gantt[1].cells, " KK       ");
    // CPU: the launch nested in the op shows in [20,30) (r), the op alone in [30,35), sync W.
    EXPECT_EQ(w.gantt[2].lane, "CPU 100/1");
    EXPECT_EQ(w.gantt[2].cells, "    rro WW");
}

TEST(ExecutionMap, AnEmptyTimelineIsRefused) {
    Timeline t;
    t.begin_source("empty");
    EXPECT_THROW((void)compute_execution_map(t, MapOptions{}), Error);
}

}  // namespace
}  // namespace cko::timeline
