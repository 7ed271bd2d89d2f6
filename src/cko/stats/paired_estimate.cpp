// Paired effect estimation on log ratios: Hodges–Lehmann, Wilcoxon/sign intervals, pooling.
#include "cko/stats/paired_estimate.hpp"

#include "cko/stats/descriptive.hpp"
#include "cko/stats/signed_rank.hpp"
#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace cko::stats {
namespace {

// Slack for comparing achieved with requested confidence (both are sums of doubles).
constexpr double kConfidenceSlack = 1e-9;

Json number_or_null(double x) {
    return std::isfinite(x) ? Json(x) : Json(nullptr);
}

}  // namespace

void require_confidence(double confidence) {
    if (!(confidence > 0.5 && confidence < 1.0)) {
        throw Error(
            ErrorCode::invalid_argument,
            "confidence must lie strictly between 0.5 and 1, got " + std::to_string(confidence));
    }
}

double paired_log_ratio(double reference, double candidate, Direction direction) {
    if (!(std::isfinite(reference) && reference > 0.0 && std::isfinite(candidate) &&
          candidate > 0.0)) {
        throw Error(ErrorCode::invalid_argument,
                    "paired log ratio needs finite positive values, got reference " +
                        std::to_string(reference) + " and candidate " + std::to_string(candidate),
                    {{"reference", std::isfinite(reference) ? Json(reference) : Json(nullptr)},
                     {"candidate", std::isfinite(candidate) ? Json(candidate) : Json(nullptr)}});
    }
    const double better = direction == Direction::lower ? reference : candidate;
    const double worse = direction == Direction::lower ? candidate : reference;
    const double ratio = better / worse;
    // The quotient is correctly rounded, so log(ratio) keeps small effects accurate; only when it
    // over- or underflows do we fall back to the difference of logs.
    if (std::isfinite(ratio) && ratio > 0.0) {
        return std::log(ratio);
    }
    return std::log(better) - std::log(worse);
}

double log_to_pct(double x) {
    return 100.0 * std::expm1(x);
}

double pct_to_log(double pct) {
    if (!(std::isfinite(pct) && pct > -100.0)) {
        throw Error(
            ErrorCode::invalid_argument,
            "a percentage effect must be finite and above -100, got " + std::to_string(pct));
    }
    return std::log1p(pct / 100.0);
}

bool PairedEstimate::confidence_reached() const {
    return n > 0 && achieved_confidence + kConfidenceSlack >= confidence;
}

Json PairedEstimate::to_json() const {
    Json j = {
        {"n", n},
        {"confidence", confidence},
        {"achieved_confidence", number_or_null(achieved_confidence)},
        {"confidence_reached", confidence_reached()},
        {"estimator", "hodges_lehmann"},
        {"interval", exact ? "wilcoxon_signed_rank_exact" : "wilcoxon_signed_rank_normal"},
        {"exact", exact},
        {"sign_achieved_confidence", number_or_null(sign_achieved_confidence)},
    };
    const std::pair<const char*, double> values[] = {
        {"hl", hl},     {"ci_low", ci_low},           {"ci_high", ci_high},
        {"mean", mean}, {"sign_ci_low", sign_ci_low}, {"sign_ci_high", sign_ci_high},
    };
    for (const auto& [name, value] : values) {
        j[name] = number_or_null(value);
        j[std::string(name) + "_pct"] = number_or_null(log_to_pct(value));
    }
    return j;
}

PairedEstimate estimate_paired(std::span<const double> d, double confidence) {
    require_confidence(confidence);
    require_finite(d, "paired differences d");
    PairedEstimate estimate;
    estimate.n = d.size();
    estimate.confidence = confidence;
    if (d.empty()) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        estimate.hl = estimate.ci_low = estimate.ci_high = estimate.mean = nan;
        estimate.sign_ci_low = estimate.sign_ci_high = nan;
        return estimate;
    }
    std::vector<double> sorted(d.begin(), d.end());
    std::sort(sorted.begin(), sorted.end());
    const RankInterval wilcoxon = wilcoxon_signed_rank_interval(sorted, confidence);
    const RankInterval sign = sign_test_interval(sorted, confidence);
    estimate.achieved_confidence = wilcoxon.achieved_confidence;
    estimate.hl = hodges_lehmann(sorted);
    estimate.ci_low = wilcoxon.low;
    estimate.ci_high = wilcoxon.high;
    estimate.exact = wilcoxon.exact;
    estimate.mean = mean(sorted);
    estimate.sign_ci_low = sign.low;
    estimate.sign_ci_high = sign.high;
    estimate.sign_achieved_confidence = sign.achieved_confidence;
    return estimate;
}

Json PooledEstimate::to_json() const {
    Json cases = Json::array();
    for (const auto& [case_id, estimate] : per_case) {
        Json entry = estimate.to_json();
        entry["case_id"] = case_id;
        cases.push_back(std::move(entry));
    }
    return {{"weighting", "equal_case_weights_per_pair"},
            {"per_case", std::move(cases)},
            {"pooled", pooled.to_json()}};
}

PooledEstimate estimate_pooled(const std::vector<CaseSamples>& cases, double confidence) {
    require_confidence(confidence);
    if (cases.empty()) {
        throw Error(ErrorCode::invalid_argument, "pooling needs at least one case");
    }
    const std::size_t pairs = cases.front().d.size();
    std::set<std::string> seen;
    for (const CaseSamples& c : cases) {
        if (!seen.insert(c.case_id).second) {
            throw Error(ErrorCode::invalid_argument, "case id '" + c.case_id + "' appears twice",
                        {{"case_id", c.case_id}});
        }
        if (c.d.size() != pairs) {
            throw Error(ErrorCode::invalid_argument,
                        "case '" + c.case_id + "' has " + std::to_string(c.d.size()) +
                            " pairs but case '" + cases.front().case_id + "' has " +
                            std::to_string(pairs) + "; pooling needs the same pairs in every case",
                        {{"case_id", c.case_id}});
        }
    }
    PooledEstimate result;
    std::vector<double> per_pair_mean(pairs, 0.0);
    for (const CaseSamples& c : cases) {
        result.per_case.emplace_back(c.case_id, estimate_paired(c.d, confidence));
        for (std::size_t i = 0; i < pairs; ++i) {
            per_pair_mean[i] += c.d[i] / static_cast<double>(cases.size());
        }
    }
    result.pooled = estimate_paired(per_pair_mean, confidence);
    return result;
}

}  // namespace cko::stats
