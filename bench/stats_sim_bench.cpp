// Simulated A/A and A/B comparisons that check the statistics layer's error rates and pairs to
// verdict (printed in plain words), the verdict rule's handling of instance effects (issue [18]),
// then Google Benchmark timings of the estimator.
#include "cko/eval/judge.hpp"
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

// ---- Issue [18]: instance effects against the practical threshold ----
//
// Two cases per round; d of case c in a round = effect_c + bias_c + N(0, noise) (the per-pair drift
// cancels in the log ratio, so it is left out). bias_c is an instance effect: two materialized
// copies of identical code differing by placement. Comparisons run as compare.cpp runs them (the
// early-decision plan, stop at a decisive look, then judge_comparison), against the rule before
// [18] re-implemented below (regressed when high < 0, per case too; no per-case threshold).

constexpr double kInstanceNoise = 0.001;  // SD of d per case: 0.1 %
constexpr double kInstanceMinEffectPct = 1.0;

std::vector<double> instance_round(std::mt19937_64& rng, const double (&effect)[2],
                                   const double (&bias)[2], double noise) {
    std::normal_distribution<double> n(0.0, noise);
    return {effect[0] + bias[0] + n(rng), effect[1] + bias[1] + n(rng)};
}

// The verdict rule before [18]: a shown slowdown of any size was `regressed`.
Verdict rule_before_18(const PairedEstimate& e, double min_effect_pct, std::size_t min_pairs) {
    const double m = pct_to_log(min_effect_pct);
    if (e.n < min_pairs || !e.confidence_reached()) {
        return Verdict::inconclusive;
    }
    if (e.ci_low >= m && e.ci_low > 0) {
        return Verdict::improved;
    }
    if (e.ci_high < 0) {
        return Verdict::regressed;
    }
    if (e.ci_low > 0 && e.ci_high < m) {
        return Verdict::below_minimum;
    }
    return -m < e.ci_low && e.ci_high < m ? Verdict::equivalent : Verdict::inconclusive;
}

struct InstanceOutcome {
    Verdict verdict;
    std::size_t pairs;
};

InstanceOutcome instance_run(std::mt19937_64& rng, const SequentialPlan& plan,
                             const std::vector<double>& levels, const double (&effect)[2],
                             const double (&bias)[2], double noise, bool before_18) {
    using cko::eval::JudgeInput;
    JudgeInput in;
    in.case_ids = {"a", "b"};
    in.minimum_effect_pct = kInstanceMinEffectPct;
    in.min_pairs = plan.min_pairs;
    in.confidence = plan.confidence;
    in.plan = plan;
    const std::vector<std::size_t> sizes = plan.look_sizes();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        while (in.d.size() < sizes[k]) {
            in.d.push_back(instance_round(rng, effect, bias, noise));
        }
        const std::vector<double> pooled = cko::eval::pooled_rounds(in.d);
        if (!before_18) {
            // What compare.cpp does: stop at a decisive look, then judge.
            if (sequential_look(pooled, plan, kInstanceMinEffectPct).stop) {
                return {cko::eval::judge_comparison(in).verdict, in.d.size()};
            }
            continue;
        }
        const double level = levels[k];
        const Verdict pooled_verdict =
            rule_before_18(estimate_paired(pooled, level), kInstanceMinEffectPct, plan.min_pairs);
        if (!is_decisive(pooled_verdict) && k + 1 < sizes.size()) {
            continue;
        }
        bool case_regressed = false;
        for (std::size_t c = 0; c < 2; ++c) {
            std::vector<double> col;
            for (const auto& r : in.d) {
                col.push_back(r[c]);
            }
            const PairedEstimate e = estimate_paired(col, level);
            case_regressed = case_regressed ||
                             (e.n >= plan.min_pairs && e.confidence_reached() && e.ci_high < 0);
        }
        return {
            pooled_verdict == Verdict::improved && case_regressed ? Verdict::mixed : pooled_verdict,
            in.d.size()};
    }
    return {Verdict::inconclusive, in.d.size()};
}

struct InstanceSummary {
    double regressed = 0;  // % of runs
    double mixed = 0;
    double improved = 0;
    std::size_t median_pairs = 0;
};

