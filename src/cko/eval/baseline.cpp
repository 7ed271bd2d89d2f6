// Baseline: per-case median/MAD/CV of the original, then an A/A run giving the resolution.
#include "cko/eval/baseline.hpp"

#include "cko/eval/judge.hpp"
#include "cko/eval/session.hpp"
#include "cko/stats/stats.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <chrono>
#include <random>

namespace cko::eval {

namespace {

// A foreign GPU process (or clocks held low) during a call: the baseline says so and ends, like a
// confirm; its samples are not a resolution of this machine.
struct Contaminated {
    std::vector<std::string> reasons;
};

void require_clean(const Measurement& m) {
    if (!m.contamination.empty()) {
        throw Contaminated{m.contamination};
    }
}

// The baseline's steps, counted in driver calls: each case's calls, then two per case and A/A pair.
// Each step goes to the caller (a terminal, an MCP client) and into the invocation's events, so a
// detached baseline's `status` shows it as a comparison's does.
class CallProgress {
public:
    CallProgress(run::Invocation& inv, const BaselineOptions& options, std::size_t cases,
                 int aa_pairs)
        : inv_(inv),
          options_(options),
          total_(static_cast<double>(cases) *
                 static_cast<double>(options.calls_per_case + 2 * aa_pairs)) {}

