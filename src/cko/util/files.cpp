// Files: atomic create-once writes, capped reads, safe names and paths.
#include "cko/util/files.hpp"

#include "cko/util/error.hpp"
#include "cko/util/fault.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace cko {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void throw_errno(int err, const std::string& what, const fs::path& path) {
    ErrorCode code = ErrorCode::io_error;
    if (err == ENOENT) {
        code = ErrorCode::not_found;
    } else if (err == EEXIST) {
        code = ErrorCode::already_exists;
    }
    throw Error(code, fmt::format("{} {}: {}", what, path.string(), std::strerror(err)),
                nlohmann::json{{"path", path.string()}, {"errno", err}});
}

Error file_too_large(const fs::path& path, std::uint64_t size, std::uint64_t max_bytes) {
    return Error(
        ErrorCode::file_too_large,
        fmt::format("{} has {} bytes, more than the {}-byte limit", path.string(), size, max_bytes),
        nlohmann::json{{"path", path.string()}, {"size", size}, {"limit", max_bytes}});
}

// A fault point (util/fault.hpp) on the durable write path: may end the process, or fail the step
// with ENOSPC exactly as a full disk would.
void durable_step(const std::string& what, const fs::path& path) {
    if (!fault_point()) {
        throw_errno(ENOSPC, what, path);
    }
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    [[nodiscard]] int get() const { return fd_; }

private:
    int fd_;
};

void write_all(int fd, std::string_view bytes, const fs::path& path) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw_errno(errno, "cannot write", path);
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

// rename(2) that fails with EEXIST instead of replacing. Returns errno (0 on success).
int try_rename_no_replace(const fs::path& from, const fs::path& to) {
    if (::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) ==
        0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        return errno;
    }
    // Filesystem without RENAME_NOREPLACE: link(2) never replaces either.
    if (::link(from.c_str(), to.c_str()) != 0) {
        return errno;
    }
    ::unlink(from.c_str());
    return 0;
}

std::string temp_name_for(const fs::path& path) {
    static std::atomic<unsigned> counter{0};
    return fmt::format(".{}.tmp-{}-{}", path.filename().string(), ::getpid(), counter.fetch_add(1));
}

}  // namespace

fs::path temp_base() {
    const char* env = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
    return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
}

fs::path make_unique_dir(const fs::path& parent, std::string_view name, std::string_view fix) {
    std::string pattern = (parent / fmt::format("{}-XXXXXX", name)).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        const int err = errno;
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot create a directory in {}: {}{}{}", parent.string(),
                                std::strerror(err), fix.empty() ? "" : "; ", fix),
                    nlohmann::json{{"dir", parent.string()}});
    }
    return pattern;
}

fs::path make_temp_dir(std::string_view prefix) {
    return make_unique_dir(temp_base(), prefix, "set TMPDIR to a writable folder");
}

namespace {

std::atomic<std::uint64_t> syncs_so_far{0};
std::atomic<void (*)(int, bool)> sync_observer{nullptr};
std::atomic<int> syncfs_override{-1};  // -1: ask the kernel; 0, 1: the test's answer

void count_sync(int fd, bool whole_filesystem) noexcept {
    syncs_so_far.fetch_add(1, std::memory_order_relaxed);
    if (auto* observer = sync_observer.load(); observer != nullptr) {
        observer(fd, whole_filesystem);
    }
}

bool kernel_syncfs_reports_errors() noexcept {
#ifdef __linux__
    struct utsname u {};
    int major = 0;
    int minor = 0;
    return ::uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
           (major > 5 || (major == 5 && minor >= 8));
#else
    return false;
#endif
}

}  // namespace

int sync_to_disk(int fd) noexcept {
    count_sync(fd, false);
    return ::fsync(fd) == 0 ? 0 : errno;
}

int sync_directory(const fs::path& dir) noexcept {
    const Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) {
        return errno;
    }
    const int err = sync_to_disk(fd.get());
    return err == EINVAL ? 0 : err;
}

