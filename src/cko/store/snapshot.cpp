// Content-addressed snapshots: copy-and-hash into staging, manifest, rename into objects/sha256/.
#include "cko/store/snapshot.hpp"

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
#include <climits>
#include <cstring>
#include <map>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

bool is_ignored(const std::string& name, const std::vector<std::string>& ignore) {
    for (const auto& pattern : ignore) {
        if (pattern.starts_with("*.")) {
            if (name.size() > pattern.size() - 1 && name.ends_with(pattern.substr(1))) {
                return true;
            }
        } else if (name == pattern) {
            return true;
        }
    }
    return false;
}

// Names inside a user's tree may be wider than case ids, but never control characters or "..".
void require_tree_name(const std::string& name, const fs::path& where) {
    const bool bad = name.empty() || name == "." || name == ".." || name.size() > 255 ||
                     std::any_of(name.begin(), name.end(), [](char c) {
                         return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                     });
    if (bad) {
        throw Error(ErrorCode::unsafe_path,
                    fmt::format("{}: file name not allowed in a snapshot", where.string()),
                    Json{{"path", where.string()}});
    }
}

// Copies one regular file into the staging payload while hashing it; returns its sha256.
std::string copy_and_hash(const fs::path& from, const fs::path& to, std::uint64_t expected_size) {
    const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot read {}: {}", from.string(), std::strerror(errno)),
                    Json{{"path", from.string()}});
    }
    const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (out < 0) {
        ::close(in);
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot create {}: {}", to.string(), std::strerror(errno)));
    }
    Sha256 hash;
    std::uint64_t total = 0;
    std::string buffer(std::size_t{1} << 16, '\0');
    bool ok = true;
    for (;;) {
        const ssize_t n = ::read(in, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        const std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
        hash.update(chunk);
        total += chunk.size();
        if (::write(out, chunk.data(), chunk.size()) != n) {
            ok = false;
            break;
        }
    }
    ok = ok && sync_to_disk(out) == 0;
    ::close(in);
    ::close(out);
    if (!ok) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot copy {} into the store", from.string()));
    }
    if (total != expected_size) {
        throw Error(
            ErrorCode::io_error,
            fmt::format("{} changed size while it was snapshotted; retry when nothing writes to it",
                        from.string()),
            Json{{"path", from.string()}});
    }
    return hash.finish_hex();
}

struct Walker {
    const SnapshotOptions& options;
    fs::path payload;
    std::vector<ManifestEntry> entries;
    std::vector<std::string> ignored;

    // An empty payload path means "hash only": the digest a snapshot would get, nothing written.
    void file(const fs::path& from, const std::string& rel, const struct stat& st) {
        const fs::path to = rel.empty() ? payload : payload / rel;
        const auto size = static_cast<std::uint64_t>(st.st_size);
        entries.push_back(
            ManifestEntry{rel, static_cast<unsigned>(st.st_mode & 0777), size,
                          payload.empty() ? sha256_file_hex(from) : copy_and_hash(from, to, size)});
    }

    void directory(const fs::path& dir, const std::string& rel) {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(dir)) {
            names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            const fs::path from = dir / name;
            const std::string child = rel.empty() ? name : rel + "/" + name;
            if (is_ignored(name, options.ignore)) {
                ignored.push_back(child);
                continue;
            }
            require_tree_name(name, from);
            struct stat st {};
            if (::lstat(from.c_str(), &st) != 0) {
                throw Error(ErrorCode::io_error,
                            fmt::format("cannot stat {}: {}", from.string(), std::strerror(errno)));
            }
            if (S_ISLNK(st.st_mode)) {
                throw Error(
                    ErrorCode::symlink_refused,
                    fmt::format("{} is a symbolic link; snapshots refuse links (copy the file "
                                "in, or add its name to the ignore list)",
                                from.string()),
                    Json{{"path", from.string()}});
            }
            if (S_ISDIR(st.st_mode)) {
                if (!payload.empty()) {
                    fs::create_directory(payload / child);
                }
                directory(from, child);
            } else if (S_ISREG(st.st_mode)) {
                file(from, child, st);
            } else {
                throw Error(ErrorCode::special_file,
                            fmt::format("{} is neither a file nor a directory", from.string()),
                            Json{{"path", from.string()}});
            }
        }
    }
};

Json manifest_json(const std::string& kind, const std::vector<ManifestEntry>& entries,
                   const SnapshotOptions& options, const std::vector<std::string>& ignored) {
    Json list = Json::array();
    for (const auto& e : entries) {
        list.push_back(
            Json{{"path", e.path}, {"mode", e.mode}, {"size", e.size}, {"sha256", e.sha256}});
    }
    return Json{{"format_version", "cko/snapshot-manifest-v1"},
                {"kind", kind},
                {"entries", list},
                {"ignore", options.ignore},
                {"ignored", ignored}};
}

void make_read_only(const fs::path& root) {
    // Deepest first so that a parent loses its write bit after its children are done.
    std::vector<fs::path> dirs{root};
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_directory()) {
            dirs.push_back(e.path());
        }
    }
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        ::chmod(it->c_str(), 0555);
    }
}

