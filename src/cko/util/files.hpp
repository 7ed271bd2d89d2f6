// Files: atomic create-once writes, capped reads, safe names and paths, symlink-free trees.
#pragma once

#include "cko/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cko {

// The steps of write_file_create_once, in order. A test hook called after each step can end the
// process there to show that a crash at any instant leaves either no file or the whole file.
enum class AtomicWriteStep { temp_created, temp_written, temp_synced, renamed, directory_synced };
using AtomicWriteHook = std::function<void(AtomicWriteStep)>;

// Writes `bytes` to `path`, which must not exist: temp file in the same directory + fsync +
// rename-without-replace (renameat2 RENAME_NOREPLACE, or link+unlink where the filesystem lacks it)
// + fsync of the directory. Throws already_exists (and leaves the existing file untouched) if
// `path` exists. A crash leaves at most a stale ".<name>.tmp-*" file, never a partial `path`.
void write_file_create_once(const std::filesystem::path& path, std::string_view bytes,
                            unsigned mode = 0644, const AtomicWriteHook& hook = {});

// The same create-once write without its two fsyncs (temp file written, renamed without replacing):
// readers see the whole file or none, and a crash of the process loses nothing (the page cache
// survives it), but a power loss may. The caller makes it durable before anything cites it
// (store::WriteBatch makes it durable with the other files of its step before ledgering it).
void write_file_create_once_unsynced(const std::filesystem::path& path, std::string_view bytes,
                                     unsigned mode = 0644);

// fsync(2), counted: every fsync cko's own durable writes make goes through it (durable_syncs).
// Returns 0 or the errno.
[[nodiscard]] int sync_to_disk(int fd) noexcept;
// fsync of a directory (its entries), counted; no fault point (fsync_directory has one). Returns 0
// or the errno; EINVAL (a file system that cannot sync a directory) counts as done.
[[nodiscard]] int sync_directory(const std::filesystem::path& dir) noexcept;
// syncfs(2) of the file system holding `any_path`, counted: every dirty file and directory of it
// written and its journal committed, one device flush instead of one per file. Returns 0 or the
// errno (ENOSYS where there is none). Only where syncfs_makes_durable(any_path).
[[nodiscard]] int sync_filesystem_of(const std::filesystem::path& any_path) noexcept;
// Whether one syncfs of the file system holding `any_path` makes every file on it durable and
// reports their write errors: Linux 5.8 or later (before, syncfs dropped writeback errors, so a
// file could be cited that never reached the disk) on ext4, XFS or btrfs, whose syncfs writes
// every dirty file and commits the journal. Elsewhere (NFS, FUSE, ...) files are fsynced one by
// one.
[[nodiscard]] bool syncfs_makes_durable(const std::filesystem::path& any_path) noexcept;
// Starts writing `fd`'s dirty pages back without waiting for them (Linux sync_file_range; nothing
// elsewhere): files fsynced one by one are all started first, so their writes overlap.
void start_writeback(int fd) noexcept;
// How many times this process has fsynced a file or a directory or synced a file system: tests
// count the syncs of one step.
[[nodiscard]] std::uint64_t durable_syncs() noexcept;
// Test hooks: `observer` is called with each descriptor about to be synced (whole_filesystem: by
// syncfs) so a test can tell what was made durable, in what order; nullptr: none. And
// syncfs_makes_durable() answers `available` instead of the system (nullopt: the system again),
// so both ways of a group commit can be tested on one machine.
void observe_syncs(void (*observer)(int fd, bool whole_filesystem)) noexcept;
void override_syncfs_for_tests(std::optional<bool> available) noexcept;

// Reads a whole regular file; throws file_too_large above max_bytes, not_found, io_error.
[[nodiscard]] std::string read_file_capped(const std::filesystem::path& path,
                                           std::uint64_t max_bytes);

// The end of a log: the last `max_bytes` bytes of `path`, starting at a whole line when the file is
// longer (what precedes the first line break in that window is dropped); "" when it cannot be
// read. The lines are the caller's to interpret (driver/stderr_tail.hpp folds a driver's subject
// markers).
[[nodiscard]] std::string read_file_tail(const std::filesystem::path& path, std::size_t max_bytes);

// A whole regular file mapped read-only: the page cache's pages are the buffer, so a 100 MB
// profiler export is read with no copy and no fresh pages (read_file_capped copies it into new
// memory: a fifth of an NCU import's time, bench/ncu_verb_bench.cpp). The file must not be
// truncated while it is mapped (the process would get SIGBUS); use it for inputs read at once.
class MappedFile {
public:
    // Throws as read_file_capped does: not_found, io_error (not a regular file), file_too_large.
    [[nodiscard]] static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path,
                                                                std::uint64_t max_bytes);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    [[nodiscard]] std::string_view bytes() const noexcept { return {data_, size_}; }
    // Maps every page of the file now (MADV_POPULATE_READ, Linux 5.14+), in one call rather than
    // a fault per few pages. open() does not: mapping 100 MB takes 3-4 ms, so a reader populates
    // on the thread that reads every byte first while another starts on the first pages (which
    // fault in as usual). Nothing happens on an older kernel: the pages fault in on first touch.
    void populate() const noexcept;

