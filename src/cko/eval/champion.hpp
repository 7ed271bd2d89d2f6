// The champion: the one mutable pointer, changed only by explicit select/restore under
// compare-and-swap.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

class Target;

struct Champion {
    std::optional<std::string> experiment_id;  // empty: the original is the champion
    std::string digest;                        // snapshot digest of the champion's code
    std::string file_sha256;                   // sha256 of the bytes parsed into `record`
    Json record;                               // current.json (null if absent; file_sha256 "")
    [[nodiscard]] Json to_json() const;
};

[[nodiscard]] Champion read_champion(const store::Store& store);

// Makes `experiment_id` the champion. Allowed only with a confirm invocation of that experiment
// whose verdict is `improved` and whose reference is the current champion (so two experiments
// confirmed against the same champion cannot both be selected in turn); the pointer is replaced
// by compare-and-swap. Writes champion/selections/<sel-id>.json. Returns the selection record.
// A `mixed` confirm (improved pooled, some case regressed: the primary metric, or a constraint
// whose spec sets accept_per_case) is refused unless every such case is named in
// `accepted_regressions`; the acceptance is recorded in the selection. A control
// experiment (A/A) is never selectable.
Json select_champion(const Target& target, const std::string& experiment_id,
                     const std::string& confirm_id,
                     const std::vector<std::string>& accepted_regressions = {});

// Writes the current champion's files (the original when none was selected) into `destination`,
// which must not exist; the copies are writable (they are the user's now, not evidence).
// Returns {champion, digest, destination, files}.
Json export_champion(const Target& target, const std::filesystem::path& destination);

// Back to the original: needs an audit invocation whose verdict is not `improved`, or a reason.
Json restore_original(const Target& target, const std::string& audit_id, const std::string& reason);

}  // namespace cko::eval
