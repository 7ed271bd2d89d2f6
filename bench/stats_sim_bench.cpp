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

// The analytic bound on the median pairs to `improved` for a true effect `effect` (log ratio),
// from the plan alone, not from a simulation: at a look of n pairs with two-sided level c, the
// Hodges-Lehmann estimate is about normal with SD sigma * sqrt(pi / 3n) (its efficiency against the
// mean is 3/pi for normal d), so the look's lower bound reaches the minimum effect m with
// probability >= 1/2 once z_c * sigma * sqrt(pi / 3n) <= effect - m. At the first such look at least
// half of the runs have stopped, so the median is at most that look's n (max_pairs if none).
std::size_t median_pairs_bound(const SequentialPlan& plan, double effect) {
    const std::vector<std::size_t> sizes = plan.look_sizes();
    const std::vector<double> levels = plan.look_confidence();
    const double room = effect - pct_to_log(kMinEffectPct);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const double z = normal_quantile(0.5 + levels[k] / 2);
        const double sd = kPairedNoise * std::sqrt(M_PI / (3.0 * static_cast<double>(sizes[k])));
        if (z * sd <= room) {
            return sizes[k];
        }
    }
    return plan.max_pairs;
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

    // 2. Sequential A/A runs with the default plan (looks at 8, 12, …, 40 pairs).
    const SequentialPlan plan;
    std::map<Verdict, int> aa_sequential;
    for (int run = 0; run < kRuns; ++run) {
        ++aa_sequential[run_sequential(rng, plan, 0.0).verdict];
    }
    const int seq_false =
        kRuns - aa_sequential[Verdict::equivalent] - aa_sequential[Verdict::inconclusive];
    const bool seq_ok = share(seq_false) <= 5.0;
    all_met = all_met && seq_ok;
    std::printf(
        "\n2. A/A, sequential (block %zu, looks %zu..%zu pairs): %.1f %% false verdicts "
        "(target <= 5 %%: %s).\n",
        plan.block, plan.look_sizes().front(), plan.max_pairs, share(seq_false),
        seq_ok ? "met" : "MISSED");
    print_counts(aa_sequential);

    // 3. True 1 % speed-up, sequential: pairs to verdict.
    std::vector<std::size_t> pairs_used;
    std::map<Verdict, int> ab_sequential;
    for (int run = 0; run < kRuns; ++run) {
        const SequentialOutcome outcome = run_sequential(rng, plan, pct_to_log(1.0));
        ++ab_sequential[outcome.verdict];
        pairs_used.push_back(outcome.pairs);
    }
    std::sort(pairs_used.begin(), pairs_used.end());
    const std::size_t median_pairs = pairs_used[pairs_used.size() / 2];
    double mean_pairs = 0.0;
    for (const std::size_t p : pairs_used) {
        mean_pairs += static_cast<double>(p) / kRuns;
    }
    const std::size_t bound = median_pairs_bound(plan, pct_to_log(1.0));
    const bool speed_ok = median_pairs <= bound;
    all_met = all_met && speed_ok;
    std::printf(
        "\n3. True +1 %% effect, sequential: median %zu pairs to verdict (analytic bound <= %zu: "
        "%s), mean %.1f, 90th percentile %zu; %.1f %% of runs said improved.\n",
        median_pairs, bound, speed_ok ? "met" : "MISSED", mean_pairs,
        pairs_used[pairs_used.size() * 9 / 10], share(ab_sequential[Verdict::improved]));
    print_counts(ab_sequential);

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
