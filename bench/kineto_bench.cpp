// Throughput of `cko profile torch` on a synthetic Kineto trace (bench/gen_kineto_trace.py).
// Set CKO_KINETO_BENCH_TRACE to a trace file (e.g. 512 MB); without it a 64 MB one is generated.
#include "cko/profile/kineto/kineto_trace.hpp"

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

void BM_ImportKinetoTrace(benchmark::State& state) {
    const fs::path path = bench_trace();
    if (path.empty()) {
        state.SkipWithError("could not generate the trace (python3 missing?)");
        return;
    }
    const auto bytes = static_cast<std::int64_t>(fs::file_size(path));
    std::int64_t events = 0;
    for (auto _ : state) {
        const auto trace = cko::profile::kineto::import_kineto_trace(path);
        events += trace.summary.events;
        benchmark::DoNotOptimize(trace.summary.kernel_time_ns);
    }
    state.SetBytesProcessed(bytes * state.iterations());
    state.SetItemsProcessed(events);
}
BENCHMARK(BM_ImportKinetoTrace)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