InstanceSummary summarize_instance(std::uint64_t seed, const SequentialPlan& plan,
                                   const double (&effect)[2], const double (&bias)[2], double noise,
                                   bool before_18) {
    std::mt19937_64 rng(seed);
    std::map<Verdict, int> counts;
    std::vector<std::size_t> pairs;
    const std::vector<double> levels = plan.look_confidence();  // costly: once, not per run
    for (int run = 0; run < kRuns; ++run) {
        const InstanceOutcome o = instance_run(rng, plan, levels, effect, bias, noise, before_18);
        ++counts[o.verdict];
        pairs.push_back(o.pairs);
    }
    std::sort(pairs.begin(), pairs.end());
    return {share(counts[Verdict::regressed]), share(counts[Verdict::mixed]),
            share(counts[Verdict::improved]), pairs[pairs.size() / 2]};
}

// Returns false when a stated goal of [18] is missed.
bool print_instance_figures() {
    bool all_met = true;
    const SequentialPlan plan = SequentialPlan::early_decision(kMinPairs, 40, kConfidence);
    std::printf(
        "6. Instance effects (issue [18]): 2 cases, paired noise SD %.1f %% per case, minimum "
        "effect %.0f %%, early-decision plan 6..40, %d runs each; before = the rule before [18] "
        "(regressed when high < 0), now = judge_comparison.\n",
        100 * kInstanceNoise, kInstanceMinEffectPct, kRuns);
    std::printf("   %-58s %17s %17s\n", "scenario", "before [18]", "now");
    const auto row = [&](const char* label, const double(&effect)[2], const double(&bias)[2],
                         double noise, const char* what, double goal, bool at_most) {
        const std::uint64_t seed = 1800 + static_cast<std::uint64_t>(1e6 * (bias[0] + 2 * bias[1]) +
                                                                     1e4 * (effect[0] + effect[1]));
        InstanceSummary r[2];
        for (int b = 0; b < 2; ++b) {
            r[b] = summarize_instance(seed, plan, effect, bias, noise, b == 0);
        }
        const auto pick = [&](const InstanceSummary& x) {
            return std::string(what) == "regressed"            ? x.regressed
                   : std::string(what) == "mixed"              ? x.mixed
                   : std::string(what) == "regressed or mixed" ? x.regressed + x.mixed
                                                               : x.improved;
        };
        std::printf("   %-58s %8.1f%% (%2zu p) %8.1f%% (%2zu p)", label, pick(r[0]),
                    r[0].median_pairs, pick(r[1]), r[1].median_pairs);
        if (std::isnan(goal)) {
            std::printf("  (no goal: the price of the threshold)\n");
            return;
        }
        const bool met = at_most ? pick(r[1]) <= goal : pick(r[1]) >= goal;
        all_met = all_met && met;
        std::printf("  goal %s %.0f %%: %s\n", at_most ? "<=" : ">=", goal, met ? "met" : "MISSED");
    };
    const double zero[2] = {0.0, 0.0};
    for (const double b_pct : {0.05, 0.1, 0.2}) {
        const double b = pct_to_log(b_pct);
        char label[96];
        const double same[2] = {-b, -b};
        std::snprintf(label, sizeof label, "A/A, both cases -%.2f %%: regressed or mixed", b_pct);
        row(label, zero, same, kInstanceNoise, "regressed or mixed", 5.0, true);
        const double split[2] = {b, -b};
        std::snprintf(label, sizeof label, "A/A, cases +%.2f / -%.2f %%: regressed or mixed", b_pct,
                      b_pct);
        row(label, zero, split, kInstanceNoise, "regressed or mixed", 5.0, true);
        const double win[2] = {pct_to_log(5.0), 0.0};
        const double placed[2] = {0.0, -b};
        std::snprintf(label, sizeof label, "+5 %% on a, b unchanged with -%.2f %% bias: mixed",
                      b_pct);
        row(label, win, placed, kInstanceNoise, "mixed", 5.0, true);
    }
    for (const double noise : {kInstanceNoise, 0.005}) {
        for (const double slow_pct : {2.0, 5.0}) {
            const double slow = -pct_to_log(slow_pct);
            char label[96];
            const double both[2] = {slow, slow};
            std::snprintf(label, sizeof label,
                          "true -%.0f %% on both cases, noise %.1f %%: regressed", slow_pct,
                          100 * noise);
            row(label, both, zero, noise, "regressed", 95.0, false);
            const double one[2] = {pct_to_log(20.0), slow};
            std::snprintf(label, sizeof label, "+20 %% on a, -%.0f %% on b, noise %.1f %%: mixed",
                          slow_pct, 100 * noise);
            row(label, one, zero, noise, "mixed",
                slow_pct > 2.0 || noise < 0.002 ? 95.0 : std::nan(""), false);
        }
    }
    std::printf("   (p = median pairs to verdict)\n\n");
    return all_met;
}