int sync_filesystem_of(const fs::path& any_path) noexcept {
#ifdef __linux__
    const Fd fd(::open(any_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        return errno;
    }
    count_sync(fd.get(), true);
    return ::syncfs(fd.get()) == 0 ? 0 : errno;
#else
    (void)any_path;
    return ENOSYS;
#endif
}

bool syncfs_makes_durable(const fs::path& any_path) noexcept {
    if (const int forced = syncfs_override.load(); forced >= 0) {
        return forced == 1;
    }
    static const bool kernel = kernel_syncfs_reports_errors();
#ifdef __linux__
    struct statfs st {};
    if (!kernel || ::statfs(any_path.c_str(), &st) != 0) {
        return false;
    }
    constexpr long kExt4 = 0xEF53;  // ext2, ext3 and ext4 share it
    constexpr long kXfs = 0x58465342;
    constexpr long kBtrfs = 0x9123683E;
    const auto type = static_cast<long>(st.f_type);
    return type == kExt4 || type == kXfs || type == kBtrfs;
#else
    (void)any_path;
    return false;
#endif
}

void start_writeback(int fd) noexcept {
#ifdef SYNC_FILE_RANGE_WRITE
    // A hint only: what makes the file durable is the fsync that follows, which reports any error.
    (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
#endif
}

std::uint64_t durable_syncs() noexcept {
    return syncs_so_far.load(std::memory_order_relaxed);
}

void observe_syncs(void (*observer)(int fd, bool whole_filesystem)) noexcept {
    sync_observer.store(observer);
}

void override_syncfs_for_tests(std::optional<bool> available) noexcept {
    syncfs_override.store(available ? (*available ? 1 : 0) : -1);
}

void fsync_directory(const fs::path& dir) {
    durable_step("cannot fsync directory", dir);
    if (const int err = sync_directory(dir); err != 0) {
        throw_errno(err, "cannot fsync directory", dir);
    }
}

void make_directories(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(dir, ec))) {
        return;
    }
    if (dir.has_parent_path() && dir.parent_path() != dir) {
        make_directories(dir.parent_path());
    }
    durable_step("cannot create directory", dir);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        throw_errno(errno, "cannot create directory", dir);
    }
    if (!fs::is_directory(fs::symlink_status(dir, ec))) {
        throw Error(ErrorCode::symlink_refused,
                    fmt::format("{} is not a directory (a link or a file stands in its place)",
                                dir.string()),
                    nlohmann::json{{"path", dir.string()}});
    }
}

void rename_no_replace(const fs::path& from, const fs::path& to) {
    durable_step(fmt::format("cannot rename {} to", from.string()), to);
    const int err = try_rename_no_replace(from, to);
    if (err == EEXIST || err == ENOTEMPTY) {
        throw Error(ErrorCode::already_exists, fmt::format("{} already exists", to.string()),
                    nlohmann::json{{"path", to.string()}});
    }
    if (err != 0) {
        throw_errno(err, fmt::format("cannot rename {} to", from.string()), to);
    }
}

void remove_tree_forcibly(const fs::path& dir) noexcept {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(dir, ec))) {
        return;
    }
    if (!fs::is_symlink(fs::symlink_status(dir, ec))) {
        ::chmod(dir.c_str(), 0755);
        for (auto it = fs::recursive_directory_iterator(dir, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (!it->is_symlink(ec)) {
                ::chmod(it->path().c_str(), 0755);
            }
        }
    }
    fs::remove_all(dir, ec);
}

namespace {

// write_file_create_once's steps; `sync`: the temp file and the directory are fsynced (else the
// caller makes the file durable: write_file_create_once_unsynced).
void create_once(const fs::path& path, std::string_view bytes, unsigned mode,
                 const AtomicWriteHook& hook, bool sync) {
    const auto step = [&](AtomicWriteStep s) {
        if (hook) {
            hook(s);
        }
    };
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (::access(path.c_str(), F_OK) == 0) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} already exists; records are create-once", path.string()),
                    nlohmann::json{{"path", path.string()}});
    }
    const fs::path temp = dir / temp_name_for(path);
    const int raw = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (raw < 0) {
        throw_errno(errno, "cannot create temporary file", temp);
    }
    try {
        {
            const Fd fd(raw);
            step(AtomicWriteStep::temp_created);
            durable_step("cannot write", temp);
            write_all(fd.get(), bytes, temp);
            step(AtomicWriteStep::temp_written);
            if (sync) {
                durable_step("cannot fsync", temp);
                if (const int err = sync_to_disk(fd.get()); err != 0) {
                    throw_errno(err, "cannot fsync", temp);
                }
                step(AtomicWriteStep::temp_synced);
            }
        }
        durable_step("cannot rename into place", path);
        const int err = try_rename_no_replace(temp, path);
        if (err == EEXIST) {
            throw Error(ErrorCode::already_exists,
                        fmt::format("{} already exists; records are create-once", path.string()),
                        nlohmann::json{{"path", path.string()}});
        }
        if (err != 0) {
            throw_errno(err, "cannot rename into place", path);
        }
    } catch (...) {
        ::unlink(temp.c_str());
        throw;
    }
    step(AtomicWriteStep::renamed);
    if (sync) {
        fsync_directory(dir);
        step(AtomicWriteStep::directory_synced);
    }
}

}  // namespace

