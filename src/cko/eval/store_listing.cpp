// Listing an artifact root and finding its records by id, for `cko ls`, `cko show` and the MCP
// server's resources.
#include "cko/eval/store_listing.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/store/conclusion_record.hpp"
#include "cko/store/hypothesis_record.hpp"
#include "cko/store/records.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace cko::eval {
namespace fs = std::filesystem;
namespace {

ListedInvocation listed_invocation(const store::Store& s, const std::string& id,
                                   bool declare_lost) {
    ListedInvocation listed;
    listed.id = id;
    try {
        run::InvocationStatus st =
            declare_lost ? run::detect_lost_invocation(s, id) : run::invocation_status(s, id);
        if (st.result.is_object()) {
            listed.started_unix_ns = st.result.value("started_unix_ns", std::int64_t{0});
            listed.verdict = st.result.value("outputs", Json::object()).value("verdict", "");
        } else {
            listed.started_unix_ns = store::read_invocation_record(s, id).created_unix_ns;
        }
        listed.status = std::move(st);
    } catch (const Error& e) {
        listed = ListedInvocation{};
        listed.id = id;
        listed.error = e;
    }
    return listed;
}

}  // namespace

Json ListedInvocation::to_json() const {
    if (!status) {
        return Json{{"id", id}, {"error", error ? error->to_json()["error"] : Json()}};
    }
    Json j = status->to_json();
    if (verdict) {
        j["verdict"] = *verdict;
    }
    j["started_unix_ns"] = started_unix_ns;
    return j;
}

Json StoreListing::to_json() const {
    Json out{{"root", root},
             {"invocations", Json::array()},
             {"experiments", experiments},
             {"snapshots", snapshots}};
    for (const ListedInvocation& inv : invocations) {
        out["invocations"].push_back(inv.to_json());
    }
    if (target) {
        out["target"] = *target;
    }
    return out;
}

StoreListing list_store(const store::Store& s, bool declare_lost) {
    StoreListing listing;
    listing.root = s.root().string();
    for (const auto& id : run::list_invocations(s)) {
        listing.invocations.push_back(listed_invocation(s, id, declare_lost));
    }
    std::stable_sort(listing.invocations.begin(), listing.invocations.end(),
                     [](const ListedInvocation& a, const ListedInvocation& b) {
                         return a.started_unix_ns < b.started_unix_ns;
                     });
    listing.experiments = list_experiments(s);
    listing.snapshots = store::list_snapshots(s);
    if (s.exists(store::layout::kTarget)) {
        listing.target = store::read_target_record(s).id;
    }
    return listing;
}

std::optional<StoreListing> list_store_at(const fs::path& root, bool declare_lost) {
    if (!fs::is_regular_file(root / store::layout::kStoreMarker)) {
        return std::nullopt;
    }
    return list_store(store::Store::open(root), declare_lost);
}

std::string resolve_record_id(const store::Store& s, const std::string& id) {
    require_safe_name(id, "id");
    if (id == "target" || id == "champion") {
        return id;
    }
    std::vector<std::string> candidates;
    const auto consider = [&](const std::string& full) {
        if (full.starts_with(id)) {
            candidates.push_back(full);
        }
    };
    for (const auto& inv : run::list_invocations(s)) {
        consider(inv);
    }
    for (const auto& e : list_experiments(s)) {
        consider(e);
    }
    for (const auto& sel : store::list_selections(s)) {
        consider(sel);
    }
    for (const auto& low : store::list_conclusions(s)) {
        consider(low.id);
    }
    for (const auto& h : store::list_hypotheses(s)) {
        consider(h.id);
    }
    for (const auto& settled : store::list_settlements(s)) {
        consider(settled.id);
    }
    for (const auto& p : list_profiles(s)) {
        consider(p.value("id", ""));
    }
    for (const auto& digest : store::list_snapshots(s)) {
        consider(digest);
    }
    if (candidates.size() == 1) {
        return candidates.front();
    }
    if (candidates.size() > 1) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("\"{}\" matches {} records ({}); give more characters", id,
                                candidates.size(), fmt::join(candidates, ", ")),
                    Json{{"field", "id"}, {"matches", candidates}});
    }
    throw Error(
        ErrorCode::not_found,
        fmt::format("no record \"{}\" in {} (ids: target, champion, exp-…, inv-…, sel-…, low-…, "
                    "hyp-…, hset-…, profile-…, or a snapshot digest or its prefix; see cko ls)",
                    id, s.root().string()),
        Json{{"id", id}});
}

Json show_record(const store::Store& s, const std::string& given) {
    const std::string id = resolve_record_id(s, given);
    if (id.starts_with("inv-")) {
        const auto st = run::invocation_status(s, id);
        Json j = st.to_json();
        // show prints a record as it is stored (the typed readers check it where it is used).
        j["request"] = s.read_record(store::layout::invocation_request(id));
        return j;
    }
    if (id.starts_with("exp-")) {
        return s.read_record(store::layout::experiment_record(id));
    }
    if (id.starts_with("sel-")) {
        return s.read_record(store::layout::selection_record(id));
    }
    if (id.starts_with("low-")) {
        return s.read_record(store::layout::conclusion_record(id));
    }
    if (id.starts_with("hyp-")) {
        return s.read_record(store::layout::hypothesis_record(id));
    }
    if (id.starts_with("hset-")) {
        return s.read_record(store::layout::settlement_record(id));
    }
    if (id.starts_with("profile-")) {
        return load_profile(s, id);
    }
    if (id == "target") {
        return s.read_record(store::layout::kTarget);
    }
    if (id == "champion") {
        return read_champion(s).to_json();
    }
    (void)store::load_snapshot(s, id);
    return s.read_record(store::layout::snapshot_manifest(id));
}

}  // namespace cko::eval