    void step(std::string line, int calls) {
        Progress p(std::move(line));
        p.done = done_;
        p.total = total_;
        p.unit = "calls";
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        if (done_ > 0) {
            p.eta_s = elapsed / done_ * (total_ - done_);
        }
        inv_.event("progress", Json{{"unit", "calls"},
                                    {"done", done_},
                                    {"total", total_},
                                    {"elapsed_s", elapsed},
                                    {"expected_s_at_most", elapsed + p.eta_s.value_or(0.0)}});
        if (options_.progress) {
            options_.progress(p);
        }
        done_ += calls;
    }

private:
    run::Invocation& inv_;
    const BaselineOptions& options_;
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    double total_;
    double done_ = 0;
};

}  // namespace

std::uint64_t seed_from(const std::string& text) {
    return std::stoull(sha256_hex(text).substr(0, 15), nullptr, 16);
}

namespace {

// Each case's calls of the original: its samples, median, MAD and CV.
Json measure_cases(const TargetSpec& spec, const BaselineOptions& options, Session& session,
                   CallProgress& progress, const run::Invocation& inv) {
    Json cases = Json::object();
    for (const auto& id : spec.case_ids) {
        std::vector<double> samples;
        for (int c = 0; c < options.calls_per_case; ++c) {
            progress.step(
                fmt::format("baseline: case {} call {}/{}", id, c + 1, options.calls_per_case), 1);
            if (inv.cancelled()) {
                throw Error(ErrorCode::interrupted, "baseline cancelled");
            }
            const Measurement m = session.measure_single(id, "reference");
            if (m.error) {
                throw *m.error;
            }
            require_clean(m);
            const auto& s = m.subjects.at("reference");
            if (!s.correct) {
                throw Error(ErrorCode::invalid_spec,
                            fmt::format("the original failed its correctness rule on case {} "
                                        "during the baseline "
                                        "(value {}); the Target cannot be measured",
                                        id, s.correctness_value));
            }
            samples.insert(samples.end(), s.primary.begin(), s.primary.end());
        }
        cases[id] = Json{{"samples", samples},
                         {"median", stats::median(samples)},
                         {"mad", stats::mad(samples)},
                         {"cv", stats::cv(samples)},
                         {"unit", spec.primary.unit}};
    }
    return cases;
}

// The A/A pairs' d, pooled ([pair]) and per case ([case][pair]), with the orders they ran in.
struct AaPairs {
    std::vector<double> d;
    std::vector<std::vector<double>> case_d;
    std::map<std::string, std::vector<std::vector<double>>> constraint_d;  // name -> [pair][case]
    Json orders = Json::array();
};

// One metric's A/A estimates from its [pair][case] d: pooled as a comparison pools a round
// (pooled_rounds) and, for more than one case, each case's.
AaEstimates aa_estimates(const std::vector<std::string>& case_ids,
                         const std::vector<std::vector<double>>& rounds, double confidence) {
    AaEstimates aa;
    aa.pooled = stats::estimate_paired(pooled_rounds(rounds), confidence);
    for (std::size_t c = 0; case_ids.size() > 1 && c < case_ids.size(); ++c) {
        std::vector<double> column;
        for (const auto& round : rounds) {
            column.push_back(round[c]);
        }
        aa.cases.emplace_back(case_ids[c], stats::estimate_paired(column, confidence));
    }
    return aa;
}

// A/A: the original against itself, paired exactly like a real comparison: a pair is a round
// over every case, and its d is the mean over the cases.
AaPairs measure_aa_pairs(const TargetSpec& spec, Session& session, CallProgress& progress,
                         const run::Invocation& inv, int aa_pairs, std::uint64_t seed) {
    std::mt19937_64 order_rng(seed);
    AaPairs aa;
    aa.case_d.resize(spec.case_ids.size());
    for (int i = 0; i < aa_pairs; ++i) {
        double sum = 0;
        for (std::size_t c = 0; c < spec.case_ids.size(); ++c) {
            const std::string& case_id = spec.case_ids[c];
            progress.step(
                fmt::format("baseline: A/A pair {}/{}, case {}", i + 1, aa_pairs, case_id), 2);
            if (inv.cancelled()) {
                throw Error(ErrorCode::interrupted, "baseline cancelled");
            }
            const bool candidate_first = (order_rng() & 1U) != 0;
            aa.orders.push_back(candidate_first ? "BA" : "AB");
            const Measurement m =
                session.measure_pair(case_id, candidate_first,
                                     seed + static_cast<std::uint64_t>(i) * spec.case_ids.size() +
                                         static_cast<std::uint64_t>(c));
            if (m.error) {
                throw *m.error;
            }
            require_clean(m);
            const double case_aa = stats::paired_log_ratio(
                m.subjects.at("reference").primary_median(),
                m.subjects.at("candidate").primary_median(), spec.primary.direction);
            aa.case_d[c].push_back(case_aa);
            sum += case_aa;
            for (const auto& con : spec.constraints) {  // each constraint's own A/A d
                auto& rounds = aa.constraint_d[con.name];
                if (c == 0) {
                    rounds.emplace_back();
                }
                rounds.back().push_back(stats::paired_log_ratio(
                    stats::median(m.subjects.at("reference").constraints.at(con.name)),
                    stats::median(m.subjects.at("candidate").constraints.at(con.name)),
                    con.direction));
            }
        }
        aa.d.push_back(sum / static_cast<double>(spec.case_ids.size()));
    }
    return aa;
}

// The A/A pairs judged: their estimate and verdict, the instrument check and the resolution.
void judge_aa(const TargetSpec& spec, const AaPairs& pairs, OperationEnd& end) {
    const std::vector<double>& d = pairs.d;
    const stats::Resolution resolution = stats::resolution_from_aa(
        d, spec.confidence, spec.minimum_effect_pct, static_cast<std::size_t>(spec.max_pairs));
    const stats::PairedEstimate aa = stats::estimate_paired(d, spec.confidence);
    const stats::Verdict aa_verdict =
        stats::classify(aa, spec.minimum_effect_pct, static_cast<std::size_t>(spec.min_pairs));
    end.outputs["aa"] = Json{{"pairs", d.size()},
                             {"d", d},
                             {"orders", pairs.orders},
                             {"estimate", aa.to_json()},
                             {"verdict", stats::verdict_name(aa_verdict)}};
    // The two subjects are separately materialized copies of the original (the session's
    // workspace holds one per role), so an instance effect (placement, build) shows here. An
    // interval that excludes zero, pooled or of one case, is a biased instrument; later
    // verdicts read it from this record (compare_context.cpp).
    std::vector<std::pair<std::string, stats::PairedEstimate>> per_case;
    if (spec.case_ids.size() > 1) {
        Json per_case_json = Json::object();
        for (std::size_t c = 0; c < spec.case_ids.size(); ++c) {
            per_case.emplace_back(spec.case_ids[c],
                                  stats::estimate_paired(pairs.case_d[c], spec.confidence));
            per_case_json[spec.case_ids[c]] = per_case.back().second.to_json();
        }
        end.outputs["aa"]["per_case"] = per_case_json;
    }
    std::map<std::string, AaEstimates> constraint_aa;
    for (const auto& [name, rounds] : pairs.constraint_d) {
        constraint_aa[name] = aa_estimates(spec.case_ids, rounds, spec.confidence);
    }
    const InstrumentCheck check = check_instrument(aa, per_case, constraint_aa);
    end.outputs["instrument_check"] = check.to_json();
    if (check.biased) {
        end.reason += "; " + check.statement;
    }
    end.outputs["resolution"] = resolution.to_json();
    end.verdict = std::string(stats::verdict_name(aa_verdict));
}

// The baseline's measuring in its open invocation; contamination ends it `invalid` (exit 1).
void measure_baseline(const Target& target, const BaselineOptions& options, int aa_pairs,
                      std::uint64_t seed, run::Invocation& inv, OperationEnd& end) {
    const TargetSpec& spec = target.spec();
    end.outputs = Json{{"target", target.id()}, {"seed", seed}};
    end.reason = "baseline and A/A resolution measured";
    try {
        const auto changes = target.driver_changes();
        if (!changes.empty()) {
            throw driver_changed_error(changes, "nothing was measured");
        }
        const auto problems = target.environment_problems();
        if (!problems.empty()) {
            throw Error(
                ErrorCode::environment_mismatch,
                fmt::format("measurements here would be invalid: {}", fmt::join(problems, "; ")),
                Json{{"problems", problems}});
        }
        const store::Snapshot original = target.original();
        Session session(target, inv, original, "original", original, "original-copy");
        CallProgress progress(inv, options, spec.case_ids.size(), aa_pairs);
        end.outputs["cases"] = measure_cases(spec, options, session, progress, inv);
        judge_aa(spec, measure_aa_pairs(spec, session, progress, inv, aa_pairs, seed), end);
        // The driver runs as the store's owner: a target.json it rewrote meanwhile fails the
        // baseline (tampered_record) instead of leaving a successful one behind.
        target.store().verify_ledgered(store::layout::kTarget);
    } catch (const Contaminated& c) {
        end.reason =
            fmt::format("the measurement window was contaminated: {}", fmt::join(c.reasons, "; "));
        end.outputs["verdict"] = "invalid";
        end.outputs["contamination"] = c.reasons;
        end.outputs["reason"] = end.reason;
        end.verdict = "invalid";
        end.exit_code = 1;
    }
}

}  // namespace

OperationOutcome run_baseline(const Target& target, const BaselineOptions& options,
                              const Announce& announce) {
    const TargetSpec& spec = target.spec();
    if (spec.diagnostic) {
        throw Error(ErrorCode::not_eligible, "a diagnostic Target has no workload to baseline");
    }
    if (options.calls_per_case < 1) {
        throw Error(ErrorCode::invalid_argument, "--calls-per-case must be at least 1",
                    Json{{"field", "calls_per_case"}});
    }
    require_budget(target, 0, InvocationLedger::read(target.store()));
    const int aa_pairs =
        options.aa_pairs > 0 ? options.aa_pairs : std::min(spec.max_pairs, 2 * spec.min_pairs);
    const std::uint64_t seed =
        options.seed != 0 ? options.seed : seed_from(target.id() + "/baseline");
    const InvocationSpec invocation{
        "baseline",
        Json{{"target", target.id()},
             {"calls_per_case", options.calls_per_case},
             {"aa_pairs", aa_pairs},
             {"seed", seed},
             {"driver_mode", spec.serves_sessions() ? "session" : "process"}},
        limits_for(spec), options.cancel};
    return run_in_invocation(target.store(), invocation, announce,
                             [&](run::Invocation& inv, OperationEnd& end) {
                                 measure_baseline(target, options, aa_pairs, seed, inv, end);
                             });
}

}  // namespace cko::eval
