// The champion rules, in process: only an `improved` confirm of that experiment against the current
// champion selects; restore needs a failed audit or a reason; and the budget rules before a start.
#include "cko/eval/champion.hpp"

#include "cko/eval/experiment.hpp"
#include "cko/eval/session.hpp"
#include "cko/eval/target.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/test_support.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace cko::eval {
namespace {
namespace fs = std::filesystem;

// A frozen one-case Target whose driver is tests/cli/fake_driver.py (tests run in the source tree).
class ChampionTest : public store::testing::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        freeze("");
    }

    void freeze(const std::string& extra_limits, const std::string& extra = "") {
        target_.reset();
        store_.reset();
        const fs::path t = dir_ / ("t" + std::to_string(++freezes_));
        put(t / "original" / "k.cu", "kernel v0\n");
        put(t / "cases" / "c.json", "{}");
        const std::string driver = (fs::current_path() / "tests" / "cli" / "fake_driver.py").string();
        put(t / "cko.toml", R"([target]
name = "champion-test"
claim_layer = "kernel"
original = "original"
change_scope = ["original/k.cu"]
[cases]
dir = "cases"
ids = ["c"]
[driver]
argv = ["python3", ")" + driver + R"(", "ok"]
capabilities = ["single_subject"]
env_allow = ["PATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[limits]
command_timeout_s = 60
operation_timeout_s = 600
)" + extra_limits + "\n" + extra);
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
        const fs::path c = dir_ / ("cand-" + std::to_string(++candidates_));
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
        return load_experiment(*store_, experiment_id).at("candidate").at("digest").get<std::string>();
    }
    std::string original_digest() const { return target_->record().at("original").at("digest").get<std::string>(); }

    // A finished invocation of `kind` with the outputs the champion rules read (planted, not measured).
    std::string planted(const std::string& kind, const std::string& experiment_id, const std::string& verdict,
                        const std::string& reference_digest, double gpu_seconds = 0) {
        run::Invocation inv = run::Invocation::create(*store_, kind, Json{{"experiment_id", experiment_id}}, run::Limits{},
                                                      nullptr);
        inv.add_gpu_seconds(gpu_seconds);
        (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                         Json{{"experiment_id", experiment_id}, {"verdict", verdict},
                              {"reference", {{"label", "x"}, {"digest", reference_digest}}}});
        return inv.id();
    }

    std::string champion() const { return read_champion(*store_).experiment_id.value_or("original"); }

    static ErrorCode code_of(const std::function<void()>& f, std::string* message = nullptr) {
        try {
            f();
        } catch (const Error& e) {
            if (message != nullptr) {
                *message = e.what();
            }
            return e.code();
        }
        return ErrorCode::internal;  // "did not throw"
    }

    std::optional<store::Store> store_;
    std::optional<Target> target_;
    int freezes_ = 0;
    int candidates_ = 0;
};

TEST_F(ChampionTest, OnlyAnImprovedConfirmSelects) {
    const std::string exp = experiment("kernel v1\n");
    for (const char* verdict : {"invalid", "regressed", "equivalent", "below_minimum", "inconclusive"}) {
        const std::string conf = planted("confirm", exp, verdict, original_digest());
        std::string message;
        EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, conf); }, &message), ErrorCode::not_eligible)
            << verdict;
        EXPECT_NE(message.find("only an `improved` confirm"), std::string::npos) << message;
        EXPECT_EQ(champion(), "original") << verdict;
    }
    const std::string good = planted("confirm", exp, "improved", original_digest());
    const Json selection = select_champion(*target_, exp, good);
    EXPECT_EQ(selection.at("experiment_id"), exp);
    EXPECT_EQ(selection.at("confirm").at("id"), good);
    EXPECT_EQ(champion(), exp);
    EXPECT_EQ(read_champion(*store_).digest, digest_of(exp));
}

TEST_F(ChampionTest, AConfirmOfAnotherExperimentOrAScreenDoesNotSelect) {
    const std::string a = experiment("kernel a\n");
    const std::string b = experiment("kernel b\n");
    const std::string conf_b = planted("confirm", b, "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, conf_b); }), ErrorCode::not_eligible);
    const std::string screen_a = planted("screen", a, "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, screen_a); }), ErrorCode::not_eligible);
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, "inv-0000000000000000"); }), ErrorCode::not_found);
    EXPECT_EQ(champion(), "original");
}

TEST_F(ChampionTest, AConfirmAgainstAFormerChampionIsStale) {
    const std::string a = experiment("kernel a\n");
    const std::string b = experiment("kernel b\n");
    const std::string conf_a = planted("confirm", a, "improved", original_digest());
    const std::string conf_b = planted("confirm", b, "improved", original_digest());
    (void)select_champion(*target_, a, conf_a);
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, b, conf_b); }, &message), ErrorCode::not_eligible);
    EXPECT_NE(message.find("confirm again against the current champion"), std::string::npos) << message;
    EXPECT_EQ(champion(), a);
    // Confirmed against the champion as it is now, b may take over.
    const std::string again = planted("confirm", b, "improved", digest_of(a));
    (void)select_champion(*target_, b, again);
    EXPECT_EQ(champion(), b);
}

TEST_F(ChampionTest, RestoreNeedsAFailedAuditOrAReason) {
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, "", "why"); }), ErrorCode::not_eligible);  // nothing to restore
    const std::string a = experiment("kernel a\n");
    (void)select_champion(*target_, a, planted("confirm", a, "improved", original_digest()));
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, "", ""); }), ErrorCode::invalid_argument);
    const std::string passed_audit = planted("audit", "", "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, passed_audit, ""); }), ErrorCode::not_eligible);
    EXPECT_EQ(champion(), a);
    const std::string failed_audit = planted("audit", "", "equivalent", original_digest());
    const Json selection = restore_original(*target_, failed_audit, "");
    EXPECT_EQ(selection.at("restore").at("audit"), failed_audit);
    EXPECT_EQ(champion(), "original");
    EXPECT_EQ(read_champion(*store_).digest, original_digest());
}

TEST_F(ChampionTest, AWallBudgetSpentRefusesTheNextOperation) {
    freeze("wall_seconds_budget = 1000");
    EXPECT_NO_THROW(require_budget(*target_, 10));
    std::string message;
    EXPECT_EQ(code_of([&] { require_budget(*target_, 2000); }, &message), ErrorCode::budget_exhausted);
    EXPECT_NE(message.find("wall seconds are left"), std::string::npos) << message;
}

TEST_F(ChampionTest, ACpuTargetIgnoresTheGpuBudget) {
    freeze("gpu_seconds_budget = 1");
    (void)planted("baseline", "", "equivalent", original_digest(), 50);  // no GPU in the Target: not counted
    EXPECT_NO_THROW(require_budget(*target_, 0));
}

}  // namespace
}  // namespace cko::eval
