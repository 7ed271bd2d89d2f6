// The evidence store: one artifact root, create-once canonical records, a ledger, one writer at a
// time.
#pragma once

#include "cko/store/catalogue.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

class LedgerIndex;

// How a record is referenced from another record: its id and the sha256 of its file's bytes.
struct RecordRef {
    std::string id;
    std::string sha256;
    std::string path;  // relative to the root
    [[nodiscard]] Json to_json() const;
};

// A record and the sha256 of the very bytes it was parsed from (the file is read once), so the
// digest a compare-and-swap later expects is the digest of what the caller decided on.
struct HashedRecord {
    Json value;
    std::string sha256;
};

// One ledger line before it is chained: a file below the root, the sha256 of its bytes, their size.
struct LedgerEntry {
    std::string relative;
    std::string sha256;
    std::uint64_t size = 0;
};

// A file of a WriteBatch (write_batch.hpp): `written` holds the digest and size of the bytes the
// batch wrote there; a file written in place by another has none and is hashed when committed.
struct BatchFile {
    std::string relative;
    std::optional<LedgerEntry> written;
};

// An exclusive flock on <root>/.lock, held for one write transaction.
class StoreLock {
public:
    StoreLock(const std::filesystem::path& lock_file, std::chrono::milliseconds wait);
    ~StoreLock();
    StoreLock(const StoreLock&) = delete;
    StoreLock& operator=(const StoreLock&) = delete;
    StoreLock(StoreLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    StoreLock& operator=(StoreLock&&) = delete;

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

    [[nodiscard]] const std::filesystem::path& root() const noexcept { return tree_.path(); }

    [[nodiscard]] StoreLock lock(std::chrono::milliseconds wait = std::chrono::seconds(30)) const;
    // A lock for one decision that spans several writes (e.g. "confirm-<experiment>": the
    // one-confirm rule is checked and the confirm invocation created while it is held). Lives in
    // <root>/.locks/<name>.lock; independent of lock(), so writes inside it still work.
    [[nodiscard]] StoreLock lock_named(
        std::string_view name, std::chrono::milliseconds wait = std::chrono::seconds(60)) const;

    // Writes `record` as canonical JSON at `relative` (create-once; takes the lock) and appends
    // {path, sha256, size} to the ledger that `cko fsck` checks. The record must carry
    // format_version and id.
    RecordRef write_record(std::string_view relative, const Json& record) const;
    // Same, for bytes that are not a JSON record (e.g. a sealed events.jsonl).
    RecordRef write_file(std::string_view relative, std::string_view bytes,
                         std::string_view id) const;
    // Appends the ledger line for a file written in place before (an append-only log, when sealed),
    // once the file and its directory are durable (WriteBatch::commit).
    void ledger_file(std::string_view relative) const;
    // Same for several files, made durable together, then one append (under the lock) and one
    // fsync of the ledger (WriteBatch::commit). A file that cannot be ledgered throws after the
    // ones before it are.
    void ledger_files(const std::vector<std::string>& relatives) const;

    // The one mutable file kind (champion/current.json): replaced under the lock only if its
    // current bytes hash to `expected_sha256` ("" = it must not exist yet). Throws cas_conflict
    // naming the digest found. Returns the new bytes' sha256.
    std::string compare_and_swap(std::string_view relative, const std::string& expected_sha256,
                                 const Json& value) const;

    // A pointer swap that leaves evidence only when it happens: under one lock, checks that
    // `pointer` still hashes to `expected_sha256` (else cas_conflict and nothing is written),
    // writes `record` create-once at `record_relative` (ledgered; an identical record already
    // there is reused, so a retry after a crash works), then replaces `pointer` with
    // make_pointer(record's ref). Returns the record's ref.
    RecordRef swap_with_record(std::string_view pointer, const std::string& expected_sha256,
                               std::string_view record_relative, const Json& record,
                               const std::function<Json(const RecordRef&)>& make_pointer) const;

    // A directory built completely before it appears: stage_directory makes an empty hidden
    // directory beside `relative`'s final place; publish_directory renames it to `relative`
    // (never replacing) and ledgers the listed files (relative to the new directory). A crash
    // leaves either nothing at `relative` or the whole directory (plus, at worst, a stale
    // staging directory or unledgered files that fsck notes).
    [[nodiscard]] std::filesystem::path stage_directory(std::string_view relative) const;
    void publish_directory(const std::filesystem::path& staging, std::string_view relative,
                           const std::vector<std::string>& ledgered_files) const;

    // Every record read is checked against the ledger (check_ledgered) on the very bytes parsed:
    // a record edited after cko wrote it is refused with tampered_record, never used.
    [[nodiscard]] Json read_record(std::string_view relative) const;
    // read_record of a record that may be absent, named for the caller: not_found "no WHAT ID in
    // ROOT (see SEE)" with the id and path in its details.
    [[nodiscard]] Json read_named_record(const std::string& relative, std::string_view what,
                                         std::string_view id, std::string_view see) const;
    // read_record with the sha256 of the bytes parsed (champion/current.json may be replaced
    // meanwhile: hashing the file in a second read could hash a newer pointer).
    [[nodiscard]] HashedRecord read_record_hashed(std::string_view relative) const;
    // Refuses (tampered_record, naming the file and both digests) when `sha256`, the digest of
    // bytes read from `relative`, differs from the digest the ledger first recorded for it (a file
    // is ledgered once). A path the ledger has no line for passes: the mutable pointer, and a
    // record a crash left unledgered (fsck notes it as `unledgered`).
    void check_ledgered(std::string_view relative, const std::string& sha256) const;
    // check_ledgered on the file's bytes as they are now: an operation that ran a driver re-checks
    // the records it read before the driver ran (a driver runs as the store's owner).
    void verify_ledgered(std::string_view relative) const;
    // Whether the ledger has a line for `relative` (a file cko wrote or adopted).
    [[nodiscard]] bool is_ledgered(std::string_view relative) const;
    // Reads the record `ref` names and checks that its bytes still hash to ref.sha256
    // (invalid_record otherwise): evidence one record cites is never used unverified.
    [[nodiscard]] Json read_verified(const RecordRef& ref) const;
    [[nodiscard]] bool exists(std::string_view relative) const;
    [[nodiscard]] std::filesystem::path path_of(std::string_view relative) const;
    // path_of, after checking on disk that no existing component is a symlink (symlink_refused):
    // nothing the store writes, chmods or hashes through this path can be outside the root.
    [[nodiscard]] std::filesystem::path real_path_of(std::string_view relative) const;
    // The ids of the records in catalogue folder `dir` (through real_path_of), the files named
    // PREFIX-….json, sorted; none when the folder does not exist yet.
    [[nodiscard]] std::vector<std::string> record_ids(std::string_view dir,
                                                      std::string_view prefix) const;

private:
    friend class WriteBatch;
    // `root` is already resolved (realpath); the tree walks every path below it.
    explicit Store(const std::filesystem::path& root);
    void append_ledger_line(std::string_view relative, const std::string& sha256,
                            std::uint64_t size) const;
    void append_ledger_lines(const std::vector<LedgerEntry>& entries) const;
    // The group commit's durable half (write_batch.cpp): every file checked (and hashed unless
    // written by the batch), then the files, each of `directories` (relative; "" the root) and
    // each file's own directory made durable, by one syncfs or one fsync each. Returns their
    // ledger entries, up to the first file that cannot be ledgered (its error in `refused`).
    [[nodiscard]] std::vector<LedgerEntry> make_durable(const std::vector<BatchFile>& files,
                                                        std::set<std::string> directories,
                                                        std::optional<Error>& refused) const;
    RecordRef write_file_locked(std::string_view relative, std::string_view bytes,
                                std::string_view id) const;
    TreeRoot tree_;  // the root, and the link-refusing walk of every path below it
    // Shared by copies of this Store: the ledger is read once, then only its appended lines.
    std::shared_ptr<LedgerIndex> ledger_index_;
};

// The root's own files, named by the catalogue (catalogue.hpp).
using layout::kLedger;
using layout::kLocksDir;
using layout::kStoreMarker;

// One ledger line: {path, prev, sha256, size}, where prev is the sha256 of the previous line's
// bytes (without its newline; "" for the first line), so that rewriting a record together with its
// line breaks the chain at the next line.
[[nodiscard]] std::string ledger_line(std::string_view relative, const std::string& sha256,
                                      std::uint64_t size, const std::string& previous_line_sha256);

// How many records this process has read from disk (read_record, read_record_hashed and so every
// typed reader of records.hpp) whose relative path starts with `prefix` ("" = all of them): tests
// count an operation's re-reads of the records it has just written (its own invocation's files).
[[nodiscard]] std::uint64_t records_read(std::string_view prefix = "");

}  // namespace cko::store
