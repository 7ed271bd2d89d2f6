// Simulated A/A and A/B comparisons that check the statistics layer's error rates and pairs to
// verdict (printed in plain words), then Google Benchmark timings of the estimator.
#include "cko/stats/normal.hpp"
#include "cko/stats/stats.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cko::stats;

constexpr int kRuns = 1000;
constexpr double kPairedNoise = 0.005;  // SD of d = ln(reference/candidate): 0.5 %
constexpr double kMinEffectPct = 0.5;
constexpr std::size_t kMinPairs = 6;
constexpr double kConfidence = 0.95;

// One interleaved pair: both subjects share the pair's drift (clock, thermal state), which the
// log ratio cancels; each adds its own lognormal noise, sized so that SD(d) = kPairedNoise.
// `true_effect` is the candidate's speed-up as a log ratio.
double simulated_pair(std::mt19937_64& rng, double true_effect) {
    std::normal_distribution<double> drift(0.0, 0.05);
    std::normal_distribution<double> own(0.0, kPairedNoise / std::sqrt(2.0));
    const double shared = drift(rng);
    const double reference_us = 100.0 * std::exp(shared + own(rng));
    const double candidate_us = 100.0 * std::exp(shared + own(rng) - true_effect);
    return paired_log_ratio(reference_us, candidate_us, Direction::lower);
}

std::vector<double> simulated_run(std::mt19937_64& rng, std::size_t pairs, double true_effect) {
    std::vector<double> d;
    for (std::size_t i = 0; i < pairs; ++i) {
        d.push_back(simulated_pair(rng, true_effect));
    }
    return d;
}

struct SequentialOutcome {
    Verdict verdict;
    std::size_t pairs;
};

SequentialOutcome run_sequential(std::mt19937_64& rng, const SequentialPlan& plan,
                                 double true_effect) {
    std::vector<double> d;
    while (true) {
        const std::size_t target = std::min(d.size() + plan.block, plan.max_pairs);
        while (d.size() < target) {
            d.push_back(simulated_pair(rng, true_effect));
        }
        const LookDecision decision = sequential_look(d, plan, kMinEffectPct);
        if (decision.stop) {
            return {decision.verdict, d.size()};
        }
    }
}

struct SequentialSummary {
    std::size_t median = 0;
    std::size_t p90 = 0;
    double false_share = 0;     // A/A: verdicts other than equivalent/inconclusive (%)
    double expected_share = 0;  // A/B: the verdict that matches the true effect's sign (%)
};

std::string fmt_effect(double pct) {
    char text[32];
    std::snprintf(text, sizeof text, "%+g %%", pct);
    return text;
}

SequentialSummary summarize_sequential(std::mt19937_64& rng, const SequentialPlan& plan,
                                       double true_effect) {
    std::vector<std::size_t> used;
    int wrong = 0;
    int expected = 0;
    for (int run = 0; run < kRuns; ++run) {
        const SequentialOutcome o = run_sequential(rng, plan, true_effect);
        used.push_back(o.pairs);
        wrong += o.verdict != Verdict::equivalent && o.verdict != Verdict::inconclusive ? 1 : 0;
        expected += o.verdict == (true_effect > 0 ? Verdict::improved : Verdict::regressed) ? 1 : 0;
    }
    std::sort(used.begin(), used.end());
    return {used[used.size() / 2], used[used.size() * 9 / 10], 100.0 * wrong / kRuns,
            100.0 * expected / kRuns};
}

double share(int count) {
    return 100.0 * count / kRuns;
}

void print_counts(const std::map<Verdict, int>& counts) {
    for (const auto& [verdict, count] : counts) {
        std::printf("      %-14s %4d (%.1f %%)\n", std::string(verdict_name(verdict)).c_str(),
                    count, share(count));
    }
}

