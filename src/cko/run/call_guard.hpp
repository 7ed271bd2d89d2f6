// What a driver call may not leave behind: files planted in the store outside its output
// directory, and links or special files inside it. Both refuse the call (unsafe_output).
#pragma once

#include "cko/store/store.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cko::run {

// One directory's entries: name and whether it is a directory (a link is not). Shared between the
// listings taken of an unchanged directory, so a listing copies pointers, not names.
using DirEntries = std::vector<std::pair<std::string, bool>>;

// The store's directories as listed, by relative path ("" is the root).
struct StoreListing {
    std::map<std::string, std::shared_ptr<const DirEntries>> dirs;
    // Every non-directory path (relative, sorted).
    [[nodiscard]] std::set<std::string> files() const;
};

// The store's directories (relative paths) and their entries, except where a call legitimately
// adds files or where each file is checked otherwise: the call's own output directory
// (`call_output`, judged by refuse_unsafe_outputs), objects/ (each snapshot checked against its own
// manifest), invocation workspaces (removed with their invocation), an invocation's profiler work
// directory (`profile collect` writes the profiler's report there) and staging directories.
// Directory entries only: no file is opened or hashed, and a directory unchanged since this process
// last read it (inode, mtime, ctime; racy_window_ns) is not read again.
[[nodiscard]] std::shared_ptr<const StoreListing> list_store_files(const store::Store& store,
                                                                   std::string_view call_output);

// How long after a directory's last change (its mtime and ctime, ns since the epoch) its listing
// may be trusted, git's racy rule made exact for the clock that stamps it: any change made after
// that stamps the directory with another time, so an unchanged mtime and ctime mean unchanged
// entries. On a filesystem of this host (`stamped_here`: ext4, XFS, btrfs, tmpfs, overlay, ZFS)
// Linux stamps a change from its coarse clock (one tick: 10 ms at worst, HZ=100) cut to the
// filesystem's granularity: 20 ms where a stamp shows nanoseconds below 10 ms, else 2.1 s (FAT's
// 2-second mtime, 1-second filesystems). Elsewhere (NFS, Lustre, FUSE: another host's clock
// stamps, and it may be off ours) 2.1 s. It was one second for every directory: a session's
// calls, milliseconds apart, read again every directory made in the last second (about 58 a
// request in bench_request_cost, a quarter of cko's share).
[[nodiscard]] std::int64_t racy_window_ns(std::int64_t mtime_ns, std::int64_t ctime_ns,
                                          bool stamped_here);

// How many directories the store listings of this process have read (the others came from the
// cache): for tests and benches.
[[nodiscard]] std::uint64_t store_directories_read();

// The files of `after` that `before` did not have: only directories whose entries differ are
// compared (an unchanged directory shares its entries), so the cost follows what changed, not the
// store's size.
[[nodiscard]] std::vector<std::string> files_added(const StoreListing& before,
                                                   const StoreListing& after);

// Refuses the call when the store gained a file, since `before`, that no one accounts for: not in
// the ledger, not a file mutable by design, not a temporary of a write in progress, not another
// call's output or own file (its request, process.json and captures, ledgered when it ends).
// Checked again under the store's lock (a concurrent write is ledgered in the same transaction)
// before it refuses. Throws unsafe_output naming every path; else returns the listing taken
// after the call, the `before` of the invocation's next call (Invocation::begin_call).
std::shared_ptr<const StoreListing> refuse_planted_files(const store::Store& store,
                                                         const StoreListing& before,
                                                         std::string_view call_output);

// Refuses (unsafe_output, naming the path) a symbolic link, a file with more than one hard link,
// or anything but a regular file among `files` (relative to `output_dir`; result.json is left to
// the result's judgement, which refuses a linked one as invalid_driver_result): nothing of a call
// is read, ledgered or kept through a link.
void refuse_unsafe_outputs(const std::filesystem::path& output_dir,
                           const std::vector<std::string>& files, std::string_view call_output);

}  // namespace cko::run