// One file of a snapshot copied to `to` and re-hashed against its manifest entry. Copies, not
// hard links: a hard link shares the store's inode, and a driver running as root (permission bits
// do not stop root) could then alter the evidence itself. What gets measured is what was frozen,
// or nothing. The copy is a fault point (util/fault.hpp): a full disk here is an io_error naming
// the file, which the operation records, never internal.
void place_copy(const Snapshot& snapshot, const fs::path& from, const fs::path& to,
                const ManifestEntry& e) {
    struct stat st {};
    if (::lstat(from.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        throw Error(ErrorCode::invalid_record,
                    fmt::format("snapshot {}: {} is missing or not a regular file; the evidence "
                                "was altered (run cko fsck)",
                                snapshot.digest, e.path.empty() ? "its file" : e.path),
                    Json{{"digest", snapshot.digest}, {"path", e.path}});
    }
    std::error_code copy_error;
    if (fault_point()) {
        fs::copy_file(from, to, copy_error);
    } else {
        copy_error = std::make_error_code(std::errc::no_space_on_device);
    }
    if (copy_error) {
        throw Error(
            ErrorCode::io_error,
            fmt::format("cannot copy {} of snapshot {} to {}: {}",
                        e.path.empty() ? "its file" : e.path, snapshot.digest, to.string(),
                        copy_error.message()),
            Json{
                {"digest", snapshot.digest}, {"path", to.string()}, {"errno", copy_error.value()}});
    }
    ::chmod(to.c_str(), 0444);
    const std::string got = sha256_file_hex(to);
    if (got != e.sha256) {
        throw Error(
            ErrorCode::invalid_record,
            fmt::format("snapshot {}: {} has sha256 {}, the manifest says {}; the frozen "
                        "code was altered and is not measured (run cko fsck)",
                        snapshot.digest, e.path.empty() ? "its file" : e.path, got, e.sha256),
            Json{{"digest", snapshot.digest},
                 {"path", e.path},
                 {"sha256", got},
                 {"expected", e.sha256}});
    }
}

}  // namespace

Json Snapshot::reference() const {
    std::uint64_t total = 0;
    for (const auto& e : entries) {
        total += e.size;
    }
    return Json{{"digest", digest},
                {"kind", kind},
                {"source", source.string()},
                {"file_count", entries.size()},
                {"total_bytes", total}};
}

Snapshot take_snapshot(const Store& store, const fs::path& source, const SnapshotOptions& options) {
    char real[PATH_MAX];
    if (::realpath(source.c_str(), real) == nullptr) {
        throw Error(ErrorCode::not_found,
                    fmt::format("cannot snapshot {}: {}", source.string(), std::strerror(errno)),
                    Json{{"path", source.string()}});
    }
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) {
        throw Error(ErrorCode::symlink_refused,
                    fmt::format("{} is a symbolic link; give the real path", source.string()),
                    Json{{"path", source.string()}});
    }
    const fs::path objects = store.root() / layout::kObjectsDir;
    const fs::path staging = make_unique_dir(objects, ".staging", "");
    Snapshot snap;
    snap.source = real;
    try {
        Walker walker{options, staging / layout::kSnapshotFilesDir, {}, {}};
        if (S_ISDIR(st.st_mode)) {
            snap.kind = "directory";
            fs::create_directory(walker.payload);
            walker.directory(real, "");
        } else if (S_ISREG(st.st_mode)) {
            snap.kind = "file";
            walker.file(real, "", st);
        } else {
            throw Error(ErrorCode::special_file,
                        fmt::format("{} is neither a file nor a directory", source.string()));
        }
        snap.entries = std::move(walker.entries);
        const std::string manifest =
            canonical_json(manifest_json(snap.kind, snap.entries, options, walker.ignored));
        snap.digest = sha256_hex(manifest);
        write_file_create_once(staging / layout::kManifestFile, manifest, 0444);
        if (snap.kind == "directory") {
            make_read_only(staging / layout::kSnapshotFilesDir);
        }
        ::chmod(staging.c_str(), 0555);
        const fs::path final_dir = objects / snap.digest;
        try {
            rename_no_replace(staging, final_dir);
            fsync_directory(objects);  // the snapshot's entry, durable before its ledger line
            store.ledger_file(layout::snapshot_manifest(snap.digest));
        } catch (const Error& e) {
            if (e.code() != ErrorCode::already_exists) {
                throw;
            }
            // Same content already stored: keep the stored copy, drop ours.
            ::chmod(staging.c_str(), 0755);
            for (const auto& entry : fs::recursive_directory_iterator(staging)) {
                ::chmod(entry.path().c_str(), entry.is_directory() ? 0755 : 0644);
            }
            fs::remove_all(staging);
        }
    } catch (...) {
        std::error_code ec;
        if (fs::exists(staging, ec)) {
            ::chmod(staging.c_str(), 0755);
            for (const auto& entry : fs::recursive_directory_iterator(staging, ec)) {
                ::chmod(entry.path().c_str(), 0755);
            }
            fs::remove_all(staging, ec);
        }
        throw;
    }
    return snap;
}