// 7. The instrument check of a baseline (12 A/A rounds, the default for min_pairs 6) and what a
// carried bias costs a later comparison of a real effect. No goal: these are the rates as built.
void print_instrument_figures() {
    const SequentialPlan plan = SequentialPlan::early_decision(kMinPairs, 40, kConfidence);
    constexpr std::size_t kAaRounds = 12;
    std::printf(
        "7. Instrument check of a %zu-round baseline A/A (2 cases, noise %.1f %%), %d runs each: "
        "share flagged biased, median bound when flagged; then a comparison of a true effect "
        "on both cases with that check carried (the same runs).\n",
        kAaRounds, 100 * kInstanceNoise, kRuns);
    const double zero[2] = {0.0, 0.0};
    for (const double b_pct : {0.0, 0.05, 0.1, 0.2}) {
        std::mt19937_64 rng(7000 + static_cast<std::uint64_t>(1000 * b_pct));
        const double b = pct_to_log(b_pct);
        const double bias[2] = {-b, b};
        int flagged = 0;
        std::vector<double> bounds;
        std::map<double, std::pair<int, int>> kept;  // effect -> (firm without, firm with)
        for (int run = 0; run < kRuns; ++run) {
            std::vector<std::vector<double>> aa;
            for (std::size_t r = 0; r < kAaRounds; ++r) {
                aa.push_back(instance_round(rng, zero, bias, kInstanceNoise));
            }
            std::vector<std::pair<std::string, PairedEstimate>> cases;
            for (std::size_t c = 0; c < 2; ++c) {
                std::vector<double> col;
                for (const auto& r : aa) {
                    col.push_back(r[c]);
                }
                cases.emplace_back(c == 0 ? "a" : "b", estimate_paired(col, kConfidence));
            }
            const cko::eval::InstrumentCheck check = cko::eval::check_instrument(
                estimate_paired(cko::eval::pooled_rounds(aa), kConfidence), cases);
            if (check.biased) {
                ++flagged;
                bounds.push_back(log_to_pct(check.bound_log));
            }
            for (const double effect_pct : {1.5, 3.0, -3.0}) {
                const double e = effect_pct > 0 ? pct_to_log(effect_pct) : -pct_to_log(-effect_pct);
                const double effect[2] = {e, e};
                cko::eval::JudgeInput in;
                in.case_ids = {"a", "b"};
                in.minimum_effect_pct = kInstanceMinEffectPct;
                in.min_pairs = plan.min_pairs;
                in.plan = plan;
                for (const std::size_t size : plan.look_sizes()) {
                    while (in.d.size() < size) {
                        in.d.push_back(instance_round(rng, effect, bias, kInstanceNoise));
                    }
                    if (sequential_look(cko::eval::pooled_rounds(in.d), plan, kInstanceMinEffectPct)
                            .stop) {
                        break;
                    }
                }
                const Verdict want = effect_pct > 0 ? Verdict::improved : Verdict::regressed;
                kept[effect_pct].first += cko::eval::judge_comparison(in).verdict == want ? 1 : 0;
                if (check.biased) {
                    in.instrument_bias = cko::eval::InstrumentBias{check.bound_log, "sim"};
                }
                kept[effect_pct].second += cko::eval::judge_comparison(in).verdict == want ? 1 : 0;
            }
        }
        std::sort(bounds.begin(), bounds.end());
        std::printf("   case biases -/+%.2f %%: flagged %5.1f %%, median bound %.3f %%", b_pct,
                    share(flagged), bounds.empty() ? 0.0 : bounds[bounds.size() / 2]);
        for (const auto& [effect, firm] : kept) {
            std::printf("; %s firm %.1f -> %.1f %%", fmt_effect(effect).c_str(), share(firm.first),
                        share(firm.second));
        }
        std::printf("\n");
    }
    std::printf("\n");
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
    const bool instance_goals_met = print_instance_figures();
    print_instrument_figures();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return targets_met && instance_goals_met ? 0 : 1;
}
