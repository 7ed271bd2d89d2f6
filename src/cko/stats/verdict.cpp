// Verdicts of a paired comparison and constraint statuses, with the rule of DESIGN.md §6.
#include "cko/stats/verdict.hpp"

#include "cko/util/error.hpp"

#include <cmath>
#include <string>

namespace cko::stats {
namespace {

double tolerance_as_log(double pct, const char* what) {
    if (!(std::isfinite(pct) && pct >= 0.0)) {
        throw Error(
            ErrorCode::invalid_argument,
            std::string(what) + " must be a finite percentage >= 0, got " + std::to_string(pct));
    }
    return pct_to_log(pct);
}

bool has_enough_evidence(const PairedEstimate& estimate, std::size_t min_pairs) {
    return estimate.n >= min_pairs && estimate.confidence_reached();
}

}  // namespace

Verdict classify(const PairedEstimate& estimate, double min_effect_pct, std::size_t min_pairs) {
    const double m = tolerance_as_log(min_effect_pct, "min_effect_pct");
    if (!has_enough_evidence(estimate, min_pairs)) {
        return Verdict::inconclusive;
    }
    const double low = estimate.ci_low;
    const double high = estimate.ci_high;
    if (low >= m && low > 0.0) {
        return Verdict::improved;
    }
    // A regression counts only beyond the same practical threshold as an improvement: an
    // interval inside (−m, 0) is an instance effect (placement, build) too small to matter, not a
    // slowdown (docs/statistics.md §4, issue [18]).
    if (high < -m) {
        return Verdict::regressed;
    }
    if (low > 0.0 && high < m) {
        return Verdict::below_minimum;
    }
    if (-m < low && high < m) {
        return Verdict::equivalent;
    }
    return Verdict::inconclusive;
}

ConstraintStatus classify_constraint(const PairedEstimate& estimate, double max_regression_pct,
                                     std::size_t min_pairs) {
    const double tolerance = tolerance_as_log(max_regression_pct, "max_regression_pct");
    if (!has_enough_evidence(estimate, min_pairs)) {
        return ConstraintStatus::inconclusive;
    }
    if (estimate.ci_high < -tolerance) {
        return ConstraintStatus::regressed;
    }
    if (estimate.ci_low >= -tolerance) {
        return ConstraintStatus::ok;
    }
    return ConstraintStatus::inconclusive;
}

bool is_decisive(Verdict verdict) noexcept {
    return verdict == Verdict::improved || verdict == Verdict::regressed ||
           verdict == Verdict::equivalent || verdict == Verdict::below_minimum;
}

}  // namespace cko::stats
