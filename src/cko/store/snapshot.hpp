// Content-addressed snapshots of a file or directory tree, and their read-only materialization.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/closed_enum.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cko::store {

struct SnapshotOptions {
    // Entry names skipped wherever they appear (exact name match, or "*.suffix"). Recorded in the
    // manifest together with every path it skipped.
    std::vector<std::string> ignore = {".git",          ".hg",      ".svn",  "__pycache__",
                                       "*.pyc",         ".cache",   "build", "build-static",
                                       ".pytest_cache", ".DS_Store"};
};

struct ManifestEntry {
    std::string path;  // relative, '/'-separated; "" for a single-file snapshot's file
    unsigned mode = 0;
    std::uint64_t size = 0;
    std::string sha256;
};

struct Snapshot {
    std::string digest;  // sha256 of manifest.json's bytes (= of its canonical JSON)
    std::string kind;    // "file" or "directory"
    std::filesystem::path
        source;  // the realpath the snapshot was taken from (not part of the digest)
    std::vector<ManifestEntry> entries;
    [[nodiscard]] Json reference() const;  // {digest, kind, source, file_count, total_bytes}
};

// Copies `source` (file or directory) into objects/sha256/<digest>/ of the store: files/ holds the
// payload (read-only), manifest.json the canonical manifest (path, mode, size, sha256; no mtimes).
// Symlinks and special files are refused with their path. Identical content gives the same digest
// and is stored once.
[[nodiscard]] Snapshot take_snapshot(const Store& store, const std::filesystem::path& source,
                                     const SnapshotOptions& options = {});

// The snapshot take_snapshot would give `source` now (digest, kind, entries), without storing
// anything: to check whether files frozen earlier were edited since.
[[nodiscard]] Snapshot snapshot_manifest_of(const std::filesystem::path& source,
                                            const SnapshotOptions& options = {});
[[nodiscard]] std::string snapshot_digest_of(const std::filesystem::path& source,
                                             const SnapshotOptions& options = {});

// How a file differs between two snapshots of the same tree.
#define CKO_ENTRY_CHANGES(X) X(appeared) X(changed) X(vanished)
CKO_CLOSED_ENUM(EntryChangeKind, CKO_ENTRY_CHANGES, entry_change_name, entry_change_from_name)

struct EntryChange {
    std::string path;  // the entry's path ("" for a single-file snapshot's file)
    EntryChangeKind kind;
};

// The files that appeared, changed (content or mode) or vanished from `before` to `after`, sorted
// by path. Only files count: names the snapshots skipped (bytecode, VCS folders) never do.
[[nodiscard]] std::vector<EntryChange> changed_entries(const Snapshot& before,
                                                       const Snapshot& after);

// Reads and checks a stored snapshot's manifest (digest must match its bytes).
[[nodiscard]] Snapshot load_snapshot(const Store& store, const std::string& digest);

// The digests of the snapshots stored under objects/, in directory order; a hidden name (an
// interrupted snapshot's staging directory) is none. Nothing is read or checked (load_snapshot).
[[nodiscard]] std::vector<std::string> list_snapshots(const Store& store);

// Lays the snapshot's files out under `destination` (which must not exist) as read-only copies,
// directories made read-only too, so that a driver cannot edit the code it measures by accident.
// For a file snapshot, `destination` is the file.
void materialize_snapshot(const Store& store, const Snapshot& snapshot,
                          const std::filesystem::path& destination);

using layout::snapshot_dir;  // "objects/sha256/<digest>" (catalogue.hpp)

}  // namespace cko::store
