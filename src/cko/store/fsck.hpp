// `cko fsck`: re-hash everything in an artifact root and report what is missing, altered or
// unexpected.
#pragma once

#include "cko/store/store.hpp"

#include <string>
#include <vector>

namespace cko::store {

struct FsckFinding {
    // "altered", "missing", "unparsable", "unledgered", "stale_temp", "extra_file", "torn_tail",
    // "chain_broken", "symlink", "half_made", "champion_unbacked", "relisted"; in a bundle also
    // "redacted" (a note: replaced by its redaction marker, bundle_check.hpp)
    std::string kind;
    std::string path;  // relative to the root
    std::string detail;
    bool damage = false;  // damage makes fsck exit 1; the others are reported only
};

struct FsckReport {
    std::size_t files_checked = 0;
    std::size_t bytes_hashed = 0;
    std::string
        ledger_head;  // sha256 of the ledger's last line: note it to detect a rewritten tail later
    std::vector<FsckFinding> findings;
    // A bundle's summary (id, cko version, store, Target, counts) when a bundle was checked;
    // null for a root.
    Json bundle;
    [[nodiscard]] bool damaged() const;
    [[nodiscard]] Json to_json() const;
    [[nodiscard]] std::string to_text() const;
};

[[nodiscard]] FsckReport fsck_store(const Store& store);

}  // namespace cko::store