Snapshot snapshot_manifest_of(const fs::path& source, const SnapshotOptions& options) {
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0) {
        throw Error(ErrorCode::not_found,
                    fmt::format("cannot read {}: {}", source.string(), std::strerror(errno)),
                    Json{{"path", source.string()}});
    }
    if (S_ISLNK(st.st_mode)) {
        throw Error(ErrorCode::symlink_refused,
                    fmt::format("{} is a symbolic link", source.string()),
                    Json{{"path", source.string()}});
    }
    Walker walker{options, fs::path(), {}, {}};
    Snapshot snap;
    snap.source = source;
    snap.kind = "file";
    if (S_ISDIR(st.st_mode)) {
        snap.kind = "directory";
        walker.directory(source, "");
    } else {
        walker.file(source, "", st);
    }
    snap.digest = sha256_hex(
        canonical_json(manifest_json(snap.kind, walker.entries, options, walker.ignored)));
    snap.entries = std::move(walker.entries);
    return snap;
}

std::string snapshot_digest_of(const fs::path& source, const SnapshotOptions& options) {
    return snapshot_manifest_of(source, options).digest;
}

std::vector<EntryChange> changed_entries(const Snapshot& before, const Snapshot& after) {
    // Both lists are in walk order; compare them as maps so the result is sorted by path.
    std::map<std::string, const ManifestEntry*> was;
    std::map<std::string, const ManifestEntry*> now;
    for (const auto& e : before.entries) {
        was[e.path] = &e;
    }
    for (const auto& e : after.entries) {
        now[e.path] = &e;
    }
    std::vector<EntryChange> out;
    for (const auto& [path, e] : was) {
        const auto it = now.find(path);
        if (it == now.end()) {
            out.push_back({path, EntryChangeKind::vanished});
        } else if (it->second->sha256 != e->sha256 || it->second->mode != e->mode) {
            out.push_back({path, EntryChangeKind::changed});
        }
    }
    for (const auto& [path, e] : now) {
        if (was.count(path) == 0) {
            out.push_back({path, EntryChangeKind::appeared});
        }
    }
    std::sort(out.begin(), out.end(),
              [](const EntryChange& a, const EntryChange& b) { return a.path < b.path; });
    return out;
}

std::vector<std::string> list_snapshots(const Store& store) {
    std::vector<std::string> digests;
    for (const auto& entry : fs::directory_iterator(store.root() / layout::kObjectsDir)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with(".")) {
            digests.push_back(std::move(name));
        }
    }
    return digests;
}

Snapshot load_snapshot(const Store& store, const std::string& digest) {
    if (digest.size() != 64 || digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("\"{}\" is not a sha256 digest", digest));
    }
    const fs::path manifest_path = store.root() / layout::snapshot_manifest(digest);
    const std::string bytes = read_file_capped(manifest_path, std::uint64_t{256} << 20);
    if (sha256_hex(bytes) != digest) {
        throw Error(
            ErrorCode::invalid_record,
            fmt::format("{} does not hash to its digest: the store is damaged (run cko fsck)",
                        manifest_path.string()),
            Json{{"path", manifest_path.string()}});
    }
    const Json manifest = parse_json_strict(bytes, {}, manifest_path.string());
    Snapshot snap;
    snap.digest = digest;
    snap.kind = manifest.at("kind").get<std::string>();
    for (const auto& e : manifest.at("entries")) {
        snap.entries.push_back(
            ManifestEntry{e.at("path").get<std::string>(), e.at("mode").get<unsigned>(),
                          e.at("size").get<std::uint64_t>(), e.at("sha256").get<std::string>()});
    }
    return snap;
}

void materialize_snapshot(const Store& store, const Snapshot& snapshot,
                          const fs::path& destination) {
    const fs::path payload = store.real_path_of(layout::snapshot_files(snapshot.digest));
    if (fs::exists(fs::symlink_status(destination))) {
        throw Error(
            ErrorCode::already_exists,
            fmt::format("{} exists; materialization needs a fresh path", destination.string()));
    }
    try {
        if (snapshot.kind == "file") {
            make_directories(destination.parent_path());
            place_copy(snapshot, payload, destination, snapshot.entries.at(0));
            return;
        }
        make_directories(destination);
        for (const auto& e : snapshot.entries) {
            const fs::path to = destination / e.path;
            make_directories(to.parent_path());
            place_copy(snapshot,
                       store.real_path_of(layout::snapshot_files(snapshot.digest) + "/" + e.path),
                       to, e);
        }
        make_read_only(destination);
    } catch (const Error& e) {
        remove_tree_forcibly(destination);
        if (e.code() == ErrorCode::io_error && e.details().value("errno", 0) == ENOSPC) {
            fault_space_freed();  // the copy cut short is gone, and the space it took with it
        }
        throw;
    } catch (...) {
        remove_tree_forcibly(destination);
        throw;
    }
}

}  // namespace cko::store
