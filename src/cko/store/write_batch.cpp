// The group commit: a step's files written without an fsync each, made durable together and
// ledgered in one append (write_batch.hpp).
#include "cko/store/write_batch.hpp"

#include "cko/util/error.hpp"
#include "cko/util/fault.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

// Files held open at once while their writeback runs: a call's files share one journal commit,
// and a step with thousands of outputs stays far from the descriptor limit.
constexpr std::size_t kOpenAtOnce = 64;

std::string parent_of(std::string_view relative) {
    const std::size_t slash = relative.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(relative.substr(0, slash));
}

// A file of the batch, open for its fsync, with the ledger entry it will get.
struct OpenedFile {
    int fd = -1;
    LedgerEntry entry;
    OpenedFile() = default;
    OpenedFile(OpenedFile&& other) noexcept : fd(other.fd), entry(std::move(other.entry)) {
        other.fd = -1;
    }
    OpenedFile(const OpenedFile&) = delete;
    OpenedFile& operator=(const OpenedFile&) = delete;
    OpenedFile& operator=(OpenedFile&&) = delete;
    ~OpenedFile() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

// Opens `file` once without following a link (chmod, size, digest and fsync all go to that
// descriptor) and refuses anything but a regular file. A file written in
// place by another must have one link (a chmod would change the other name's file too) and is made
// read-only and hashed; one the batch wrote keeps the digest of the bytes it wrote.
OpenedFile open_for_commit(const fs::path& target, const BatchFile& file) {
    const std::string& rel = file.relative;
    OpenedFile out;
    out.fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (out.fd < 0) {
        const int err = errno;
        throw Error(err == ELOOP ? ErrorCode::symlink_refused : ErrorCode::io_error,
                    fmt::format("cannot open {} to ledger it: {}", rel, std::strerror(err)),
                    Json{{"path", rel}});
    }
    struct stat st {};
    if (::fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        throw Error(ErrorCode::special_file,
                    fmt::format("{} is not a regular file; it cannot be ledgered", rel),
                    Json{{"path", rel}});
    }
    if (file.written) {
        out.entry = *file.written;
    } else {
        if (st.st_nlink > 1) {
            throw Error(
                ErrorCode::special_file,
                fmt::format(
                    "{} has {} hard links; a file shared with another place cannot be evidence",
                    rel, st.st_nlink),
                Json{{"path", rel}});
        }
        ::fchmod(out.fd, 0444);
        out.entry = LedgerEntry{rel, sha256_fd_hex(out.fd), static_cast<std::uint64_t>(st.st_size)};
    }
    return out;
}

[[noreturn]] void cannot_sync(const std::string& what, int err) {
    throw Error(ErrorCode::io_error, fmt::format("cannot fsync {}: {}", what, std::strerror(err)),
                Json{{"path", what}, {"errno", err}});
}

}  // namespace

std::vector<LedgerEntry> Store::make_durable(const std::vector<BatchFile>& files,
                                             std::set<std::string> directories,
                                             std::optional<Error>& refused) const {
    // One fault point for the whole step, whichever way it goes: the crash and full-disk suites
    // cut before it (nothing of the batch ledgered) and after it, the same on every machine.
    if (!fault_point()) {
        cannot_sync(files.empty() ? std::string("the store") : files.front().relative, ENOSPC);
    }
    // Where one syncfs makes everything durable (util/files.hpp), it replaces an fsync per file
    // and per directory: each fsync costs a device flush, and ([21]) nine of them were most of
    // what a session request cost cko, even with their writes started together.
    const bool whole_filesystem = syncfs_makes_durable(root());
    std::vector<LedgerEntry> entries;
    for (std::size_t from = 0; from < files.size() && !refused; from += kOpenAtOnce) {
        std::vector<OpenedFile> opened;
        for (std::size_t i = from; i < std::min(files.size(), from + kOpenAtOnce); ++i) {
            try {
                opened.push_back(open_for_commit(real_path_of(files[i].relative), files[i]));
            } catch (const Error& e) {
                refused = e;  // the files before it are still made durable and ledgered
                break;
            }
            directories.insert(parent_of(files[i].relative));
            if (!whole_filesystem) {
                start_writeback(opened.back().fd);  // all started before the first fsync waits
            }
        }
        for (OpenedFile& file : opened) {
            if (!whole_filesystem) {
                if (const int err = sync_to_disk(file.fd); err != 0) {
                    cannot_sync(file.entry.relative, err);
                }
            }
            entries.push_back(std::move(file.entry));
        }
    }
    if (whole_filesystem) {
        if (const int err = sync_filesystem_of(root()); err != 0) {
            cannot_sync(fmt::format("the file system of {}", root().string()), err);
        }
        return entries;
    }
    for (const std::string& dir : directories) {
        if (const int err = sync_directory(dir.empty() ? root() : real_path_of(dir)); err != 0) {
            cannot_sync(dir.empty() ? std::string(".") : dir, err);
        }
    }
    return entries;
}

void WriteBatch::make_directories(std::string_view relative) {
    (void)store_->real_path_of(relative);  // a link on the way is refused, named below the root
    std::string rel;
    std::error_code ec;
    for (const auto& part : fs::path(std::string(relative))) {
        rel = rel.empty() ? part.string() : rel + "/" + part.string();
        const fs::path dir = store_->root() / rel;
        if (fs::is_directory(fs::symlink_status(dir, ec))) {
            continue;
        }
        cko::make_directories(dir);
        directories_.insert(parent_of(rel));  // where the new directory's entry was made
    }
}

RecordRef WriteBatch::write_file(std::string_view relative, std::string_view bytes,
                                 std::string_view id) {
    if (!layout::is_call_file(relative)) {
        throw Error(ErrorCode::internal,
                    fmt::format("{} is not a call's own file: it is written under the store's "
                                "lock (Store::write_file), not in a batch",
                                relative));
    }
    const fs::path target = store_->real_path_of(relative);
    make_directories(parent_of(relative));
    (void)store_->real_path_of(relative);  // a directory made just now cannot be a link
    write_file_create_once_unsynced(target, bytes, 0444);
    LedgerEntry entry{std::string(relative), sha256_hex(bytes), bytes.size()};
    RecordRef ref{std::string(id), entry.sha256, entry.relative};
    files_.push_back(BatchFile{std::string(relative), std::move(entry)});
    return ref;
}

RecordRef WriteBatch::write_record(std::string_view relative, const Json& record) {
    if (!record.is_object() || !record.contains("format_version") || !record.contains("id")) {
        throw Error(ErrorCode::internal,
                    fmt::format("record {} lacks format_version or id", relative));
    }
    return write_file(relative, canonical_json(record), record["id"].get<std::string>());
}

void WriteBatch::add(std::string_view relative) {
    files_.push_back(BatchFile{std::string(relative), std::nullopt});
}

void WriteBatch::commit() {
    const std::vector<BatchFile> files = std::exchange(files_, {});
    std::set<std::string> directories = std::exchange(directories_, {});
    if (files.empty() && directories.empty()) {
        return;
    }
    // The fsyncs need no lock (every file is already whole in its place); the append does.
    std::optional<Error> refused;
    const std::vector<LedgerEntry> entries =
        store_->make_durable(files, std::move(directories), refused);
    if (!entries.empty()) {
        const StoreLock held = store_->lock();
        store_->append_ledger_lines(entries);
    }
    if (refused) {
        throw *refused;
    }
}

}  // namespace cko::store
