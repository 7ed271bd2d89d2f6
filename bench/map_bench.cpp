// `cko map` against the parse it needs: Kineto import (the summary `cko profile torch` builds),
// timeline feeding (parse into intervals), the map over the loaded timeline, and the whole verb.
// Set CKO_KINETO_BENCH_TRACE to a trace file (e.g. 500 MB); without it a 64 MB one is generated.
#include "cko/profile/kineto/kineto_trace.hpp"
#include "cko/profile/timeline_input.hpp"
#include "cko/timeline/execution_map.hpp"
#include "cko/util/json.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {
namespace fs = std::filesystem;

fs::path bench_trace() {
    if (const char* env = std::getenv("CKO_KINETO_BENCH_TRACE"); env != nullptr && *env != '\0') {
        return env;
    }
    const fs::path path = fs::temp_directory_path() / "cko_kineto_bench_64mb.json";
    if (!fs::exists(path)) {
        const std::string cmd = "python3 " CKO_SOURCE_DIR
                                "/bench/gen_kineto_trace.py --size-mb 64 --out " +
                                path.string() + " > /dev/null";
        if (std::system(cmd.c_str()) != 0) {
            return {};
        }
    }
    return path;
}

template <typename Body>
void run(benchmark::State& state, Body body) {
    const fs::path path = bench_trace();
    if (path.empty()) {
        state.SkipWithError("could not generate the trace (python3 missing?)");
        return;
    }
    for (auto _ : state) {
        body(path);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(fs::file_size(path)) * state.iterations());
}

// The reference: the parse `cko profile torch` does (stream, tokenize, simdjson, summary).
void BM_KinetoImport(benchmark::State& state) {
    run(state, [](const fs::path& path) {
        benchmark::DoNotOptimize(cko::profile::kineto::import_kineto_trace(path));
    });
}

// Parse into the timeline only: stream, tokenize, simdjson, compact intervals.
void BM_MapFeedTimeline(benchmark::State& state) {
    run(state, [](const fs::path& path) {
        benchmark::DoNotOptimize(cko::profile::load_timeline({path}));
    });
}

// The map alone over an already loaded timeline (whole trace: one window of every interval).
void BM_MapComputeOnly(benchmark::State& state) {
    const fs::path path = bench_trace();
    if (path.empty()) {
        state.SkipWithError("could not generate the trace");
        return;
    }
    const cko::profile::LoadedTimeline loaded = cko::profile::load_timeline({path});
    for (auto _ : state) {
        benchmark::DoNotOptimize(cko::timeline::compute_execution_map(loaded.timeline, {}));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(loaded.timeline.intervals().size()) *
                            state.iterations());
}

// What `cko map FILE --json` does: load, map, the document as canonical JSON.
void BM_MapVerbJson(benchmark::State& state) {
    run(state, [](const fs::path& path) {
        const cko::profile::LoadedTimeline loaded = cko::profile::load_timeline({path});
        const auto map = cko::timeline::compute_execution_map(loaded.timeline, {});
        benchmark::DoNotOptimize(
            cko::canonical_json(cko::profile::map_document(loaded, map)).size());
    });
}

}  // namespace

BENCHMARK(BM_KinetoImport)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapFeedTimeline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapComputeOnly)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapVerbJson)->Unit(benchmark::kMillisecond)->UseRealTime();
