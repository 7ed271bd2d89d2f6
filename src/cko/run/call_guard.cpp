// The store around a driver call: a listing before and after (directory entries only), and the
// call's outputs checked for links and special files.
#include "cko/run/call_guard.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

namespace cko::run {
namespace fs = std::filesystem;
namespace {

bool is_temporary(std::string_view name) {
    return name.find(".tmp-") != std::string_view::npos || name.ends_with(".cas-tmp");
}

// A call's capture file (driver/NNNN/stdout.txt, a session's logs): created by cko around the
// driver, ledgered when that call ends.
bool is_capture_file(std::string_view rel) {
    const std::string driver = fmt::format("/{}/", store::layout::kDriverDir);
    const fs::path p(rel);
    const std::string name = p.filename().string();
    return rel.starts_with(store::layout::kInvocationsDir) &&
           rel.find(driver) != std::string_view::npos &&
           (name == store::layout::kStdoutFile || name == store::layout::kStderrFile);
}

std::vector<std::string> unaccounted(const store::Store& store, const std::set<std::string>& before,
                                     const std::set<std::string>& after) {
    std::vector<std::string> out;
    for (const auto& rel : after) {
        const std::string name = fs::path(rel).filename().string();
        if (before.contains(rel) || store::layout::is_mutable_by_design(rel) ||
            store::layout::is_driver_output(rel) || is_capture_file(rel) || is_temporary(name) ||
            store.is_ledgered(rel)) {
            continue;
        }
        out.push_back(rel);
    }
    return out;
}

}  // namespace

std::shared_ptr<const std::set<std::string>> list_store_files(const store::Store& store,
                                                              std::string_view call_output) {
    auto out = std::make_shared<std::set<std::string>>();
    const fs::path root = store.root();
    // `profile collect`'s profiler writes its report there while the call runs; ledgered after.
    const std::string profiler_dir =
        fs::path(store::layout::invocation_profile_dir("inv-x")).filename().string();
    std::error_code ec;
    // Never follows a link (the iterator does not descend into one): a link is listed as a file.
    for (auto it = fs::recursive_directory_iterator(
             root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string rel = it->path().lexically_relative(root).string();
        const bool dir = it->is_directory(ec) && !it->is_symlink(ec);
        const std::string name = it->path().filename().string();
        const bool in_invocation = store::layout::is_invocation_dir(
            it->path().parent_path().lexically_relative(root).string());
        if (dir &&
            (rel == store::layout::kObjectsTop || rel == call_output ||
             name.starts_with(".staging-") ||
             (in_invocation && (name == store::layout::kWorkspaceDir || name == profiler_dir)))) {
            it.disable_recursion_pending();
            continue;
        }
        if (!dir) {
            out->insert(rel);
        }
    }
    return out;
}

void refuse_planted_files(const store::Store& store, const std::set<std::string>& before,
                          std::string_view call_output) {
    std::vector<std::string> planted =
        unaccounted(store, before, *list_store_files(store, call_output));
    if (planted.empty()) {
        return;
    }
    {
        // A concurrent operation writes a record and its ledger line under this lock: once we hold
        // it, every file it wrote is ledgered.
        const store::StoreLock lock = store.lock();
        planted = unaccounted(store, before, *list_store_files(store, call_output));
    }
    if (planted.empty()) {
        return;
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
