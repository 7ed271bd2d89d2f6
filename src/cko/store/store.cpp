// The evidence store: root creation, the write lock, create-once records and the ledger.
#include "cko/store/store.hpp"

#include "cko/store/ledger_index.hpp"
#include "cko/store/write_batch.hpp"

#include "cko/util/build_info.hpp"
#include "cko/util/error.hpp"
#include "cko/util/fault.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

fs::path resolved(const fs::path& p) {
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) == nullptr) {
        const int err = errno;
        throw Error(
            err == ENOENT ? ErrorCode::not_a_store : ErrorCode::io_error,
            fmt::format("cannot resolve artifact root {}: {}", p.string(), std::strerror(err)),
            Json{{"root", p.string()}});
    }
    return fs::path(buf);
}

// Relative record paths: safe components only, so nothing can be written outside the root.
constexpr std::string_view kRecordPathField = "record path";
fs::path checked(const fs::path& root, std::string_view relative) {
    return safe_join(root, relative, kRecordPathField);
}

// A link met inside the store (util's TreeRoot walk), named by its path below the root.
Error refuse_store_link(std::string_view /*field*/, const fs::path& /*link*/,
                        const fs::path& relative) {
    return Error(ErrorCode::symlink_refused,
                 fmt::format("{} inside the store is a symbolic link; cko never follows a link in "
                             "the store (something replaced a store directory or file with one)",
                             relative.string()),
                 Json{{"path", relative.string()}});
}

// Reads per relative path, for records_read(); bounded by the records of the stores read.
std::mutex reads_mutex;
std::map<std::string, std::uint64_t, std::less<>> reads_by_path;

void count_read(std::string_view relative) {
    const std::lock_guard<std::mutex> lock(reads_mutex);
    const auto it = reads_by_path.find(relative);
    if (it == reads_by_path.end()) {
        reads_by_path.emplace(std::string(relative), 1);
    } else {
        ++it->second;
    }
}

}  // namespace

Store::Store(const fs::path& root)
    : tree_(TreeRoot::open(root, &refuse_store_link)),
      ledger_index_(std::make_shared<LedgerIndex>()) {}

Json RecordRef::to_json() const {
    return Json{{"id", id}, {"sha256", sha256}, {"path", path}};
}

