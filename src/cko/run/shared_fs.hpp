// Whether flock on a store's filesystem excludes processes on other nodes (docs/slurm.md,
// "Locking").
#pragma once

#include "cko/util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace cko::run {

struct LockCoherence {
    std::string fs_type;      // "nfs", "lustre", "ext4", ... (from statfs f_type)
    std::string mount_point;  // of the mount holding the path (/proc/self/mountinfo)
    std::string mount_options;
    // true: flock is coherent across nodes (or the filesystem is local and, with a one-host
    // cluster, nothing else can lock it); false: it is not, refuse; nullopt: not known, a note.
    std::optional<bool> coherent;
    std::string reason;
    [[nodiscard]] Json to_json() const;
};

// Reads statfs and the options of the mount holding `path` (which must exist) from
// /proc/self/mountinfo.
[[nodiscard]] LockCoherence lock_coherence(const std::filesystem::path& path);
// The type name of the filesystem holding `path` ("ext4", "nfs", ...; the magic number in hex,
// "0x...", for a type cko does not name; "unknown" when statfs fails).
[[nodiscard]] std::string filesystem_type(const std::filesystem::path& path);
// Whether `fs_type` is a filesystem of this host's kernel alone (ext4, XFS, btrfs, tmpfs, overlay,
// ZFS): its locks are this host's and its timestamps come from this host's clock.
[[nodiscard]] bool is_local_filesystem(const std::string& fs_type);
// The rule alone, for a filesystem type name and its mount options.
[[nodiscard]] LockCoherence judge_lock_coherence(const std::string& fs_type,
                                                 const std::string& mount_options);

}  // namespace cko::run
