// Sequential paired comparison: pre-registered looks with Lan–DeMets alpha spending.
#include "cko/stats/sequential.hpp"

#include "cko/stats/alpha_spending.hpp"
#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <tuple>

namespace cko::stats {
namespace {

constexpr double kHighestLookConfidence = 1.0 - 1e-12;

std::vector<double> information_fractions(const SequentialPlan& plan) {
    std::vector<double> fractions;
    for (const std::size_t n : plan.look_sizes()) {
        fractions.push_back(static_cast<double>(n) / static_cast<double>(plan.max_pairs));
    }
    return fractions;
}

std::vector<double> cumulative_alpha(const SequentialPlan& plan) {
    std::vector<double> cumulative;
    for (const double t : information_fractions(plan)) {
        cumulative.push_back(spent_alpha(plan.spending, t, 1.0 - plan.confidence));
    }
    return cumulative;
}

// The per-look levels depend only on the plan; sequential_look runs after every block, so the
// (millisecond) boundary computation is remembered per plan. A small bounded memo, same answers.
std::vector<double> remembered_look_confidence(const SequentialPlan& plan) {
    using Key = std::tuple<std::size_t, std::size_t, std::size_t, double, Spending, bool>;
    constexpr std::size_t kRememberedPlans = 64;
    static std::mutex mutex;
    static std::map<Key, std::vector<double>> remembered;
    const Key key{plan.block,      plan.min_pairs, plan.max_pairs,
                  plan.confidence, plan.spending,  plan.exact_first_look};
    {
        const std::lock_guard lock(mutex);
        if (const auto found = remembered.find(key); found != remembered.end()) {
            return found->second;
        }
    }
    std::vector<double> levels = plan.look_confidence();
    const std::lock_guard lock(mutex);
    if (remembered.size() >= kRememberedPlans) {
        remembered.clear();
    }
    remembered.emplace(key, levels);
    return levels;
}

}  // namespace

std::string_view spending_name(Spending s) noexcept {
    return s == Spending::pocock ? "lan_demets_pocock" : "lan_demets_obrien_fleming";
}

double spent_alpha(Spending s, double information_fraction, double alpha) {
    if (!(information_fraction > 0.0)) {
        return 0.0;
    }
    const double t = std::min(information_fraction, 1.0);
    if (s == Spending::pocock) {
        return alpha * std::log1p((std::numbers::e - 1.0) * t);
    }
    return obrien_fleming_spending(t, alpha);
}

double smallest_exact_p(std::size_t n) {
    // Capped where 2^(1−n) is still a normal double; beyond ~1000 pairs it is 0 for every purpose.
    return std::ldexp(1.0, 1 - static_cast<int>(std::min<std::size_t>(n, 1000)));
}

SequentialPlan SequentialPlan::early_decision(std::size_t min_pairs, std::size_t max_pairs,
                                              double confidence) {
    SequentialPlan plan;
    plan.block = 2;
    plan.min_pairs = min_pairs;
    plan.max_pairs = max_pairs;
    plan.confidence = confidence;
    plan.spending = Spending::pocock;
    plan.exact_first_look = true;
    return plan;
}

void SequentialPlan::validate() const {
    require_confidence(confidence);
    if (block == 0 || min_pairs == 0 || max_pairs < min_pairs) {
        throw Error(ErrorCode::invalid_argument,
                    "a sequential plan needs block >= 1, min_pairs >= 1 and max_pairs >= "
                    "min_pairs, got block " +
                        std::to_string(block) + ", min_pairs " + std::to_string(min_pairs) +
                        ", max_pairs " + std::to_string(max_pairs));
    }
    const std::size_t looks = (max_pairs - min_pairs) / block + 2;
    if (looks > kMaxLooks) {
        throw Error(ErrorCode::invalid_argument, "a sequential plan may have at most " +
                                                     std::to_string(kMaxLooks) +
                                                     " looks; use a larger block");
    }
}

std::vector<std::size_t> SequentialPlan::look_sizes() const {
    validate();
    std::vector<std::size_t> sizes;
    const std::size_t first_block = (min_pairs + block - 1) / block;
    const double alpha = 1.0 - confidence;
    for (std::size_t n = first_block * block; n < max_pairs; n += block) {
        // The first look's level is 1 − α(t_1) exactly; below the smallest exact p no sample of n
        // pairs could stop there, and the alpha it would spend is better spent at the next look.
        const double t = static_cast<double>(n) / static_cast<double>(max_pairs);
        if (exact_first_look && sizes.empty() &&
            spent_alpha(spending, t, alpha) < smallest_exact_p(n)) {
            continue;
        }
        sizes.push_back(n);
    }
    sizes.push_back(max_pairs);
    return sizes;
}

std::vector<double> SequentialPlan::look_confidence() const {
    const std::vector<double> boundaries =
        group_sequential_boundaries(information_fractions(*this), cumulative_alpha(*this));
    std::vector<double> levels;
    levels.reserve(boundaries.size());
    for (const double c : boundaries) {
        levels.push_back(std::isfinite(c) ? 1.0 - 2.0 * normal_upper_tail(c) : 1.0);
    }
    return levels;
}

Json SequentialPlan::to_json() const {
    const std::vector<std::size_t> sizes = look_sizes();
    const std::vector<double> fractions = information_fractions(*this);
    const std::vector<double> cumulative = cumulative_alpha(*this);
    const std::vector<double> levels = look_confidence();
    Json looks = Json::array();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        looks.push_back({{"look", k + 1},
                         {"pairs", sizes[k]},
                         {"information_fraction", fractions[k]},
                         {"cumulative_alpha", cumulative[k]},
                         {"confidence", levels[k]}});
    }
    return {{"block", block},
            {"min_pairs", min_pairs},
            {"max_pairs", max_pairs},
            {"confidence", confidence},
            {"spending", spending_name(spending)},
            {"exact_first_look", exact_first_look},
            {"looks", std::move(looks)}};
}

Json LookDecision::to_json() const {
    return {{"stop", stop},
            {"verdict", verdict_name(verdict)},
            {"look", look},
            {"estimate", estimate.to_json()}};
}

LookDecision sequential_look(std::span<const double> d_so_far, const SequentialPlan& plan,
                             double min_effect_pct) {
    const std::vector<std::size_t> sizes = plan.look_sizes();
    const std::size_t n = d_so_far.size();
    if (n > plan.max_pairs) {
        throw Error(ErrorCode::invalid_argument, "sequential look with " + std::to_string(n) +
                                                     " pairs, above max_pairs " +
                                                     std::to_string(plan.max_pairs));
    }
    LookDecision decision;
    const auto at = std::find(sizes.begin(), sizes.end(), n);
    if (at == sizes.end()) {
        decision.estimate = estimate_paired(d_so_far, plan.confidence);
        return decision;  // not a look: no decision may be taken here
    }
    const auto index = static_cast<std::size_t>(at - sizes.begin());
    decision.look = index + 1;
    // A look that spends (almost) no alpha asks for confidence 1, which no finite sample reaches:
    // the clamped level leaves that look inconclusive.
    const double level = std::min(remembered_look_confidence(plan)[index], kHighestLookConfidence);
    decision.estimate = estimate_paired(d_so_far, level);
    decision.verdict = classify(decision.estimate, min_effect_pct, plan.min_pairs);
    decision.stop = is_decisive(decision.verdict) || n == plan.max_pairs;
    return decision;
}

}  // namespace cko::stats
