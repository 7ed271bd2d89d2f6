// The evidence store: root creation, the write lock, create-once records and the ledger.
#include "cko/store/store.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLayoutDirs[] = {"objects/sha256", "experiments", "invocations",
                                       "champion/selections"};

fs::path resolved(const fs::path& p) {
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) == nullptr) {
        const int err = errno;
        throw Error(err == ENOENT ? ErrorCode::not_a_store : ErrorCode::io_error,
                    fmt::format("cannot resolve artifact root {}: {}", p.string(), std::strerror(err)),
                    Json{{"root", p.string()}});
    }
    return fs::path(buf);
}

// Relative record paths: safe components only, so nothing can be written outside the root.
fs::path checked(const fs::path& root, std::string_view relative) {
    return safe_join(root, relative, "record path");
}

}  // namespace

Json RecordRef::to_json() const { return Json{{"id", id}, {"sha256", sha256}, {"path", path}}; }

StoreLock::StoreLock(const fs::path& lock_file, std::chrono::milliseconds wait) {
    fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot open lock {}: {}", lock_file.string(), std::strerror(errno)));
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            ::close(fd_);
            throw Error(ErrorCode::io_error, fmt::format("flock {}: {}", lock_file.string(), std::strerror(errno)));
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::close(fd_);
            throw Error(ErrorCode::store_locked,
                        fmt::format("another cko process holds {} (waited {} ms); retry when it is done",
                                    lock_file.string(), wait.count()),
                        Json{{"lock", lock_file.string()}});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

StoreLock::~StoreLock() {
    if (fd_ >= 0) {
        ::close(fd_);  // releases the flock
    }
}

Store Store::open(const fs::path& root) {
    const fs::path real = resolved(root);
    if (!fs::exists(real / kStoreMarker)) {
        throw Error(ErrorCode::not_a_store,
                    fmt::format("{} is not a cko artifact root (no {}); create one with "
                                "'cko target freeze' or pick the right --root",
                                root.string(), kStoreMarker),
                    Json{{"root", root.string()}});
    }
    const Json marker = read_json_file(real / kStoreMarker);
    if (marker.value("format_version", "") != "cko/store-v1") {
        throw Error(ErrorCode::not_a_store,
                    fmt::format("{}/{} has format_version {}, this cko reads cko/store-v1",
                                root.string(), kStoreMarker, marker.value("format_version", "?")),
                    Json{{"root", root.string()}});
    }
    return Store(real);
}

Store Store::create(const fs::path& root) {
    const fs::path parent = root.has_parent_path() ? root.parent_path() : fs::path(".");
    const fs::path real_parent = resolved(parent);
    const fs::path final_path = real_parent / root.filename();
    if (fs::exists(fs::symlink_status(final_path))) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} already exists; a new artifact root must not exist yet",
                                root.string()),
                    Json{{"root", root.string()}});
    }
    std::string staging_pattern = (real_parent / fmt::format(".{}.staging-XXXXXX", root.filename().string())).string();
    if (::mkdtemp(staging_pattern.data()) == nullptr) {
        throw Error(ErrorCode::io_error, fmt::format("cannot create staging directory in {}: {}",
                                                     real_parent.string(), std::strerror(errno)));
    }
    const fs::path staging(staging_pattern);
    try {
        ::chmod(staging.c_str(), 0755);
        for (const char* dir : kLayoutDirs) {
            fs::create_directories(staging / dir);
        }
        write_file_create_once(staging / kStoreMarker,
                               canonical_json(Json{{"format_version", "cko/store-v1"},
                                                   {"created_by", std::string("cko ") + CKO_VERSION}}));
        write_file_create_once(staging / kLedger, "");
        rename_no_replace(staging, final_path);
        fsync_directory(real_parent);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(staging, ec);
        throw;
    }
    return Store(final_path);
}

Store Store::open_or_create(const fs::path& root) {
    std::error_code ec;
    if (fs::exists(root, ec)) {
        return open(root);
    }
    return create(root);
}

StoreLock Store::lock(std::chrono::milliseconds wait) const { return StoreLock(root_ / ".lock", wait); }

fs::path Store::path_of(std::string_view relative) const { return checked(root_, relative); }

bool Store::exists(std::string_view relative) const {
    std::error_code ec;
    return fs::exists(path_of(relative), ec);
}

void Store::append_ledger_line(std::string_view relative, const std::string& sha256,
                               std::uint64_t size) const {
    const std::string line =
        canonical_json(Json{{"path", std::string(relative)}, {"sha256", sha256}, {"size", size}}) + "\n";
    const int fd = ::open((root_ / kLedger).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        throw Error(ErrorCode::io_error, fmt::format("cannot open the ledger of {}: {}", root_.string(),
                                                     std::strerror(errno)));
    }
    const ssize_t n = ::write(fd, line.data(), line.size());
    const bool ok = n == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) {
        throw Error(ErrorCode::io_error, fmt::format("cannot append to the ledger of {}", root_.string()));
    }
}

RecordRef Store::write_file(std::string_view relative, std::string_view bytes, std::string_view id) const {
    const fs::path target = path_of(relative);
    const StoreLock held = lock();
    fs::create_directories(target.parent_path());
    write_file_create_once(target, bytes, 0444);
    const std::string digest = sha256_hex(bytes);
    append_ledger_line(relative, digest, bytes.size());
    return RecordRef{std::string(id), digest, std::string(relative)};
}

RecordRef Store::write_record(std::string_view relative, const Json& record) const {
    if (!record.is_object() || !record.contains("format_version") || !record.contains("id")) {
        throw Error(ErrorCode::internal,
                    fmt::format("record {} lacks format_version or id", relative));
    }
    return write_file(relative, canonical_json(record), record["id"].get<std::string>());
}

void Store::ledger_file(std::string_view relative) const {
    const fs::path target = path_of(relative);
    const StoreLock held = lock();
    ::chmod(target.c_str(), 0444);
    append_ledger_line(relative, sha256_file_hex(target), fs::file_size(target));
}

std::string Store::compare_and_swap(std::string_view relative, const std::string& expected_sha256,
                                   const Json& value) const {
    const fs::path target = path_of(relative);
    const StoreLock held = lock();
    std::string current;
    std::error_code ec;
    if (fs::exists(target, ec)) {
        current = sha256_file_hex(target);
    }
    if (current != expected_sha256) {
        throw Error(ErrorCode::cas_conflict,
                    fmt::format("{} changed since it was read (expected sha256 \"{}\", found \"{}\"); "
                                "read it again and retry",
                                relative, expected_sha256, current),
                    Json{{"path", std::string(relative)}, {"expected", expected_sha256}, {"found", current}});
    }
    const std::string bytes = canonical_json(value);
    const fs::path temp = target.parent_path() / fmt::format(".{}.cas-tmp", target.filename().string());
    fs::remove(temp, ec);
    write_file_create_once(temp, bytes);
    fs::rename(temp, target);  // replacing is the point here, and the lock makes it a CAS
    fsync_directory(target.parent_path());
    return sha256_hex(bytes);
}

Json Store::read_record(std::string_view relative) const {
    return read_json_file(path_of(relative));
}

}  // namespace cko::store
