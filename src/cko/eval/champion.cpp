// Champion selection and restore: explicit, evidence-bound, compare-and-swap.
#include "cko/eval/champion.hpp"

#include "cko/eval/experiment.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/target.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/fault.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace cko::eval {
namespace {

constexpr std::string_view kCurrent = store::layout::kChampionCurrent;

Json invocation_result(const store::Store& store, const std::string& id, const std::string& kind) {
    require_safe_name(id, kind + " id");
    const std::string rel = store::layout::invocation_result(id);
    if (!id.starts_with("inv-") || !store.exists(rel)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("no finished {} invocation {} (see cko ls)", kind, id));
    }
    Json result = store.read_record(rel);
    if (result.value("kind", "") != kind) {
        throw Error(ErrorCode::not_eligible, fmt::format("{} is a {} invocation, not a {}", id,
                                                         result.value("kind", "?"), kind));
    }
    return result;
}

store::SelectionRecord::Previous previous_of(const Champion& c) {
    return {c.experiment_id.value_or("original"), c.digest, c.file_sha256};
}

// Names the selection by its content and swaps the pointer to it; the selection record is written
// only if the swap happens (under the same lock). Returns the record as written.
Json swap_champion(const store::Store& store, const Champion& current,
                   store::SelectionRecord selection) {
    selection.id = content_id("sel", selection.to_json());
    const Json record = selection.to_json();
    const Json experiment = selection.experiment_id ? Json(*selection.experiment_id) : Json();
    store.swap_with_record(kCurrent, current.file_sha256,
                           store::layout::selection_record(selection.id), record,
                           [&](const store::RecordRef& ref) {
                               return Json{{"format_version", "cko/champion-v1"},
                                           {"id", "champion"},
                                           {"experiment_id", experiment},
                                           {"digest", selection.digest},
                                           {"selection", ref.to_json()}};
                           });
    return record;
}

// Why a confirm is not `improved`, when its record knows: a constraint broken on a case (then not
// acceptable by --accept-regression: its constraint lacks accept_per_case, regressed pooled too,
// or the primary was no improvement), or an instrument bias that decided. Empty otherwise.
std::string not_improved_reason(const Json& out) {
    std::string why;
    for (const auto& r : out.value("constraint_regressions", Json::array())) {
        why += fmt::format("; constraint {} regressed on case {}", r.value("constraint", "?"),
                           r.value("case_id", "?"));
    }
    const Json bias = out.value("instrument_bias", Json::object());
    if (bias.value("decides", false)) {
        why += fmt::format("; the biased instrument (±{:.3f} %, {}) decided it: `{}` without it",
                           bias.value("bound_pct", 0.0), bias.value("source", "?"),
                           bias.value("verdict_without_bias", "?"));
    }
    return why;
}

