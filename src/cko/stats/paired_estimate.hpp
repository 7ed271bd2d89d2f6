// Paired effect estimation on log ratios: per-pair d, Hodges–Lehmann with Wilcoxon and sign-test
// intervals, and the case-weighted pooled estimate over several cases.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cko::stats {

// Which way is better for the metric (time: lower; throughput: higher); the enumerator name is the
// spec's word (objective.primary.direction, a constraint's direction).
#define CKO_DIRECTIONS(X) X(lower) X(higher)
CKO_CLOSED_ENUM(Direction, CKO_DIRECTIONS, direction_name, direction_from_name)

// d = ln(candidate / reference), signed so that positive means the candidate is better
// (direction lower: ln(reference / candidate)). Both values must be finite and positive.
[[nodiscard]] double paired_log_ratio(double reference, double candidate, Direction direction);

// Effect in percent from a log ratio, exp(x) − 1 (×100), and back, ln(1 + pct/100).
[[nodiscard]] double log_to_pct(double x);
[[nodiscard]] double pct_to_log(double pct);

// The location estimate of d and its intervals, all in log units (to_json adds *_pct fields).
// With n = 0 every number is NaN (null in JSON).
struct PairedEstimate {
    std::size_t n = 0;
    double confidence = 0.95;          // requested
    double achieved_confidence = 0.0;  // what the Wilcoxon interval really has
    double hl = 0.0;                   // Hodges–Lehmann estimate (median of Walsh averages)
    double ci_low = 0.0;               // Wilcoxon signed-rank interval
    double ci_high = 0.0;
    bool exact = true;         // exact signed-rank distribution (else normal approx.)
    double mean = 0.0;         // plain mean of d
    double sign_ci_low = 0.0;  // sign-test interval for the median (second opinion)
    double sign_ci_high = 0.0;
    double sign_achieved_confidence = 0.0;

    // True when the interval reaches the requested confidence (n large enough).
    [[nodiscard]] bool confidence_reached() const;
    [[nodiscard]] Json to_json() const;
};

// Estimates the pseudo-median of d. Throws invalid_argument for a non-finite d or a confidence
// outside (0.5, 1).
[[nodiscard]] PairedEstimate estimate_paired(std::span<const double> d, double confidence);

// One case's d values; d[i] must come from pair i, the same pair index in every case.
struct CaseSamples {
    std::string case_id;
    std::vector<double> d;
};

// Per-case estimates plus one pooled estimate in which every case weighs the same. Pooling: for
// each pair i, average d over the cases (cases measured in one call are correlated, so the pair,
// not the pair-case unit, is the independent unit); the pooled estimate is estimate_paired over
// these n per-pair case means. Its mean equals the equal-weight mean of the per-case means.
struct PooledEstimate {
    std::vector<std::pair<std::string, PairedEstimate>> per_case;
    PairedEstimate pooled;
    [[nodiscard]] Json to_json() const;
};

// Throws invalid_argument when there are no cases, a case id repeats, or cases differ in length.
[[nodiscard]] PooledEstimate estimate_pooled(const std::vector<CaseSamples>& cases,
                                             double confidence);

// Throws invalid_argument unless 0.5 < confidence < 1.
void require_confidence(double confidence);

}  // namespace cko::stats
