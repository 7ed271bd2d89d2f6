// Throughput of the primitives every record write pays for: strict parse, canonical dump, SHA-256.
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

std::string sample_record(int entries) {
    cko::Json j = cko::Json::object();
    for (int i = 0; i < entries; ++i) {
        j["samples"].push_back(745.1 + i * 0.01);
        j["names"].push_back("case-" + std::to_string(i));
    }
    j["format_version"] = "cko/bench-v1";
    return cko::canonical_json(j);
}

void BM_ParseJsonStrict(benchmark::State& state) {
    const std::string text = sample_record(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(cko::parse_json_strict(text));
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseJsonStrict)->Arg(1000)->Arg(100000);

void BM_CanonicalJson(benchmark::State& state) {
    const cko::Json value = cko::parse_json_strict(sample_record(static_cast<int>(state.range(0))));
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string out = cko::canonical_json(value);
        bytes += out.size();
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_CanonicalJson)->Arg(1000)->Arg(100000);

void BM_Sha256(benchmark::State& state) {
    const std::string data(static_cast<std::size_t>(state.range(0)), 'x');
    for (auto _ : state) {
        benchmark::DoNotOptimize(cko::sha256_hex(data));
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_Sha256)->Arg(1 << 20)->Arg(64 << 20);

}  // namespace