// What regressed on the cases of a `mixed` confirm (outputs `out`) not in `accepted`: "cases b, c
// regressed; constraint p99_ms regressed on case light". Empty when every such case is accepted.
std::string unaccepted_regressions(const Json& out, const std::vector<std::string>& accepted) {
    const auto is_accepted = [&](const std::string& c) {
        return std::find(accepted.begin(), accepted.end(), c) != accepted.end();
    };
    std::vector<std::string> cases;
    for (const auto& c : out.value("regressed_cases", std::vector<std::string>{})) {
        if (!is_accepted(c)) {
            cases.push_back(c);
        }
    }
    std::vector<std::string> parts;
    if (!cases.empty()) {
        parts.push_back(fmt::format("case{} {} regressed", cases.size() == 1 ? "" : "s",
                                    fmt::join(cases, ", ")));
    }
    for (const auto& r : out.value("constraint_regressions", Json::array())) {
        const std::string c = r.value("case_id", "?");
        if (r.value("acceptable", false) && !is_accepted(c)) {
            parts.push_back(
                fmt::format("constraint {} regressed on case {}", r.value("constraint", "?"), c));
        }
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

// The regressed cases a selection by confirm `confirm_id` (outputs `out`) accepts: none for an
// `improved` confirm, each case of a `mixed` one (cases_to_accept: the primary's regressed cases
// and those of acceptable constraint regressions), which must all be among
// `accepted_regressions`. Any other verdict, or an accepted case that did not regress, is refused.
std::vector<std::string> regressions_to_accept(
    const Json& out, const std::string& confirm_id,
    const std::vector<std::string>& accepted_regressions) {
    const std::string verdict = out.value("verdict", "");
    std::vector<std::string> regressed;
    if (verdict == "mixed") {
        regressed = cases_to_accept(out);
        std::vector<std::string> missing;
        for (const auto& c : regressed) {
            if (std::find(accepted_regressions.begin(), accepted_regressions.end(), c) ==
                accepted_regressions.end()) {
                missing.push_back(c);
            }
        }
        if (!missing.empty()) {
            throw Error(
                ErrorCode::not_eligible,
                fmt::format("confirm {} is `mixed`: improved pooled, but {}; selecting it "
                            "needs --accept-regression for each ({})",
                            confirm_id, unaccepted_regressions(out, accepted_regressions),
                            fmt::join(missing, ", ")),
                Json{{"regressed_cases", regressed},
                     {"constraint_regressions", out.value("constraint_regressions", Json::array())},
                     {"field", "accept_regression"}});
        }
    } else if (verdict != "improved") {
        throw Error(
            ErrorCode::not_eligible,
            fmt::format("confirm {} gave `{}`{}; only an `improved` confirm can select a "
                        "champion",
                        confirm_id, verdict.empty() ? "no verdict" : verdict,
                        not_improved_reason(out)),
            Json{{"verdict", verdict},
                 {"constraint_regressions", out.value("constraint_regressions", Json::array())}});
    }
    for (const auto& c : accepted_regressions) {
        if (std::find(regressed.begin(), regressed.end(), c) == regressed.end()) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--accept-regression {}: confirm {} has no regressed case {}",
                                    c, confirm_id, c),
                        Json{{"field", "accept_regression"}});
        }
    }
    return regressed;
}

// Refuses a confirm (outputs `out`) whose reference is not the current champion: a selection must
// beat the current champion.
void require_current_reference(const Json& out, const std::string& confirm_id,
                               const Champion& current) {
    if (out.at("reference").at("digest") != current.digest) {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("confirm {} compared against {}, but the champion is now {}: a "
                                "selection must beat the "
                                "current champion. Freeze a new experiment of the same candidate "
                                "with --base champion "
                                "and confirm that",
                                confirm_id, out.at("reference").value("label", "?"),
                                current.experiment_id.value_or("the original")),
                    Json{{"fix", "cko experiment new --base champion --candidate ..."}});
    }
}

}  // namespace

Json Champion::to_json() const {
    return Json{{"champion", experiment_id ? Json(*experiment_id) : Json("original")},
                {"digest", digest},
                {"current_sha256", file_sha256}};
}

Champion read_champion(const store::Store& store) {
    Champion c;
    if (!store.exists(kCurrent)) {
        const store::TargetRecord target = store::read_target_record(store);
        if (!target.original) {
            throw Error(ErrorCode::not_found,
                        fmt::format("Target {} is diagnostic: it has no original and no champion",
                                    target.id));
        }
        c.digest = target.original->digest;
        return c;
    }
    // One read: the digest the swap will expect is that of the bytes decided on. Hashing the file
    // again could hash a pointer another select/restore wrote meanwhile, and a swap expecting it
    // would pass with a stale `previous` (two selections from one champion).
    store::HashedRecord current = store.read_record_hashed(kCurrent);
    fault_pause("champion-read");
    c.record = std::move(current.value);
    c.file_sha256 = std::move(current.sha256);
    c.digest = c.record.at("digest");
    // The pointer is only as good as the selection record it cites (a hand-edited pointer is
    // refused).
    const Json& sel = c.record.at("selection");
    const store::RecordRef ref{sel.at("id"), sel.at("sha256"), sel.at("path")};
    const store::SelectionRecord selection =
        store::SelectionRecord::from_json(store.read_verified(ref), ref.path);
    const Json selected = selection.experiment_id ? Json(*selection.experiment_id) : Json();
    if (Json(selection.digest) != c.record.at("digest") ||
        selected != c.record.at("experiment_id")) {
        throw Error(ErrorCode::invalid_record,
                    fmt::format("{} names {} but its selection record {} selected {}; the pointer "
                                "was altered (run cko fsck)",
                                kCurrent, c.record.at("digest").dump(), ref.path,
                                Json(selection.digest).dump()));
    }
    if (!c.record.at("experiment_id").is_null()) {
        c.experiment_id = c.record.at("experiment_id").get<std::string>();
    }
    return c;
}

