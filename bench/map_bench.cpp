// `cko map` against the parse it needs: Kineto import (the summary `cko profile torch` builds),
// timeline feeding (parse into intervals), the map over the loaded timeline, and the whole verb.
// Set CKO_KINETO_BENCH_TRACE to a trace file (e.g. 500 MB); without it a 64 MB one is generated.
// BM_MapVerbScaling runs the binaries (`cko map FILE --json` beside `cko profile torch FILE
// --json`) over generated 50, 150 and 500 MB traces ($CKO_MAP_BENCH_SIZES, in MB): the fitted
// exponent of CPU time against size, peak RSS / file and map / parse CPU time.
#include "child_process.hpp"
#include "cko/profile/kineto/kineto_trace.hpp"
#include "cko/profile/timeline_input.hpp"
#include "cko/timeline/execution_map.hpp"
#include "cko/util/json.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

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

// The verbs as child processes over several sizes, interleaved (map, parse, next size) so that
// the load of a shared machine falls on all of them alike; medians of the CPU times.
void BM_MapVerbScaling(benchmark::State& state) {
    std::vector<double> sizes_mb;
    const char* env = std::getenv("CKO_MAP_BENCH_SIZES");
    std::stringstream list(env != nullptr && *env != '\0' ? env : "50,150,500");
    for (std::string item; std::getline(list, item, ',');) {
        sizes_mb.push_back(std::stod(item));
    }
    std::string pattern = (fs::temp_directory_path() / "cko-map-bench-XXXXXX").string();
    const fs::path dir = ::mkdtemp(pattern.data());
    std::vector<fs::path> files;
    for (const double mb : sizes_mb) {
        const fs::path path = dir / ("trace_" + std::to_string(static_cast<int>(mb)) + "mb.json");
        const std::string cmd = "python3 " CKO_SOURCE_DIR "/bench/gen_kineto_trace.py --size-mb " +
                                std::to_string(mb) + " --out " + path.string() + " > /dev/null";
        if (std::system(cmd.c_str()) != 0) {
            state.SkipWithError("could not generate the traces (python3 missing?)");
            fs::remove_all(dir);
            return;
        }
        files.push_back(path);
    }
    const std::string cko = cko::bench::cko_binary(CKO_BINARY);
    const std::size_t n = files.size();
    std::vector<std::vector<double>> map_cpu(n), parse_cpu(n);
    std::vector<long> map_rss(n, 0);
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) {
            const auto m = cko::bench::run_child({cko, "map", files[i].string(), "--json"});
            const auto p =
                cko::bench::run_child({cko, "profile", "torch", files[i].string(), "--json"});
            if (m.status != 0 || p.status != 0) {
                state.SkipWithError("cko map or cko profile torch failed");
                fs::remove_all(dir);
                return;
            }
            state.SetIterationTime(m.seconds);
            map_cpu[i].push_back(m.cpu_seconds);
            parse_cpu[i].push_back(p.cpu_seconds);
            map_rss[i] = std::max(map_rss[i], m.max_rss_kb);
        }
    }
    std::vector<double> bytes(n), map_median(n), parse_median(n);
    for (std::size_t i = 0; i < n; ++i) {
        bytes[i] = static_cast<double>(fs::file_size(files[i]));
        map_median[i] = cko::bench::median(map_cpu[i]);
        parse_median[i] = cko::bench::median(parse_cpu[i]);
        const double rss_ratio = static_cast<double>(map_rss[i]) * 1024 / bytes[i];
        std::printf(
            "cko map %7.1f MB: CPU %.3f s (%.0f MB/s), parse %.3f s, map/parse %.2f, "
            "peak RSS %.1f MB (%.3f x the file)\n",
            bytes[i] / 1e6, map_median[i], bytes[i] / 1e6 / map_median[i], parse_median[i],
            map_median[i] / parse_median[i], static_cast<double>(map_rss[i]) * 1024 / 1e6,
            rss_ratio);
    }
    fs::remove_all(dir);
    const double map_exponent = cko::bench::fitted_exponent(bytes, map_median);
    const double parse_exponent = cko::bench::fitted_exponent(bytes, parse_median);
    std::printf("fitted exponent of CPU time against size: map %.3f, parse %.3f\n", map_exponent,
                parse_exponent);
    state.counters["map_exponent"] = map_exponent;
    state.counters["parse_exponent"] = parse_exponent;
    state.counters["RSS_ratio_largest"] = static_cast<double>(map_rss[n - 1]) * 1024 / bytes[n - 1];
    state.counters["map_over_parse_largest"] = map_median[n - 1] / parse_median[n - 1];
    state.counters["MB/s_cpu_largest"] = bytes[n - 1] / 1e6 / map_median[n - 1];
}

}  // namespace

BENCHMARK(BM_MapVerbScaling)->Unit(benchmark::kSecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_KinetoImport)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapFeedTimeline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapComputeOnly)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MapVerbJson)->Unit(benchmark::kMillisecond)->UseRealTime();