// Returns false when a stated target is missed.
bool print_simulation_figures() {
    bool all_met = true;
    std::mt19937_64 rng(20240611);
    std::printf(
        "Statistics simulation: %d runs each, paired noise SD %.1f %%, minimum effect "
        "%.1f %%, %.0f %% confidence, lognormal times with shared per-pair drift.\n",
        kRuns, 100 * kPairedNoise, kMinEffectPct, 100 * kConfidence);

    // 1. Fixed 20-pair A/A runs: any verdict other than equivalent/inconclusive is an error.
    std::map<Verdict, int> aa_fixed;
    int covered = 0;
    for (int run = 0; run < kRuns; ++run) {
        const PairedEstimate e = estimate_paired(simulated_run(rng, 20, 0.0), kConfidence);
        ++aa_fixed[classify(e, kMinEffectPct, kMinPairs)];
        covered += (e.ci_low <= 0.0 && 0.0 <= e.ci_high) ? 1 : 0;
    }
    const int aa_false = kRuns - aa_fixed[Verdict::equivalent] - aa_fixed[Verdict::inconclusive];
    const bool aa_ok = share(aa_false) <= 5.0;
    all_met = all_met && aa_ok;
    std::printf(
        "\n1. A/A, fixed 20 pairs: %.1f %% of runs gave a verdict other than equivalent or "
        "inconclusive (target <= 5 %%: %s); the interval covered the true effect 0 in "
        "%.1f %% of runs.\n",
        share(aa_false), aa_ok ? "met" : "MISSED", share(covered));
    print_counts(aa_fixed);

    // 2-3. Sequential plans side by side: the one comparisons ran until [13] (O'Brien–Fleming,
    // looks every 2 pairs from 6) and the early-decision plan they run now (Pocock-type, first look
    // where an exact decision is attainable). Same seeds for both, so the columns differ by plan.
    SequentialPlan before;
    before.block = 2;
    const SequentialPlan now = SequentialPlan::early_decision(kMinPairs, 40, kConfidence);
    const std::vector<std::pair<const char*, SequentialPlan>> plans{
        {"O'Brien-Fleming (before)", before}, {"early decision (now)", now}};
    std::printf("\n2. Sequential plans, 6..40 pairs, block 2, paired noise 0.5 %%:\n");
    for (const auto& [name, p] : plans) {
        std::printf("   %-26s looks at %zu, %zu, ..., %zu; levels %.5f, %.5f, ..., %.5f\n", name,
                    p.look_sizes()[0], p.look_sizes()[1], p.max_pairs, p.look_confidence()[0],
                    p.look_confidence()[1], p.look_confidence().back());
    }
    std::printf("\n   %-40s %26s %26s\n", "scenario (1000 runs)", plans[0].first, plans[1].first);
    std::map<std::pair<int, double>, SequentialSummary> summaries;
    for (const double effect_pct : {0.0, 50.0, 5.0, 1.0, 0.75, -0.88}) {
        SequentialSummary row[2];
        for (int p = 0; p < 2; ++p) {
            std::mt19937_64 plan_rng(20240611 + static_cast<std::uint64_t>(1000 * effect_pct));
            row[p] = summarize_sequential(plan_rng, plans[static_cast<std::size_t>(p)].second,
                                          pct_to_log(effect_pct));
            summaries[{p, effect_pct}] = row[p];
        }
        if (effect_pct == 0.0) {
            std::printf("   %-40s %25.1f%% %25.1f%%\n", "A/A: false verdicts", row[0].false_share,
                        row[1].false_share);
            std::printf("   %-40s %26zu %26zu\n", "A/A: median pairs to verdict", row[0].median,
                        row[1].median);
            continue;
        }
        const std::string label = fmt_effect(effect_pct);
        std::printf("   %-40s %26zu %26zu\n", (label + ": median pairs to verdict").c_str(),
                    row[0].median, row[1].median);
        std::printf("   %-40s %26zu %26zu\n", (label + ": 90th percentile").c_str(), row[0].p90,
                    row[1].p90);
        std::printf("   %-40s %25.1f%% %25.1f%%\n",
                    (label + (effect_pct > 0 ? ": said improved" : ": said regressed")).c_str(),
                    row[0].expected_share, row[1].expected_share);
    }
    const struct {
        const char* what;
        double value;
        double goal;
        bool at_most = true;
    } goals[] = {
        {"A/A false verdicts, before (%)", summaries[{0, 0.0}].false_share, 5.0},
        {"A/A false verdicts, now (%)", summaries[{1, 0.0}].false_share, 5.0},
        {"+50 % median pairs, now", static_cast<double>(summaries[{1, 50.0}].median), 8.0},
        {"+1 % median pairs, now", static_cast<double>(summaries[{1, 1.0}].median), 16.0},
        {"+1 % said improved, now (%)", summaries[{1, 1.0}].expected_share, 95.0, false},
    };
    std::printf("\n3. Goals:\n");
    for (const auto& g : goals) {
        const bool met = g.at_most ? g.value <= g.goal : g.value >= g.goal;
        all_met = all_met && met;
        std::printf("   %-42s %6.1f (goal %s %.1f): %s\n", g.what, g.value,
                    g.at_most ? "<=" : ">=", g.goal, met ? "met" : "MISSED");
    }
    const SequentialPlan& plan = now;

    // 4. The MDE formula: at 20 pairs an effect of exactly MDE(20) should show CI low > 0 in
    // about 80 % of runs.
    const double mde = minimum_detectable_effect(kPairedNoise, 20, kConfidence);
    int detected = 0;
    for (int run = 0; run < kRuns; ++run) {
        detected += estimate_paired(simulated_run(rng, 20, mde), kConfidence).ci_low > 0.0 ? 1 : 0;
    }
    std::printf(
        "\n4. MDE check: MDE(20 pairs) = %.3f %%; a true effect of that size was detected "
        "(CI low > 0) in %.1f %% of runs (formula aims at 80 %%).\n",
        log_to_pct(mde), share(detected));

    // 5. Resolution from 20-pair A/A runs, as `cko baseline` would compute it.
    std::vector<std::size_t> needed;
    std::vector<double> mde_pcts;
    Resolution example;
    for (int run = 0; run < kRuns; ++run) {
        example = resolution_from_aa(simulated_run(rng, 20, 0.0), kConfidence, kMinEffectPct,
                                     plan.max_pairs);
        needed.push_back(example.pairs_needed);
        mde_pcts.push_back(example.mde_pct);
    }
    std::sort(needed.begin(), needed.end());
    std::sort(mde_pcts.begin(), mde_pcts.end());
    std::printf(
        "\n5. Resolution from 20-pair A/A runs: MDE median %.3f %% (10th-90th percentile "
        "%.3f-%.3f %%); pairs needed for %.1f %% median %zu (%zu-%zu).\n   Example: %s\n\n",
        mde_pcts[kRuns / 2], mde_pcts[kRuns / 10], mde_pcts[kRuns * 9 / 10], kMinEffectPct,
        needed[kRuns / 2], needed[kRuns / 10], needed[kRuns * 9 / 10], example.statement.c_str());
    return all_met;
}

void BM_EstimatePaired(benchmark::State& state) {
    std::mt19937_64 rng(7);
    const std::vector<double> d =
        simulated_run(rng, static_cast<std::size_t>(state.range(0)), 0.01);
    for (auto _ : state) {
        benchmark::DoNotOptimize(estimate_paired(d, kConfidence));
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EstimatePaired)->Arg(20)->Arg(40)->Arg(400)->Arg(4000);

void BM_SequentialPlanLevels(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(SequentialPlan{}.look_confidence());
    }
}
BENCHMARK(BM_SequentialPlanLevels);

}  // namespace

int main(int argc, char** argv) {
    const bool targets_met = print_simulation_figures();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return targets_met ? 0 : 1;
}
