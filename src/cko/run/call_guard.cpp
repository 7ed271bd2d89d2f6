// The store around a driver call: a listing before and after (directory entries only), and the
// call's outputs checked for links and special files.
#include "cko/run/call_guard.hpp"

#include "cko/run/shared_fs.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

namespace cko::run {
namespace fs = std::filesystem;
namespace {

bool is_temporary(std::string_view name) {
    return name.find(".tmp-") != std::string_view::npos || name.ends_with(".cas-tmp");
}

// A call's own files (request, process.json, captures) are ledgered when that call ends, so until
// then they are cko's: those of the call being guarded, and those of a call of another invocation
// still running (no result.json yet; a concurrent operation). Such a file anywhere else (another
// call of this invocation, a finished invocation) was planted.
bool is_open_call_file(const store::Store& store, std::string_view rel,
                       std::string_view call_output) {
    if (!store::layout::is_call_file(rel)) {
        return false;
    }
    const fs::path file(rel);
    const std::string call_dir = file.parent_path().string();
    const fs::path own_call = fs::path(call_output).parent_path();
    if (call_dir == own_call.string()) {
        return true;
    }
    // invocations/<id>/driver/<call>/<name>
    const std::string invocation =
        file.parent_path().parent_path().parent_path().filename().string();
    if (own_call.parent_path().parent_path().filename().string() == invocation) {
        return false;  // another call of the guarded invocation: its calls run one at a time
    }
    return !fs::exists(store.root() / store::layout::invocation_result(invocation));
}

std::vector<std::string> unaccounted(const store::Store& store, const StoreListing& before,
                                     const StoreListing& after, std::string_view call_output) {
    std::vector<std::string> out;
    for (const auto& rel : files_added(before, after)) {
        const std::string name = fs::path(rel).filename().string();
        if (store::layout::is_mutable_by_design(rel) || store::layout::is_driver_output(rel) ||
            is_open_call_file(store, rel, call_output) || is_temporary(name) ||
            store.is_ledgered(rel)) {
            continue;
        }
        out.push_back(rel);
    }
    return out;
}

std::atomic<std::uint64_t> directories_read{0};

// One directory's entries as last read, and the stat that read them: a directory whose inode,
// mtime and ctime are unchanged has the same entries (adding, removing or renaming an entry
// changes its mtime), so it is not read again. Git's racy rule: a directory changed just before
// it was read may change again within the same timestamp tick, so its entries are trusted only
// when it had been quiet for longer than a tick when they were read (racy_window_ns).
struct DirListing {
    ino_t ino = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    bool trusted = false;
    std::shared_ptr<const DirEntries> entries;
};

std::int64_t ns_of(const struct timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// A store's directories by relative path, kept for the process (a session's calls list the same
// store again and again).
class ListingCache {
public:
    // `stamped_here`: the store's filesystem takes its timestamps from this host's clock.
    explicit ListingCache(bool stamped_here) : stamped_here_(stamped_here) {}

    // The entries of `dir` (absolute) known as `rel`; nullptr when it is not a readable directory.
    const DirListing* entries(const fs::path& dir, const std::string& rel) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            dirs_.erase(rel);
            return nullptr;
        }
        auto it = dirs_.find(rel);
        if (it != dirs_.end() && it->second.trusted && it->second.ino == st.st_ino &&
            it->second.mtime_ns == ns_of(st.st_mtim) && it->second.ctime_ns == ns_of(st.st_ctim)) {
            return &it->second;
        }
        DirListing l;
        l.ino = st.st_ino;
        l.mtime_ns = ns_of(st.st_mtim);
        l.ctime_ns = ns_of(st.st_ctim);
        l.trusted = unix_nanoseconds_now() - std::max(l.mtime_ns, l.ctime_ns) >
                    racy_window_ns(l.mtime_ns, l.ctime_ns, stamped_here_);
        auto entries = std::make_shared<DirEntries>();
        if (!read_entries(dir, *entries)) {
            dirs_.erase(rel);
            return nullptr;
        }
        // Unchanged entries keep their pointer even when the directory was read again (a racy
        // one): files_added skips a directory whose entries are the same object.
        l.entries = it != dirs_.end() && it->second.entries && *it->second.entries == *entries
                        ? it->second.entries
                        : std::shared_ptr<const DirEntries>(std::move(entries));
        return &(dirs_[rel] = std::move(l));
    }

private:
    static bool read_entries(const fs::path& dir, DirEntries& out) {
        DIR* d = ::opendir(dir.c_str());
        if (d == nullptr) {
            return false;
        }
        directories_read.fetch_add(1, std::memory_order_relaxed);
        while (const struct dirent* e = ::readdir(d)) {
            const std::string_view name(e->d_name);
            if (name == "." || name == "..") {
                continue;
            }
            bool is_dir = e->d_type == DT_DIR;
            if (e->d_type == DT_UNKNOWN) {
                struct stat st {};
                is_dir = ::lstat((dir / e->d_name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            }
            out.emplace_back(std::string(name), is_dir);
        }
        ::closedir(d);
        std::sort(out.begin(), out.end());
        return true;
    }

    bool stamped_here_;
    std::map<std::string, DirListing> dirs_;
};

struct Walk {
    const fs::path& root;
    std::string_view call_output;
    const std::string& profiler_dir;
    ListingCache& cache;
    StoreListing& out;

    void dir(const std::string& rel) {
        const DirListing* l = cache.entries(rel.empty() ? root : root / rel, rel);
        if (l == nullptr) {
            return;
        }
        // Held here: a child's read replaces only its own cache entry, never this one's.
        const std::shared_ptr<const DirEntries> entries = l->entries;
        out.dirs.emplace(rel, entries);
        const bool in_invocation = store::layout::is_invocation_dir(rel);
        for (const auto& [name, is_dir] : *entries) {
            if (!is_dir) {
                continue;
            }
            const std::string child = rel.empty() ? name : rel + "/" + name;
            if (!(child == store::layout::kObjectsTop || child == call_output ||
                  name.starts_with(".staging-") ||
                  (in_invocation &&
                   (name == store::layout::kWorkspaceDir || name == profiler_dir)))) {
                dir(child);
            }
        }
    }
};

std::mutex cache_mutex;

ListingCache& cache_of(const fs::path& root) {
    static std::map<std::string, ListingCache> caches;  // guarded by cache_mutex
    auto it = caches.find(root.string());
    if (it == caches.end()) {
        it = caches.emplace(root.string(), ListingCache(is_local_filesystem(filesystem_type(root))))
                 .first;
    }
    return it->second;
}

}  // namespace

std::int64_t racy_window_ns(std::int64_t mtime_ns, std::int64_t ctime_ns, bool stamped_here) {
    constexpr std::int64_t kStep = 10'000'000;       // 10 ms: the coarsest tick (HZ=100)
    constexpr std::int64_t kFine = 2 * kStep;        // a tick, and one more for the lag
    constexpr std::int64_t kCoarse = 2'100'000'000;  // FAT's 2 s, another host's clock
    const bool fine = mtime_ns % kStep != 0 || ctime_ns % kStep != 0;
    return stamped_here && fine ? kFine : kCoarse;
}

std::uint64_t store_directories_read() {
    return directories_read.load(std::memory_order_relaxed);
}

std::set<std::string> StoreListing::files() const {
    std::set<std::string> out;
    for (const auto& [rel, entries] : dirs) {
        for (const auto& [name, is_dir] : *entries) {
            if (!is_dir) {
                out.insert(rel.empty() ? name : rel + "/" + name);
            }
        }
    }
    return out;
}

std::vector<std::string> files_added(const StoreListing& before, const StoreListing& after) {
    std::vector<std::string> out;
    for (const auto& [rel, entries] : after.dirs) {
        const auto was = before.dirs.find(rel);
        if (was != before.dirs.end() && was->second == entries) {
            continue;  // the same entries: nothing added here
        }
        for (const auto& [name, is_dir] : *entries) {
            if (!is_dir && (was == before.dirs.end() ||
                            !std::binary_search(was->second->begin(), was->second->end(),
                                                std::pair<std::string, bool>(name, false)))) {
                out.push_back(rel.empty() ? name : rel + "/" + name);
            }
        }
    }
    return out;
}

std::shared_ptr<const StoreListing> list_store_files(const store::Store& store,
                                                     std::string_view call_output) {
    auto out = std::make_shared<StoreListing>();
    const fs::path root = store.root();
    // `profile collect`'s profiler writes its report there while the call runs; ledgered after.
    const std::string profiler_dir =
        fs::path(store::layout::invocation_profile_dir("inv-x")).filename().string();
    // Never follows a link (a link is an entry, listed as a file); a directory read before and
    // unchanged since is not read again (ListingCache).
    const std::lock_guard lock(cache_mutex);
    Walk{root, call_output, profiler_dir, cache_of(root), *out}.dir("");
    return out;
}

std::shared_ptr<const StoreListing> refuse_planted_files(const store::Store& store,
                                                         const StoreListing& before,
                                                         std::string_view call_output) {
    std::shared_ptr<const StoreListing> after = list_store_files(store, call_output);
    std::vector<std::string> planted = unaccounted(store, before, *after, call_output);
    if (planted.empty()) {
        return after;
    }
    {
        // A concurrent operation writes a record and its ledger line under this lock: once we hold
        // it, every file it wrote is ledgered.
        const store::StoreLock lock = store.lock();
        after = list_store_files(store, call_output);
        planted = unaccounted(store, before, *after, call_output);
    }
    if (planted.empty()) {
        return after;
    }
    throw Error(
        ErrorCode::unsafe_output,
        fmt::format("the driver call left {} in the store outside its output directory {} "
                    "(first: {}); a driver writes only into output_dir. The file is kept "
                    "for inspection; `cko fsck` lists it",
                    planted.size() == 1 ? "a file" : fmt::format("{} files", planted.size()),
                    call_output, planted.front()),
        Json{{"paths", planted}, {"call_output", std::string(call_output)}});
}

void refuse_unsafe_outputs(const fs::path& output_dir, const std::vector<std::string>& files,
                           std::string_view call_output) {
    for (const auto& name : files) {
        if (name == store::layout::kResultFile) {
            continue;  // a linked result.json is judged with the result: invalid_driver_result
        }
        struct stat st {};
        if (::lstat((output_dir / name).c_str(), &st) != 0) {
            continue;  // gone since it was listed: nothing to read through
        }
        const char* what = S_ISLNK(st.st_mode)    ? "a symbolic link"
                           : !S_ISREG(st.st_mode) ? "a special file (not a regular file)"
                           : st.st_nlink > 1      ? "a hard link (a file with another name)"
                                                  : nullptr;
        if (what != nullptr) {
            const std::string path = fmt::format("{}/{}", call_output, name);
            throw Error(ErrorCode::unsafe_output,
                        fmt::format("the driver left {} in its output directory: {}; an artifact "
                                    "must be a regular file the driver wrote itself (nothing is "
                                    "read, ledgered or kept through a link)",
                                    what, path),
                        Json{{"path", path}, {"kind", what}});
        }
    }
}

}  // namespace cko::run