StoreLock::StoreLock(const fs::path& lock_file, std::chrono::milliseconds wait) {
    fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        throw Error(ErrorCode::io_error, fmt::format("cannot open lock {}: {}", lock_file.string(),
                                                     std::strerror(errno)));
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            ::close(fd_);
            throw Error(ErrorCode::io_error,
                        fmt::format("flock {}: {}", lock_file.string(), std::strerror(errno)));
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::close(fd_);
            throw Error(
                ErrorCode::store_locked,
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
        throw Error(
            ErrorCode::already_exists,
            fmt::format("{} already exists; a new artifact root must not exist yet", root.string()),
            Json{{"root", root.string()}});
    }
    const fs::path staging =
        make_unique_dir(real_parent, fmt::format(".{}.staging", root.filename().string()), "");
    try {
        ::chmod(staging.c_str(), 0755);
        for (const std::string_view dir : layout::layout_dirs()) {
            fs::create_directories(staging / dir);
        }
        write_file_create_once(
            staging / kStoreMarker,
            canonical_json(Json{{"format_version", "cko/store-v1"},
                                {"created_by", std::string("cko ") + build_version()}}));
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

StoreLock Store::lock(std::chrono::milliseconds wait) const {
    return StoreLock(root() / layout::kLockFile, wait);
}

StoreLock Store::lock_named(std::string_view name, std::chrono::milliseconds wait) const {
    require_safe_name(name, "lock name");
    make_directories(root() / kLocksDir);
    return StoreLock(real_path_of(fmt::format("{}/{}.lock", kLocksDir, name)), wait);
}

fs::path Store::path_of(std::string_view relative) const {
    return checked(root(), relative);
}

std::vector<std::string> Store::record_ids(std::string_view dir, std::string_view prefix) const {
    std::vector<std::string> ids;
    const fs::path real = real_path_of(dir);
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(real, ec))) {
        return ids;
    }
    const std::string start = std::string(prefix) + "-";
    for (const auto& entry : fs::directory_iterator(real)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(start) && name.ends_with(".json")) {
            ids.push_back(name.substr(0, name.size() - 5));
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

fs::path Store::real_path_of(std::string_view relative) const {
    return tree_.resolve(relative, kRecordPathField);
}

bool Store::exists(std::string_view relative) const {
    std::error_code ec;
    return fs::exists(fs::symlink_status(real_path_of(relative), ec));
}

std::string ledger_line(std::string_view relative, const std::string& sha256, std::uint64_t size,
                        const std::string& previous_line_sha256) {
    return canonical_json(Json{{"path", std::string(relative)},
                               {"prev", previous_line_sha256},
                               {"sha256", sha256},
                               {"size", size}});
}

namespace {

[[noreturn]] void ledger_io_error(const fs::path& root, const std::string& what, int err) {
    throw Error(ErrorCode::io_error,
                fmt::format("cannot append to the ledger of {}: {}: {}", root.string(), what,
                            std::strerror(err)),
                Json{{"root", root.string()}, {"errno", err}});
}

// The ledger's last complete line and where it ends. A torn tail (bytes after the last newline,
// left by a crash inside a write) is not a line: the next append cuts it off first.
struct LedgerTail {
    std::string last_line;
    off_t complete_size = 0;
};

LedgerTail read_ledger_tail(int fd, off_t size, const fs::path& root) {
    LedgerTail tail;
    std::string buffer;
    off_t pos = size;
    constexpr off_t kChunk = 4096;
    // Read backwards until two newlines (or the start) bound the last complete line.
    while (pos > 0) {
        const off_t from = pos > kChunk ? pos - kChunk : 0;
        std::string chunk(static_cast<std::size_t>(pos - from), '\0');
        const ssize_t n = ::pread(fd, chunk.data(), chunk.size(), from);
        if (n != static_cast<ssize_t>(chunk.size())) {
            ledger_io_error(root, "cannot read its tail", n < 0 ? errno : EIO);
        }
        buffer.insert(0, chunk);
        pos = from;
        const std::size_t last_nl = buffer.rfind('\n');
        if (last_nl == std::string::npos) {
            continue;
        }
        const std::size_t prev_nl =
            last_nl == 0 ? std::string::npos : buffer.rfind('\n', last_nl - 1);
        if (prev_nl != std::string::npos || pos == 0) {
            const std::size_t begin = prev_nl == std::string::npos ? 0 : prev_nl + 1;
            tail.last_line = buffer.substr(begin, last_nl - begin);
            tail.complete_size = pos + static_cast<off_t>(last_nl) + 1;
            return tail;
        }
    }
    return tail;  // no complete line at all
}

}  // namespace

void Store::append_ledger_line(std::string_view relative, const std::string& sha256,
                               std::uint64_t size) const {
    append_ledger_lines({LedgerEntry{std::string(relative), sha256, size}});
}

void Store::append_ledger_lines(const std::vector<LedgerEntry>& entries) const {
    if (entries.empty()) {
        return;
    }
    const fs::path ledger = real_path_of(kLedger);
    const int fd = ::open(ledger.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        ledger_io_error(root(), "cannot open it", errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        ledger_io_error(root(), "cannot stat it", err);
    }
    try {
        const LedgerTail tail = read_ledger_tail(fd, st.st_size, root());
        if (tail.complete_size != st.st_size && ::ftruncate(fd, tail.complete_size) != 0) {
            ledger_io_error(root(), "cannot cut off a torn last line", errno);
        }
        // Each line chains to the one before it, the first to the ledger's last complete line.
        std::string line;
        std::string prev = tail.last_line.empty() ? "" : sha256_hex(tail.last_line);
        for (const LedgerEntry& e : entries) {
            const std::string one = ledger_line(e.relative, e.sha256, e.size, prev);
            prev = sha256_hex(one);
            line += one + "\n";
        }
        // Whole lines or nothing: a short or failed write (ENOSPC) is cut back off before we report
        // it.
        int err = fault_point() ? 0 : ENOSPC;
        if (err == 0) {
            const ssize_t n = ::pwrite(fd, line.data(), line.size(), tail.complete_size);
            err = n == static_cast<ssize_t>(line.size()) ? 0 : (n < 0 ? errno : ENOSPC);
        }
        if (err == 0) {
            err = !fault_point() ? ENOSPC : sync_to_disk(fd);
        }
        if (err != 0) {
            (void)!::ftruncate(fd, tail.complete_size);
            (void)sync_to_disk(fd);
            ledger_io_error(root(),
                            fmt::format("cannot write the line{} for {}",
                                        entries.size() == 1 ? "" : "s", entries.front().relative),
                            err);
        }
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
}

RecordRef Store::write_file_locked(std::string_view relative, std::string_view bytes,
                                   std::string_view id) const {
    const fs::path target = real_path_of(relative);
    make_directories(target.parent_path());
    (void)real_path_of(relative);  // a directory made just now cannot be a link, one found may be
    write_file_create_once(target, bytes, 0444);
    const std::string digest = sha256_hex(bytes);
    append_ledger_line(relative, digest, bytes.size());
    return RecordRef{std::string(id), digest, std::string(relative)};
}

RecordRef Store::write_file(std::string_view relative, std::string_view bytes,
                            std::string_view id) const {
    const StoreLock held = lock();
    return write_file_locked(relative, bytes, id);
}

RecordRef Store::write_record(std::string_view relative, const Json& record) const {
    if (!record.is_object() || !record.contains("format_version") || !record.contains("id")) {
        throw Error(ErrorCode::internal,
                    fmt::format("record {} lacks format_version or id", relative));
    }
    return write_file(relative, canonical_json(record), record["id"].get<std::string>());
}

void Store::ledger_files(const std::vector<std::string>& relatives) const {
    WriteBatch batch(*this);
    for (const auto& rel : relatives) {
        batch.add(rel);
    }
    batch.commit();
}

void Store::ledger_file(std::string_view relative) const {
    ledger_files({std::string(relative)});
}

namespace {

void replace_pointer(const fs::path& target, const std::string& bytes) {
    const fs::path temp =
        target.parent_path() / fmt::format(".{}.cas-tmp", target.filename().string());
    std::error_code ec;
    fs::remove(temp, ec);
    write_file_create_once(temp, bytes);
    if (!fault_point()) {
        fs::remove(temp, ec);
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot replace {}: {}", target.string(), std::strerror(ENOSPC)));
    }
    if (::rename(temp.c_str(), target.c_str()) !=
        0) {  // replacing is the point; the lock makes it a CAS
        const int err = errno;
        fs::remove(temp, ec);
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot replace {}: {}", target.string(), std::strerror(err)));
    }
    fsync_directory(target.parent_path());
}

}  // namespace

std::string Store::compare_and_swap(std::string_view relative, const std::string& expected_sha256,
                                    const Json& value) const {
    const fs::path target = real_path_of(relative);
    const StoreLock held = lock();
    std::string current;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target, ec))) {
        current = sha256_file_hex(target);
    }
    if (current != expected_sha256) {
        throw Error(
            ErrorCode::cas_conflict,
            fmt::format("{} changed since it was read (expected sha256 \"{}\", found \"{}\"); "
                        "read it again and retry",
                        relative, expected_sha256, current),
            Json{{"path", std::string(relative)},
                 {"expected", expected_sha256},
                 {"found", current}});
    }
    const std::string bytes = canonical_json(value);
    replace_pointer(target, bytes);
    return sha256_hex(bytes);
}

RecordRef Store::swap_with_record(std::string_view pointer, const std::string& expected_sha256,
                                  std::string_view record_relative, const Json& record,
                                  const std::function<Json(const RecordRef&)>& make_pointer) const {
    const fs::path target = real_path_of(pointer);
    const StoreLock held = lock();
    std::string current;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target, ec))) {
        current = sha256_file_hex(target);
    }
    if (current != expected_sha256) {
        throw Error(
            ErrorCode::cas_conflict,
            fmt::format("{} changed since it was read (expected sha256 \"{}\", found \"{}\"); "
                        "nothing was recorded; read it again and retry",
                        pointer, expected_sha256, current),
            Json{
                {"path", std::string(pointer)}, {"expected", expected_sha256}, {"found", current}});
    }
    const std::string bytes = canonical_json(record);
    RecordRef ref{record.at("id").get<std::string>(), sha256_hex(bytes),
                  std::string(record_relative)};
    const fs::path record_path = real_path_of(record_relative);
    if (fs::exists(fs::symlink_status(record_path, ec))) {
        if (sha256_file_hex(record_path) != ref.sha256) {
            throw Error(ErrorCode::already_exists,
                        fmt::format("{} already exists with other content; records are create-once",
                                    record_relative),
                        Json{{"path", std::string(record_relative)}});
        }
        // The same record, left by a run killed before its swap: reuse it.
    } else {
        (void)write_file_locked(record_relative, bytes, ref.id);
    }
    replace_pointer(target, canonical_json(make_pointer(ref)));
    return ref;
}

