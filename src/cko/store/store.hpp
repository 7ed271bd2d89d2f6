// The evidence store: one artifact root, create-once canonical records, a ledger, one writer at a time.
#pragma once

#include "cko/util/json.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

namespace cko::store {

// How a record is referenced from another record: its id and the sha256 of its file's bytes.
struct RecordRef {
    std::string id;
    std::string sha256;
    std::string path;  // relative to the root
    [[nodiscard]] Json to_json() const;
};

// An exclusive flock on <root>/.lock, held for one write transaction.
class StoreLock {
public:
    StoreLock(const std::filesystem::path& lock_file, std::chrono::milliseconds wait);
    ~StoreLock();
    StoreLock(const StoreLock&) = delete;
    StoreLock& operator=(const StoreLock&) = delete;

private:
    int fd_ = -1;
};

class Store {
public:
    // Opens an existing root (it must hold store.json). The path is resolved once with realpath.
    [[nodiscard]] static Store open(const std::filesystem::path& root);
    // Creates a new root: the directory must not exist (its parent must). The layout is built in a
    // sibling staging directory and renamed into place, so a failure leaves nothing at `root`.
    [[nodiscard]] static Store create(const std::filesystem::path& root);
    // Opens `root` if it holds a store, creates it if it does not exist.
    [[nodiscard]] static Store open_or_create(const std::filesystem::path& root);

    [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }

    [[nodiscard]] StoreLock lock(std::chrono::milliseconds wait = std::chrono::seconds(30)) const;

    // Writes `record` as canonical JSON at `relative` (create-once; takes the lock) and appends
    // {path, sha256, size} to the ledger that `cko fsck` checks. The record must carry
    // format_version and id.
    RecordRef write_record(std::string_view relative, const Json& record) const;
    // Same, for bytes that are not a JSON record (e.g. a sealed events.jsonl).
    RecordRef write_file(std::string_view relative, std::string_view bytes, std::string_view id) const;
    // Appends the ledger line for a file written in place before (an append-only log, when sealed).
    void ledger_file(std::string_view relative) const;

    // The one mutable file kind (champion/current.json): replaced under the lock only if its
    // current bytes hash to `expected_sha256` ("" = it must not exist yet). Throws cas_conflict
    // naming the digest found. Returns the new bytes' sha256.
    std::string compare_and_swap(std::string_view relative, const std::string& expected_sha256,
                                 const Json& value) const;

    [[nodiscard]] Json read_record(std::string_view relative) const;
    [[nodiscard]] bool exists(std::string_view relative) const;
    [[nodiscard]] std::filesystem::path path_of(std::string_view relative) const;

private:
    explicit Store(std::filesystem::path root) : root_(std::move(root)) {}
    void append_ledger_line(std::string_view relative, const std::string& sha256, std::uint64_t size) const;
    std::filesystem::path root_;
};

inline constexpr std::string_view kStoreMarker = "store.json";
inline constexpr std::string_view kLedger = "ledger.jsonl";

}  // namespace cko::store
