// Tests of the eval layer: a Target frozen in a scratch dir, driven by tests/cli/fake_driver.py.
#pragma once

#include "cko/eval/champion.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/eval/target.hpp"
#include "cko/run/invocation.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cko::eval::testing {
namespace fs = std::filesystem;

// A CPU-only map (no GPU busy time): item "gemm" exposes 200 of 1000 ns and 150 of 500 ns.
// `question`: the one it is meant to answer ("" none). The first window recorded all of its time;
// the second all but `unobserved_in_second` ns (nullopt: it states no coverage).
inline std::string stored_map(const store::Store& store, const std::string& exp,
                              const std::string& subject, const std::string& question = "",
                              std::optional<std::int64_t> unobserved_in_second = 0) {
    const auto coverage = [](std::int64_t duration, std::int64_t unobserved) {
        return Json{{"recorded_ns", duration - unobserved},
                    {"unobserved_ns", unobserved},
                    {"recorded_pct", 100.0 * static_cast<double>(duration - unobserved) /
                                         static_cast<double>(duration)}};
    };
    const Json items0 =
        Json::array({Json{{"kind", "kernel"}, {"name", "gemm"}, {"exposed_ns", 200}},
                     Json{{"kind", "annotation"}, {"name", "layer"}, {"exposed_ns", 30}}});
    const Json items1 =
        Json::array({Json{{"kind", "kernel"}, {"name", "gemm"}, {"exposed_ns", 150}}});
    Json second{{"name", "layer"},
                {"occurrence", 1},
                {"duration_ns", 500},
                {"gpu", {{"busy_ns", 0}}},
                {"items", items1}};
    if (unobserved_in_second) {
        second["coverage"] = coverage(500, *unobserved_in_second);
    }
    const Json map{
        {"format_version", "cko/map-v1"},
        {"parts", Json::array({Json{{"source", "t.json"},
                                    {"windows", Json::array({Json{{"name", "layer"},
                                                                  {"occurrence", 0},
                                                                  {"duration_ns", 1000},
                                                                  {"gpu", {{"busy_ns", 0}}},
                                                                  {"coverage", coverage(1000, 0)},
                                                                  {"items", items0}},
                                                             second})}}})}};
    const Json sources = Json::array({Json{{"tool", "kineto"}, {"tool_version", "2.11.0"}}});
    ProfileEvidence evidence{"map", map, sources, exp, subject, Json()};
    evidence.question = question;
    return keep_profile(store, evidence).ref.id;
}

// A frozen one-case Target whose driver is tests/cli/fake_driver.py (tests run in the source tree).
class FrozenTargetTest : public cko::test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        freeze("");
    }

    // Freezes a fresh Target (behaviour: the fake driver's, e.g. "ok"); extra lines go in [limits].
    void freeze(const std::string& extra_limits, const std::string& behaviour = "ok",
                const std::string& claim_layer = "kernel") {
        target_.reset();
        store_.reset();
        const fs::path t =
            dir_ / fmt::format("t{}", ++freezes_);  // ("t" + to_string: GCC 12 -Wrestrict)
        put(t / "original" / "k.cu", "kernel v0\n");
        put(t / "cases" / "c.json", "{}");
        const std::string driver =
            (fs::current_path() / "tests" / "cli" / "fake_driver.py").string();
        put(t / "cko.toml", R"([target]
name = "champion-test"
claim_layer = ")" + claim_layer +
                                R"("
original = "original"
change_scope = ["original/k.cu"]
[cases]
dir = "cases"
ids = ["c"]
[driver]
argv = ["python3", ")" + driver +
                                R"(", ")" + behaviour + R"("]
capabilities = ["single_subject"]
env_allow = ["PATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[limits]
command_timeout_s = 60
operation_timeout_s = 600
)" + extra_limits + "\n");
        FreezeOptions o;
        o.spec = t / "cko.toml";
        o.root = t / "art";
        o.probe_tools = false;
        (void)freeze_target(o);
        store_.emplace(store::Store::open(o.root));
        target_.emplace(Target::open(*store_));
    }

    // A candidate directory with its own content, frozen as an experiment.
    std::string experiment(const std::string& content) {
        const fs::path c = dir_ / fmt::format("cand-{}", ++candidates_);
        put(c / "k.cu", content);
        ExperimentSpec e;
        e.candidate = c;
        e.hypothesis = "h";
        e.mechanism = "m";
        e.failure_closes = "mechanism";
        e.no_falsifier_reason = "test";
        return create_experiment(*target_, e).at("id").get<std::string>();
    }

    std::string digest_of(const std::string& experiment_id) const {
        return load_experiment(*store_, experiment_id).candidate.digest;
    }
    std::string original_digest() const { return target_->record().original->digest; }

    // A finished invocation of `kind` with the outputs the champion rules read (planted, not
    // measured).
    std::string planted(const std::string& kind, const std::string& experiment_id,
                        const std::string& verdict, const std::string& reference_digest,
                        double gpu_seconds = 0) {
        run::Invocation inv = run::Invocation::create(
            *store_, kind, Json{{"experiment_id", experiment_id}}, run::Limits{}, nullptr);
        inv.add_gpu_seconds(gpu_seconds);
        (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                         Json{{"experiment_id", experiment_id},
                              {"verdict", verdict},
                              {"reference", {{"label", "x"}, {"digest", reference_digest}}}});
        return inv.id();
    }

    std::string champion() const {
        return read_champion(*store_).experiment_id.value_or("original");
    }

    // The code of the cko::Error `f` throws (`internal` when it throws none), its message put in
    // `message`.
    static ErrorCode code_of(const std::function<void()>& f, std::string* message = nullptr) {
        const cko::test::CaughtError e = cko::test::error_thrown_by(f);
        if (e && message != nullptr) {
            *message = e->what();
        }
        return e->code();
    }
    // The field the cko::Error `f` throws names ("(did not throw)" when it throws none), its code
    // put in `code`.
    static std::string field_of(const std::function<void()>& f, ErrorCode* code = nullptr) {
        const cko::test::CaughtError e = cko::test::error_thrown_by(f);
        if (!e) {
            return "(did not throw)";
        }
        if (code != nullptr) {
            *code = e->code();
        }
        return e->details().value("field", "");
    }

    std::optional<store::Store> store_;
    std::optional<Target> target_;
    int freezes_ = 0;
    int candidates_ = 0;
};

}  // namespace cko::eval::testing