void write_file_create_once(const fs::path& path, std::string_view bytes, unsigned mode,
                            const AtomicWriteHook& hook) {
    create_once(path, bytes, mode, hook, true);
}

void write_file_create_once_unsynced(const fs::path& path, std::string_view bytes, unsigned mode) {
    create_once(path, bytes, mode, {}, false);
}

namespace {

// The checks before a whole-file read: a regular file of at most max_bytes. Returns its size.
std::uint64_t checked_size(int fd, const fs::path& path, std::uint64_t max_bytes) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        throw_errno(errno, "cannot stat", path);
    }
    if (!S_ISREG(st.st_mode)) {
        throw Error(ErrorCode::io_error, fmt::format("{} is not a regular file", path.string()),
                    nlohmann::json{{"path", path.string()}});
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        throw file_too_large(path, static_cast<std::uint64_t>(st.st_size), max_bytes);
    }
    return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const fs::path& path, std::uint64_t max_bytes) {
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        throw_errno(errno, "cannot open", path);
    }
    const auto size = static_cast<std::size_t>(checked_size(fd.get(), path, max_bytes));
    if (size == 0) {  // mmap refuses a length of 0
        return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
    }
    // Not populated here (see populate()): the caller chooses the thread that pays for it.
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (data == MAP_FAILED) {
        throw_errno(errno, "cannot map", path);
    }
    return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const char*>(data), size));
}

void MappedFile::populate() const noexcept {
#ifdef MADV_POPULATE_READ
    if (data_ != nullptr) {
        // Advice: an error (EINVAL before Linux 5.14) leaves the pages to fault in on first touch.
        (void)::madvise(const_cast<char*>(data_), size_, MADV_POPULATE_READ);
    }
#endif
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) {
        ::munmap(const_cast<char*>(data_), size_);
    }
}

std::string read_file_capped(const fs::path& path, std::uint64_t max_bytes) {
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        throw_errno(errno, "cannot open", path);
    }
    const std::uint64_t size = checked_size(fd.get(), path, max_bytes);
    std::string out;
    out.reserve(static_cast<std::size_t>(size));
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw_errno(errno, "cannot read", path);
        }
        if (n == 0) {
            break;
        }
        out.append(buffer, static_cast<std::size_t>(n));
        if (out.size() > max_bytes) {  // the file grew while we read it
            throw file_too_large(path, out.size(), max_bytes);
        }
    }
    return out;
}

std::string read_file_tail(const fs::path& path, std::size_t max_bytes) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        return "";
    }
    const auto window = static_cast<std::streamoff>(max_bytes);
    const std::streamoff size = in.tellg();
    const std::streamoff from = size > window ? size - window : 0;
    in.seekg(from);
    std::string text(static_cast<std::size_t>(size - from), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (from > 0) {
        const std::size_t nl = text.find('\n');  // start on a whole line
        text.erase(0, nl == std::string::npos ? 0 : nl + 1);
    }
    return text;
}

bool is_safe_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > 128 || name == "." || name == "..") {
        return false;
    }
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

bool is_safe_relative_path(std::string_view relative) noexcept {
    if (relative.empty()) {
        return false;
    }
    for (;;) {
        const std::size_t slash = relative.find('/');
        if (!is_safe_name(relative.substr(0, slash))) {
            return false;
        }
        if (slash == std::string_view::npos) {
            return true;
        }
        relative.remove_prefix(slash + 1);
    }
}