Json select_champion(const Target& target, const std::string& experiment_id,
                     const std::string& confirm_id,
                     const std::vector<std::string>& accepted_regressions) {
    const store::Store& store = target.store();
    const store::ExperimentRecord experiment = load_experiment(store, experiment_id);
    if (experiment.is_control()) {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("{} is an A/A control (its candidate is its base): it checks the "
                                "instrument and can "
                                "never be selected",
                                experiment_id));
    }
    const Json confirm = invocation_result(store, confirm_id, "confirm");
    const Json& out = confirm.at("outputs");
    if (out.value("experiment_id", "") != experiment_id) {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("confirm {} measured {}, not {}", confirm_id,
                                out.value("experiment_id", "?"), experiment_id));
    }
    const std::vector<std::string> regressed =
        regressions_to_accept(out, confirm_id, accepted_regressions);
    const Champion current = read_champion(store);
    require_current_reference(out, confirm_id, current);
    store::SelectionRecord selection;
    selection.experiment_id = experiment_id;
    selection.confirm = store::SelectionRecord::Confirm{
        confirm_id, sha256_file_hex(store.path_of(store::layout::invocation_result(confirm_id)))};
    selection.previous = previous_of(current);
    selection.digest = experiment.candidate.digest;
    selection.accepted_regressions = regressed;
    selection.selected_unix_s = unix_seconds_now();
    return swap_champion(store, current, std::move(selection));
}

Json export_champion(const Target& target, const std::filesystem::path& destination) {
    namespace fs = std::filesystem;
    if (fs::exists(fs::symlink_status(destination))) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} exists; name a new directory to export the champion into",
                                destination.string()),
                    Json{{"field", "to"}});
    }
    const Champion current = read_champion(target.store());
    const store::Snapshot snap = store::load_snapshot(target.store(), current.digest);
    store::materialize_snapshot(target.store(), snap, destination);
    std::size_t files = 0;
    const auto writable = [](const fs::path& p) {
        fs::permissions(p, fs::perms::owner_write, fs::perm_options::add);
    };
    writable(destination);
    if (fs::is_directory(destination)) {
        for (const auto& e : fs::recursive_directory_iterator(destination)) {
            writable(e.path());
            files += e.is_regular_file() ? 1 : 0;
        }
    } else {
        files = 1;
    }
    return Json{
        {"champion", current.experiment_id ? Json(*current.experiment_id) : Json("original")},
        {"digest", current.digest},
        {"destination", destination.string()},
        {"files", files}};
}

Json restore_original(const Target& target, const std::string& audit_id,
                      const std::string& reason) {
    const store::Store& store = target.store();
    const Champion current = read_champion(store);
    if (!current.experiment_id) {
        throw Error(ErrorCode::not_eligible,
                    "the original is already the champion; nothing to restore");
    }
    Json why;
    if (!audit_id.empty()) {
        const Json audit = invocation_result(store, audit_id, "audit");
        const std::string verdict = audit.at("outputs").value("verdict", "");
        if (verdict == "improved") {
            throw Error(ErrorCode::not_eligible,
                        fmt::format("audit {} confirmed the champion (`improved`); restoring needs "
                                    "a failed audit or "
                                    "--reason",
                                    audit_id));
        }
        why = Json{{"audit", audit_id}, {"verdict", verdict}};
    } else if (reason.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "restore needs --audit ID (a failed audit) or --reason TEXT",
                    Json{{"field", "reason"}});
    } else {
        why = Json{{"reason", reason}};
    }
    store::SelectionRecord selection;
    selection.restore = why;
    selection.previous = previous_of(current);
    selection.digest = target.original().digest;
    selection.selected_unix_s = unix_seconds_now();
    return swap_champion(store, current, std::move(selection));
}

}  // namespace cko::eval