fs::path Store::stage_directory(std::string_view relative) const {
    const fs::path final_path = real_path_of(relative);
    make_directories(final_path.parent_path());
    if (!fault_point()) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot create a staging directory for {}: {}", relative,
                                std::strerror(ENOSPC)),
                    Json{{"path", std::string(relative)}});
    }
    const fs::path staging = make_unique_dir(
        final_path.parent_path(), fmt::format(".staging-{}", final_path.filename().string()), "");
    ::chmod(staging.c_str(), 0755);
    return staging;
}

void Store::publish_directory(const fs::path& staging, std::string_view relative,
                              const std::vector<std::string>& ledgered_files) const {
    const fs::path final_path = real_path_of(relative);
    // The staged files are durable before the directory appears (a power loss leaves it whole or
    // not at all), and ledgered under their final names once it has.
    const std::string staged = staging.lexically_relative(root()).string();
    std::vector<BatchFile> files;
    for (const auto& file : ledgered_files) {
        files.push_back(BatchFile{fmt::format("{}/{}", staged, file), std::nullopt});
    }
    std::optional<Error> refused;
    std::vector<LedgerEntry> entries = make_durable(files, {}, refused);
    if (refused) {
        throw *refused;
    }
    for (LedgerEntry& e : entries) {
        e.relative = fmt::format("{}{}", relative, e.relative.substr(staged.size()));
    }
    const StoreLock held = lock();
    rename_no_replace(staging, final_path);
    fsync_directory(final_path.parent_path());
    append_ledger_lines(entries);
}

