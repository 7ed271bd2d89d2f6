// Throughput of the SASS tokenizer (MB/s over a synthetic ≥ 64 MB cuobjdump dump) and of the
// knowledge query (cards judged per second against the facts of the H200 NCU fixture).
#include "cko/compiler/sass_listing.hpp"
#include "cko/compiler/sass_report.hpp"
#include "cko/knowledge/query.hpp"
#include "cko/util/files.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

// The real spill kernel dump (cuobjdump 13.0, H200), its function repeated under fresh names
// until the text passes 64 MB: a large fatbin's worth of SASS.
const std::string& synthetic_dump() {
    static const std::string text = [] {
        const std::string fixture = cko::read_file_capped(
            std::string(CKO_SOURCE_DIR) + "/tests/fixtures/compiler/spill.sm_90.cuobjdump.sass",
            1 << 20);
        const std::size_t body = fixture.find("Function : ");
        const std::size_t name_end = fixture.find('\n', body);
        const std::string rest = fixture.substr(name_end);
        std::string out = fixture.substr(0, body);
        out.reserve(std::size_t{70} << 20);
        for (int i = 0; out.size() < std::size_t{64} << 20; ++i) {
            out += "Function : _Z11spill_heavy" + std::to_string(i) + "PKfPfi";
            out += rest;
        }
        return out;
    }();
    return text;
}

void BM_ParseSassText(benchmark::State& state) {
    const std::string& text = synthetic_dump();
    std::size_t kernels = 0;
    for (auto _ : state) {
        const cko::compiler::SassListing l = cko::compiler::parse_sass_text(text, "bench");
        kernels = l.kernels.size();
        benchmark::DoNotOptimize(l.kernels.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
    state.counters["MB/s"] = benchmark::Counter(
        static_cast<double>(state.iterations() * text.size()) / 1e6, benchmark::Counter::kIsRate);
    state.counters["kernels"] = static_cast<double>(kernels);
}
BENCHMARK(BM_ParseSassText)->Unit(benchmark::kMillisecond);

void BM_SassFactsPerKernel(benchmark::State& state) {
    const cko::compiler::SassListing l = cko::compiler::parse_sass_text(synthetic_dump(), "bench");
    for (auto _ : state) {
        const cko::compiler::SassReport r = cko::compiler::make_sass_report(l, {}, "text");
        benchmark::DoNotOptimize(r.kernels.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * l.kernels.size()));
}
BENCHMARK(BM_SassFactsPerKernel)->Unit(benchmark::kMillisecond);

void BM_KnowledgeQuery(benchmark::State& state) {
    const std::vector<cko::knowledge::Card> cards = cko::knowledge::load_cards("");
    cko::knowledge::FactSet facts;
    // 7 launches × ~48 facts, as `cko profile ncu tests/fixtures/ncu/ncu_details.csv` gives.
    for (int launch = 0; launch < 7; ++launch) {
        for (const auto& spec :
             {"ncu.dram.throughput_pct", "ncu.l1.hit_rate_pct", "ncu.l2.hit_rate_pct",
              "ncu.scheduler.no_eligible_pct", "ncu.launch.waves_per_sm",
              "ncu.memory.throughput_pct", "ncu.sm.throughput_pct"}) {
            for (int k = 0; k < 7; ++k) {
                facts.facts.push_back(
                    {spec, 10.0 * k, "%", "kernel_" + std::to_string(launch), "bench"});
            }
        }
    }
    cko::knowledge::Identity id;
    id.arch = "sm_90";
    id.cc = cko::knowledge::ComputeCapability{9, 0};
    for (auto _ : state) {
        const auto r = cko::knowledge::query_cards(cards, id, facts, true);
        benchmark::DoNotOptimize(r.answers.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * cards.size()));
}
BENCHMARK(BM_KnowledgeQuery)->Unit(benchmark::kMicrosecond);

}  // namespace
