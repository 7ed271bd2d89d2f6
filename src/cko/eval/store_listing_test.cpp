// Listing an artifact root and finding its records by id (`cko ls`, `cko show`, the MCP server's
// resources): what a listing holds and in which order, a dead owner's invocation declared `lost`
// only where the caller may write, every id form, and the records as they are stored.
#include "cko/eval/store_listing.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <fstream>

namespace cko::eval {
namespace {
namespace fs = std::filesystem;

class StoreListingTest : public testing::FrozenTargetTest {
protected:
    // An invocation whose owner (a forked child standing in for a cko process) ended without a
    // result.
    std::string orphan() {
        const fs::path id_file = dir_ / "orphan-id";
        const pid_t owner = ::fork();
        if (owner == 0) {
            const run::Invocation inv =
                run::Invocation::create(*store_, "screen", Json::object(), run::Limits{}, nullptr);
            std::ofstream(id_file) << inv.id();
            ::_exit(0);
        }
        int status = 0;
        ::waitpid(owner, &status, 0);
        std::string id;
        std::ifstream(id_file) >> id;
        return id;
    }
    static bool contains(const std::vector<std::string>& v, const std::string& x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    }
};

TEST_F(StoreListingTest, AListingHoldsTheTargetExperimentsSnapshotsAndInvocationsOldestFirst) {
    const std::string exp = experiment("kernel v1\n");
    const std::string first = planted("screen", exp, "improved", original_digest());
    const std::string second = planted("confirm", exp, "inconclusive", original_digest());

    const StoreListing listing = list_store(*store_, true);
    EXPECT_EQ(listing.root, store_->root().string());
    EXPECT_EQ(listing.target, target_->record().id);
    EXPECT_EQ(listing.experiments, std::vector<std::string>{exp});
    EXPECT_TRUE(contains(listing.snapshots, original_digest()));
    EXPECT_TRUE(contains(listing.snapshots, digest_of(exp)));
    ASSERT_GE(listing.invocations.size(), 2u);
    for (std::size_t i = 1; i < listing.invocations.size(); ++i) {
        EXPECT_LE(listing.invocations[i - 1].started_unix_ns,
                  listing.invocations[i].started_unix_ns);
    }
    const ListedInvocation& last = listing.invocations.back();
    EXPECT_EQ(last.id, second);
    EXPECT_EQ(listing.invocations[listing.invocations.size() - 2].id, first);
    ASSERT_TRUE(last.status.has_value());
    EXPECT_EQ(last.status->kind, "confirm");
    EXPECT_EQ(last.verdict, "inconclusive");
    // The document `cko ls --json` prints: each invocation's status with its verdict and start.
    const Json doc = listing.to_json();
    EXPECT_EQ(doc.at("target"), target_->record().id);
    EXPECT_EQ(doc.at("invocations").back().at("verdict"), "inconclusive");
    EXPECT_EQ(doc.at("invocations").back().at("state"), "succeeded");
    EXPECT_EQ(doc.at("invocations").back().at("started_unix_ns"), last.started_unix_ns);
}

// A read never writes: without declare_lost the orphan is listed as it stands (running, owner
// gone); listing is the step that declares it `lost` only where the caller allows writes.
TEST_F(StoreListingTest, ADeadOwnersInvocationIsDeclaredLostOnlyWhereTheListingMayWrite) {
    const std::string id = orphan();
    const auto find = [&](const StoreListing& l) {
        const auto it = std::find_if(l.invocations.begin(), l.invocations.end(),
                                     [&](const ListedInvocation& i) { return i.id == id; });
        EXPECT_NE(it, l.invocations.end());
        return *it;
    };
    const ListedInvocation read = find(list_store(*store_, false));
    ASSERT_TRUE(read.status.has_value());
    EXPECT_EQ(read.status->state, run::InvocationState::running);
    EXPECT_FALSE(read.status->owner_alive);
    EXPECT_FALSE(read.verdict.has_value());
    EXPECT_FALSE(store_->exists(store::layout::invocation_result(id)));

    const ListedInvocation declared = find(list_store(*store_, true));
    EXPECT_EQ(declared.status->state, run::InvocationState::lost);
    EXPECT_TRUE(store_->exists(store::layout::invocation_result(id)));
}

TEST_F(StoreListingTest, AFolderThatHoldsNoStoreListsNothing) {
    EXPECT_FALSE(list_store_at(dir_, true).has_value());
    const auto listing = list_store_at(store_->root(), false);
    ASSERT_TRUE(listing.has_value());
    EXPECT_EQ(listing->target, target_->record().id);
}

TEST_F(StoreListingTest, EveryIdFormResolvesAndAnAmbiguousOrUnknownOneIsRefused) {
    const std::string exp = experiment("kernel v1\n");
    const std::string inv = planted("screen", exp, "improved", original_digest());
    EXPECT_EQ(resolve_record_id(*store_, "target"), "target");
    EXPECT_EQ(resolve_record_id(*store_, "champion"), "champion");
    EXPECT_EQ(resolve_record_id(*store_, inv), inv);
    EXPECT_EQ(resolve_record_id(*store_, exp.substr(0, 8)), exp);
    EXPECT_EQ(resolve_record_id(*store_, original_digest().substr(0, 12)), original_digest());

    std::string message;
    EXPECT_EQ(code_of([&] { (void)resolve_record_id(*store_, "inv-"); }, &message),
              ErrorCode::invalid_argument);  // the freeze's smoke calls and the screen
    EXPECT_NE(message.find("give more characters"), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)resolve_record_id(*store_, "exp-none"); }, &message),
              ErrorCode::not_found);
    EXPECT_NE(message.find("no record \"exp-none\""), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)resolve_record_id(*store_, "../target"); }),
              ErrorCode::unsafe_path);
}

TEST_F(StoreListingTest, ShowGivesEachRecordAsItIsStored) {
    const std::string exp = experiment("kernel v1\n");
    const std::string inv = planted("confirm", exp, "improved", original_digest());
    EXPECT_EQ(show_record(*store_, exp),
              store_->read_record(store::layout::experiment_record(exp)));
    EXPECT_EQ(show_record(*store_, "target"), store_->read_record(store::layout::kTarget));
    EXPECT_EQ(show_record(*store_, "champion"), read_champion(*store_).to_json());
    const Json shown = show_record(*store_, inv.substr(0, 10));
    EXPECT_EQ(shown.at("id"), inv);
    EXPECT_EQ(shown.at("state"), "succeeded");
    EXPECT_EQ(shown.at("request"), store_->read_record(store::layout::invocation_request(inv)));
    EXPECT_EQ(show_record(*store_, original_digest().substr(0, 12)),
              store_->read_record(store::layout::snapshot_manifest(original_digest())));
    const std::string sel = select_champion(*target_, exp, inv).at("id").get<std::string>();
    EXPECT_EQ(show_record(*store_, sel), store_->read_record(store::layout::selection_record(sel)));
}

}  // namespace
}  // namespace cko::eval