Json Store::read_verified(const RecordRef& ref) const {
    const fs::path p = real_path_of(ref.path);
    const std::string bytes = read_file_capped(p, std::uint64_t{64} << 20);
    const std::string got = sha256_hex(bytes);
    if (got != ref.sha256) {
        throw Error(
            ErrorCode::invalid_record,
            fmt::format(
                "{} does not match the digest recorded for it (sha256 {}, expected {}); the "
                "evidence was altered: run cko fsck",
                ref.path, got, ref.sha256),
            Json{{"path", ref.path}, {"sha256", got}, {"expected", ref.sha256}});
    }
    return parse_json_strict(bytes, {}, ref.path);
}

Json Store::read_named_record(const std::string& relative, std::string_view what,
                              std::string_view id, std::string_view see) const {
    if (!exists(relative)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("no {} {} in {} (see {})", what, id, root().string(), see),
                    Json{{"id", std::string(id)}, {"path", relative}});
    }
    return read_record(relative);
}

Json Store::read_record(std::string_view relative) const {
    return read_record_hashed(relative).value;
}

HashedRecord Store::read_record_hashed(std::string_view relative) const {
    count_read(relative);
    const fs::path p = real_path_of(relative);
    const JsonLimits limits;
    std::string bytes = read_file_capped(p, limits.max_bytes);
    std::string sha256 = sha256_hex(bytes);
    check_ledgered(relative, sha256);
    return HashedRecord{parse_json_strict(bytes, limits, p.string()), std::move(sha256)};
}

bool Store::is_ledgered(std::string_view relative) const {
    return ledger_index_->digest_of(real_path_of(kLedger), relative).has_value();
}

void Store::check_ledgered(std::string_view relative, const std::string& sha256) const {
    const std::optional<std::string> recorded =
        ledger_index_->digest_of(real_path_of(kLedger), relative);
    if (!recorded || *recorded == sha256) {
        return;
    }
    throw Error(
        ErrorCode::tampered_record,
        fmt::format("{} in {} was changed after cko recorded it: its bytes hash to sha256 {}, the "
                    "ledger recorded {} (`cko fsck` reports it as altered); cko uses no record "
                    "that differs from what it wrote. Put the recorded bytes back (from a copy of "
                    "the store), or freeze a new Target into a new root",
                    relative, root().string(), sha256, *recorded),
        Json{{"path", std::string(relative)},
             {"sha256", sha256},
             {"ledger_sha256", *recorded},
             {"fsck", "altered"}});
}

void Store::verify_ledgered(std::string_view relative) const {
    const fs::path p = real_path_of(relative);
    check_ledgered(relative, sha256_hex(read_file_capped(p, JsonLimits{}.max_bytes)));
}

std::uint64_t records_read(std::string_view prefix) {
    const std::lock_guard<std::mutex> lock(reads_mutex);
    std::uint64_t n = 0;
    for (auto it = reads_by_path.lower_bound(prefix);
         it != reads_by_path.end() && std::string_view(it->first).starts_with(prefix); ++it) {
        n += it->second;
    }
    return n;
}

}  // namespace cko::store
