// `cko report` on a store of 50 experiments (each screened and confirmed, twenty selected and
// audited, written record by record): the whole verb in process (HTML to a file, Markdown), and its
// phases (the model from the store; the HTML printer alone). Goal: the verb under 1 s
// (docs/report.md).
#include "cko/cli/command.hpp"
#include "cko/report/html_printer.hpp"
#include "cko/report/report_model.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko/util/files.hpp"
#include "verb_runner.hpp"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <stdlib.h>

namespace {
namespace fs = std::filesystem;
using cko::report::testing::SyntheticStore;

constexpr int kExperiments = 50;

// Built once per process under the temp dir, removed at exit.
const fs::path& bench_root() {
    struct Root {
        fs::path dir;
        Root() {
            std::string pattern = (fs::temp_directory_path() / "cko-report-bench-XXXXXX").string();
            if (::mkdtemp(pattern.data()) == nullptr) {
                return;
            }
            dir = pattern;
            SyntheticStore s(dir / "art");
            (void)s.baseline();
            for (int i = 0; i < kExperiments; ++i) {
                const std::string x = s.experiment("mechanism-" + std::to_string(i % 7));
                const double effect = 0.02 * (i % 11) - 0.05;
                const bool good = effect > 0.06;
                (void)s.comparison("screen", x, effect, good ? "improved" : "regressed",
                                   good ? "pass_to_confirm" : "rejected", {}, 8);
                if (good) {
                    const std::string c =
                        s.comparison("confirm", x, effect, "improved", "", {}, 20);
                    (void)s.select(x, c);
                    (void)s.comparison("audit", x, effect, "improved", "", {}, 12);
                } else {
                    (void)s.comparison("confirm", x, effect,
                                       effect < 0 ? "regressed" : "below_minimum", "", {}, 20);
                }
            }
        }
        ~Root() { cko::remove_tree_forcibly(dir); }
    };
    static const Root root;
    return root.dir;
}

void BM_ReportVerb(benchmark::State& state) {
    const fs::path root = bench_root();
    if (root.empty()) {
        state.SkipWithError("cannot create the temp store");
        return;
    }
    const bool html = state.range(0) != 0;
    std::vector<std::string> words = {"cko", "report", "--root", (root / "art").string()};
    if (html) {
        words.insert(words.end(), {"--out", (root / "report.html").string()});
    } else {
        words.insert(words.end(), {"--format", "md"});
    }
    const int rc = cko::bench::run_verb(state, words);
    if (rc != 0) {
        state.SkipWithError("cko report failed");
    }
    state.SetItemsProcessed(kExperiments * state.iterations());
    state.counters["experiments"] = kExperiments;
}
BENCHMARK(BM_ReportVerb)
    ->ArgName("html")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ReportModel(benchmark::State& state) {
    const cko::store::Store store = cko::store::Store::open(bench_root() / "art");
    for (auto _ : state) {
        benchmark::DoNotOptimize(cko::report::build_report_model(store, 0));
    }
    state.SetItemsProcessed(kExperiments * state.iterations());
}
BENCHMARK(BM_ReportModel)->Unit(benchmark::kMillisecond);

void BM_RenderHtml(benchmark::State& state) {
    const cko::store::Store store = cko::store::Store::open(bench_root() / "art");
    const cko::Json model = cko::report::build_report_model(store, 0);
    std::size_t bytes = 0;
    for (auto _ : state) {
        const std::string html = cko::report::render_html(model);
        bytes = html.size();
        benchmark::DoNotOptimize(html.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_RenderHtml)->Unit(benchmark::kMillisecond);

}  // namespace