void require_safe_name(std::string_view name, std::string_view field) {
    if (!is_safe_name(name)) {
        throw Error(ErrorCode::unsafe_path,
                    fmt::format("{}: \"{}\" is not a safe name; use 1-128 characters from "
                                "[A-Za-z0-9._-], not \".\" or \"..\"",
                                field, name),
                    nlohmann::json{{"field", field}, {"value", name}});
    }
}

fs::path safe_join(const fs::path& root, std::string_view relative, std::string_view field) {
    if (relative.empty() || relative.front() == '/') {
        throw Error(ErrorCode::unsafe_path,
                    fmt::format("{}: \"{}\" must be a non-empty relative path", field, relative),
                    nlohmann::json{{"field", field}, {"value", relative}});
    }
    fs::path out = root;
    std::string_view rest = relative;
    while (!rest.empty()) {
        const std::size_t slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        require_safe_name(part, field);
        out /= std::string(part);
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    }
    return out;
}

fs::path resolve_inside(const fs::path& folder, std::string_view relative, std::string_view field) {
    char buf[PATH_MAX];
    if (::realpath(folder.c_str(), buf) == nullptr) {
        return folder / std::string(relative);  // no folder yet: nothing on disk to follow
    }
    const fs::path base(buf);
    const fs::path wanted = base / std::string(relative);
    // The longest prefix that exists, resolved; the rest appended as written.
    fs::path existing = wanted;
    fs::path rest;
    std::error_code ec;
    while (!fs::exists(fs::symlink_status(existing, ec)) && existing.has_relative_path() &&
           existing != base) {
        rest = rest.empty() ? existing.filename() : existing.filename() / rest;
        existing = existing.parent_path();
    }
    if (::realpath(existing.c_str(), buf) == nullptr) {
        throw_errno(errno, fmt::format("{}: cannot resolve", field), existing);
    }
    const fs::path resolved = rest.empty() ? fs::path(buf) : fs::path(buf) / rest;
    const std::string r = resolved.lexically_normal().string();
    const std::string b = base.string();
    if (r != b && !r.starts_with(b == "/" ? b : b + "/")) {
        throw Error(
            ErrorCode::unsafe_path,
            fmt::format(
                "{}: \"{}\" resolves to {}, outside the spec's folder {} (through a symbolic "
                "link); copy the files into the folder instead",
                field, relative, r, b),
            nlohmann::json{{"field", field}, {"value", relative}, {"resolved", r}, {"folder", b}});
    }
    return resolved;
}

namespace {

Error refuse_link_in_tree(std::string_view field, const fs::path& link,
                          const fs::path& /*relative*/) {
    return Error(ErrorCode::symlink_refused,
                 fmt::format("{}: {} is a symbolic link; links inside a tree are refused (copy the "
                             "file in instead)",
                             field, link.string()),
                 nlohmann::json{{"field", field}, {"path", link.string()}});
}

}  // namespace

TreeRoot TreeRoot::open(const fs::path& root, LinkRefusal refuse_link) {
    char resolved[PATH_MAX];
    if (::realpath(root.c_str(), resolved) == nullptr) {
        throw_errno(errno, "cannot resolve", root);
    }
    struct stat st {};
    if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw Error(ErrorCode::not_found, fmt::format("{} is not a directory", root.string()),
                    nlohmann::json{{"path", root.string()}});
    }
    return TreeRoot(fs::path(resolved),
                    refuse_link != nullptr ? refuse_link : &refuse_link_in_tree);
}

fs::path TreeRoot::resolve(std::string_view relative, std::string_view field) const {
    const fs::path joined = safe_join(root_, relative, field);
    fs::path walk = root_;
    for (const auto& part : joined.lexically_relative(root_)) {
        walk /= part;
        struct stat st {};
        if (::lstat(walk.c_str(), &st) != 0) {
            if (errno == ENOENT) {
                break;  // the rest does not exist yet: nothing to follow
            }
            throw_errno(errno, "cannot stat", walk);
        }
        if (S_ISLNK(st.st_mode)) {
            throw refuse_link_(field, walk, walk.lexically_relative(root_));
        }
    }
    return joined;
}

}  // namespace cko
