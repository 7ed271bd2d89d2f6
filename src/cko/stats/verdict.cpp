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

std::string_view verdict_name(Verdict verdict) noexcept {
    switch (verdict) {
#define CKO_X(name)     \
    case Verdict::name: \
        return #name;
        CKO_VERDICTS(CKO_X)
#undef CKO_X
    }
    return "invalid";
}

std::optional<Verdict> verdict_from_name(std::string_view name) noexcept {
#define CKO_X(enumerator)           \
    if (name == #enumerator) {      \
        return Verdict::enumerator; \
    }
    CKO_VERDICTS(CKO_X)
#undef CKO_X
    return std::nullopt;
}

std::string_view constraint_status_name(ConstraintStatus status) noexcept {
    switch (status) {
#define CKO_X(name)              \
    case ConstraintStatus::name: \
        return #name;
        CKO_CONSTRAINT_STATUSES(CKO_X)
#undef CKO_X
    }
    return "inconclusive";
}

std::optional<ConstraintStatus> constraint_status_from_name(std::string_view name) noexcept {
#define CKO_X(enumerator)                    \
    if (name == #enumerator) {               \
        return ConstraintStatus::enumerator; \
    }
    CKO_CONSTRAINT_STATUSES(CKO_X)
#undef CKO_X
    return std::nullopt;
}

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
    if (high < 0.0) {
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
