// Measurement resolution from an A/A run: noise of d, minimum detectable effect, pairs needed.
#include "cko/stats/resolution.hpp"

#include "cko/stats/descriptive.hpp"
#include "cko/stats/normal.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cko::stats {
namespace {

// Standard-error inflation of Hodges–Lehmann relative to the mean under normal noise: √(π/3).
const double kRankInflation = std::sqrt(std::numbers::pi / 3.0);
// pairs_needed is reported up to this; beyond it the answer is "far too many" anyway.
constexpr double kPairsCeiling = 1e9;

double power_multiplier(double confidence) {
    return normal_quantile(1.0 - (1.0 - confidence) / 2.0) + normal_quantile(kResolutionPower);
}

std::string describe(const Resolution& r) {
    const bool robust = r.noise_robust_sd > 0.0;
    std::string sentence = fmt::format(
        "A/A noise of the paired log ratio is {:.3g} % ({}) over {} pairs; at {:.4g} % "
        "confidence {} pairs detect an effect of {:.3g} % with {:.0f} % power",
        100.0 * (robust ? r.noise_robust_sd : r.noise_sd),
        robust ? fmt::format("robust SD; plain SD {:.3g} %", 100.0 * r.noise_sd)
               : std::string("plain SD; the MAD is 0"),
        r.n, 100.0 * r.confidence, r.n, r.mde_pct, 100.0 * kResolutionPower);
    if (r.resolvable) {
        return sentence + fmt::format(
                              "; resolving the minimum effect {:.3g} % needs {} pairs, "
                              "within max_pairs {}.",
                              r.min_effect_pct, r.pairs_needed, r.max_pairs);
    }
    return sentence +
           fmt::format(
               "; the minimum effect {:.3g} % is below what max_pairs {} can resolve: it "
               "needs {} pairs, and {} pairs only detect {:.3g} %. Raise the minimum "
               "effect or max_pairs, or reduce the noise.",
               r.min_effect_pct, r.max_pairs, r.pairs_needed, r.max_pairs, r.mde_pct_at_max_pairs);
}

}  // namespace

double minimum_detectable_effect(double noise_sd, std::size_t pairs, double confidence) {
    require_confidence(confidence);
    if (pairs == 0 || !(noise_sd >= 0.0) || !std::isfinite(noise_sd)) {
        throw Error(ErrorCode::invalid_argument,
                    "minimum detectable effect needs pairs >= 1 and a finite noise >= 0");
    }
    return power_multiplier(confidence) * noise_sd * kRankInflation /
           std::sqrt(static_cast<double>(pairs));
}

std::size_t smallest_resolving_pairs(double confidence) {
    require_confidence(confidence);
    std::size_t n = 1;
    while (2.0 * std::ldexp(1.0, -static_cast<int>(n)) > 1.0 - confidence) {
        ++n;
    }
    return n;
}

Json Resolution::to_json() const {
    return {{"n", n},
            {"noise_sd", noise_sd},
            {"noise_robust_sd", noise_robust_sd},
            {"mde_pct", mde_pct},
            {"mde_pct_at_max_pairs", mde_pct_at_max_pairs},
            {"pairs_needed", pairs_needed},
            {"resolvable", resolvable},
            {"confidence", confidence},
            {"power", kResolutionPower},
            {"min_effect_pct", min_effect_pct},
            {"max_pairs", max_pairs},
            {"mde_formula", "(z_{1-alpha/2} + z_{power}) * sigma * sqrt(pi/3) / sqrt(n)"},
            {"statement", statement}};
}

Resolution resolution_from_aa(std::span<const double> d_aa, double confidence,
                              double min_effect_pct, std::size_t max_pairs) {
    require_confidence(confidence);
    if (d_aa.size() < 2) {
        throw Error(ErrorCode::invalid_argument,
                    "resolution needs at least 2 A/A pairs, got " + std::to_string(d_aa.size()));
    }
    require_finite(d_aa, "A/A differences d");
    if (!(std::isfinite(min_effect_pct) && min_effect_pct > 0.0) || max_pairs == 0) {
        throw Error(ErrorCode::invalid_argument,
                    "resolution needs min_effect_pct > 0 and max_pairs >= 1");
    }
    Resolution r;
    r.n = d_aa.size();
    r.confidence = confidence;
    r.min_effect_pct = min_effect_pct;
    r.max_pairs = max_pairs;
    r.noise_sd = sample_sd(d_aa);
    r.noise_robust_sd = robust_sd(d_aa);
    const double sigma = r.noise_robust_sd > 0.0 ? r.noise_robust_sd : r.noise_sd;
    r.mde_pct = log_to_pct(minimum_detectable_effect(sigma, r.n, confidence));
    r.mde_pct_at_max_pairs = log_to_pct(minimum_detectable_effect(sigma, max_pairs, confidence));
    const double m = pct_to_log(min_effect_pct);
    const double ratio = power_multiplier(confidence) * sigma * kRankInflation / m;
    const double needed = std::min(std::ceil(ratio * ratio), kPairsCeiling);
    r.pairs_needed =
        std::max(static_cast<std::size_t>(needed), smallest_resolving_pairs(confidence));
    r.resolvable = r.pairs_needed <= max_pairs;
    r.statement = describe(r);
    return r;
}

}  // namespace cko::stats