private:
    MappedFile(const char* data, std::size_t size) : data_(data), size_(size) {}
    const char* data_;
    std::size_t size_;
};

// The folder scratch directories go under: $TMPDIR when set and not empty, else /tmp.
[[nodiscard]] std::filesystem::path temp_base();

// A new private (0700) directory temp_base()/PREFIX-XXXXXX (mkdtemp). Throws io_error naming the
// folder, the reason and the fix (set TMPDIR to a writable folder). The caller removes it.
[[nodiscard]] std::filesystem::path make_temp_dir(std::string_view prefix);

// A new private (0700) directory PARENT/NAME-XXXXXX (mkdtemp): the one place cko makes a uniquely
// named directory (make_temp_dir, the store's staging directories). Throws io_error naming
// `parent`, the reason and `fix` (omitted when empty). The caller removes it.
[[nodiscard]] std::filesystem::path make_unique_dir(const std::filesystem::path& parent,
                                                    std::string_view name, std::string_view fix);

void fsync_directory(const std::filesystem::path& dir);

// mkdir -p that reports failures as cko errors (io_error with the path and errno, e.g. ENOSPC)
// instead of std::filesystem exceptions, and refuses a symlink where a directory should be
// (symlink_refused). Each directory created is a fault point (util/fault.hpp).
void make_directories(const std::filesystem::path& dir);

// Removes a tree that may hold read-only files and directories (materialized snapshots, stagings):
// makes everything writable first. Never follows symlinks; errors are ignored (best effort).
void remove_tree_forcibly(const std::filesystem::path& dir) noexcept;

// rename(2) that never replaces: throws already_exists if `to` exists (file or directory, even an
// empty one). Uses renameat2(RENAME_NOREPLACE), or link+unlink for files where that is missing.
void rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to);

// A name that may become one path component: [A-Za-z0-9._-]{1,128}, not "." or "..".
[[nodiscard]] bool is_safe_name(std::string_view name) noexcept;
// True if every '/'-separated component of `relative` is a safe name (what safe_join accepts).
[[nodiscard]] bool is_safe_relative_path(std::string_view relative) noexcept;
// Throws unsafe_path naming `field` (e.g. "cases.ids[2]") and the rule.
void require_safe_name(std::string_view name, std::string_view field);

// Joins a relative path ("a/b/c.json") under root after checking every component with
// is_safe_name: no "..", no absolute path, no empty component. Does not touch the filesystem.
[[nodiscard]] std::filesystem::path safe_join(const std::filesystem::path& root,
                                              std::string_view relative, std::string_view field);

// `relative` under `folder`, resolved through the file system (symlinks followed, as the spec's
// user meant them), refused with unsafe_path naming `field` if the result lies outside
// realpath(folder): a link on the way ("via/src" with `via` a link, a linked cases dir) cannot lead
// out. Parts that do not exist yet are joined lexically. Returns the resolved path.
[[nodiscard]] std::filesystem::path resolve_inside(const std::filesystem::path& folder,
                                                   std::string_view relative,
                                                   std::string_view field);

// A directory resolved once with realpath; paths below it are resolved component by component and
// any symlink on the way is refused, so nothing read "inside" can lead outside. The one such walk:
// the store's paths go through it too (store::Store::real_path_of).
class TreeRoot {
public:
    // The symlink_refused error a tree gives for a link met on the way: `link` is its path,
    // `relative` the same below the root, `field` the caller's name for the path resolved.
    using LinkRefusal = Error (*)(std::string_view field, const std::filesystem::path& link,
                                  const std::filesystem::path& relative);

    // `refuse_link` words the refusal for this tree (the store names the link below its root);
    // by default: "FIELD: LINK is a symbolic link; links inside a tree are refused ...".
    [[nodiscard]] static TreeRoot open(const std::filesystem::path& root,
                                       LinkRefusal refuse_link = nullptr);

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return root_; }
    // Checks components (safe_join, naming `field`) and lstat()s each existing one: a symlink
    // gives symlink_refused, a failed lstat io_error ("cannot stat PATH: REASON"). The last
    // component need not exist; nothing past the first missing one is looked at.
    [[nodiscard]] std::filesystem::path resolve(std::string_view relative,
                                                std::string_view field) const;

private:
    TreeRoot(std::filesystem::path root, LinkRefusal refuse_link)
        : root_(std::move(root)), refuse_link_(refuse_link) {}
    std::filesystem::path root_;
    LinkRefusal refuse_link_;
};

}  // namespace cko
