// What an artifact root holds and its records found by id: `cko ls` and `cko show` print these,
// and the MCP server offers them as its resources.
#pragma once

#include "cko/run/invocation.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

// One invocation as a listing shows it: its status, when it started and its verdict; or the error
// that kept it from being read (a listing goes on past a damaged invocation).
struct ListedInvocation {
    std::string id;
    std::int64_t started_unix_ns = 0;  // the result's start, else its creation; 0 if unread
    std::optional<run::InvocationStatus> status;  // none when it could not be read
    std::optional<std::string> verdict;           // once it has a result: its verdict, "" for none
    std::optional<Error> error;                   // why it could not be read

    // status.to_json() with verdict and started_unix_ns, or {id, error}.
    [[nodiscard]] Json to_json() const;
};

struct StoreListing {
    std::string root;
    std::optional<std::string> target;          // the frozen Target's id
    std::vector<std::string> experiments;       // in the order they were frozen
    std::vector<std::string> snapshots;         // store::list_snapshots
    std::vector<ListedInvocation> invocations;  // oldest first (by started_unix_ns)

    // The document `cko ls --json` prints.
    [[nodiscard]] Json to_json() const;
};

// Everything the root holds. With `declare_lost`, listing is the step that declares an invocation
// whose owner died `lost` (run::detect_lost_invocation); without it (a read-only caller) nothing is
// written and such an invocation is listed as it stands.
[[nodiscard]] StoreListing list_store(const store::Store& store, bool declare_lost);

// The listing of the artifact root at `root`, or none when `root` holds no store (no store marker
// there): what the MCP server offers, root by root. A root that is a store but cannot be opened or
// read throws as Store::open and list_store do.
[[nodiscard]] std::optional<StoreListing> list_store_at(const std::filesystem::path& root,
                                                        bool declare_lost);

// The full id of a record from any id form cko prints: target, champion, exp-…, inv-…, sel-…,
// low-…, a snapshot digest, or a unique prefix of any of them (the 12-character short digests).
// Throws invalid_argument when the prefix matches several records (naming them), not_found when it
// matches none.
[[nodiscard]] std::string resolve_record_id(const store::Store& store, const std::string& id);

// The record `id` names (resolve_record_id) as it is stored: an invocation's status with its
// request, an experiment, selection, lowered conclusion, the Target, the champion, or a snapshot's
// manifest (the snapshot checked first). Never writes.
[[nodiscard]] Json show_record(const store::Store& store, const std::string& id);

}  // namespace cko::eval
