// A group commit: the files of one step (a driver call's) written without an fsync each, then made
// durable together and ledgered in one append.
#pragma once

#include "cko/store/store.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

// The files of one step, made durable and ledgered together ([21]: a session request wrote its
// request, process.json, captures and outputs as separate durable transactions, about 13 fsyncs a
// request). What holds, as for every ledgered file (docs/reliability.md, "Power loss"):
//   * a file is durable before a ledger line cites it: commit() makes every file and every
//     directory that gained an entry durable — one syncfs of the store's file system where that
//     suffices (util's syncfs_makes_durable), else an fsync of each — and only then appends all
//     their lines in one write with one fsync (Store::make_durable, then the append);
//   * until commit() a file written here is whole (temporary + rename) but unledgered: what a
//     crash before the commit leaves, and what fsck notes (`unledgered`), never damage;
//   * the ledger records the digest of the bytes written here, not of what the path holds when
//     the commit comes (a driver that rewrites the request it was handed is seen by fsck).
// Each write, each directory made, the step that makes the batch durable and the ledger append
// stay fault points (util/fault.hpp), so the crash and full-disk suites cut between them.
class WriteBatch {
public:
    explicit WriteBatch(const Store& store) : store_(&store) {}

    // mkdir -p of `relative` below the root (each directory made is a fault point); the directory
    // each new one is listed in is fsynced at commit().
    void make_directories(std::string_view relative);
    // Writes `bytes` create-once at `relative` now (already_exists if it is there), without the
    // store's lock and without an fsync. Only for a call's own files (layout::is_call_file): a
    // concurrent call's guard knows them as cko's and does not mistake them for planted files
    // (every other record is written under the lock by Store::write_file). Returns its ref.
    RecordRef write_file(std::string_view relative, std::string_view bytes, std::string_view id);
    // write_file of a record's canonical JSON (it must carry format_version and id).
    RecordRef write_record(std::string_view relative, const Json& record);
    // A file written in place by another (a capture, a driver's output, a sealed log): at commit()
    // it is opened without following a link, refused unless it is a regular file with one link,
    // made read-only, hashed and fsynced.
    void add(std::string_view relative);

    // Under the store's lock, makes every file and directory of the batch durable and appends
    // their ledger lines in the order they were given, in one write. A file added that cannot be
    // ledgered (a link, a special file, a hard link) throws after the ones before it are; a failed
    // fsync or append (io_error) ledgers none. The batch is empty afterwards, whatever happened.
    void commit();

    [[nodiscard]] bool empty() const noexcept { return files_.empty() && directories_.empty(); }

private:
    const Store* store_;
    std::vector<BatchFile> files_;
    std::set<std::string> directories_;  // relative to the root; "" is the root itself
};

}  // namespace cko::store
