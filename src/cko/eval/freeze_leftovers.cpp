// What target freezes leave behind: a failed freeze's logs kept in the temp directory, and the
// reclaiming of what killed and failed freezes left once their process is gone.
#include "cko/eval/freeze_leftovers.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <functional>
#include <string_view>

namespace cko::eval {
namespace fs = std::filesystem;

// Copies the invocations of a failed freeze (request, stdout/stderr of each smoke call) to a fresh
// directory under $TMPDIR; returns it, or "" when there was nothing to keep.
std::string keep_failed_freeze_logs(const fs::path& staging, const std::string& name) {
    std::error_code ec;
    const fs::path invocations = staging / store::layout::kInvocationsDir;
    if (!fs::is_directory(invocations, ec) || fs::is_empty(invocations, ec)) {
        return "";
    }
    const fs::path keep = temp_base() / fmt::format("cko-failed-freeze-{}-{}-{}", name, ::getpid(),
                                                    unix_seconds_now());
    fs::create_directories(keep, ec);
    fs::copy(invocations, keep / store::layout::kInvocationsDir,
             fs::copy_options::recursive | fs::copy_options::skip_symlinks, ec);
    if (ec) {
        return "";
    }
    for (const auto& e : fs::recursive_directory_iterator(keep, ec)) {
        fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add, ec);
    }
    return keep.string();
}

namespace {

// The pid in `name` = prefix + <pid> + rest, where rest must match `rest_ok`; 0 otherwise.
pid_t pid_in(const std::string& name, const std::string& prefix,
             const std::function<bool(std::string_view)>& rest_ok) {
    if (!name.starts_with(prefix)) {
        return 0;
    }
    std::size_t end = prefix.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])) != 0) {
        ++end;
    }
    if (end == prefix.size() || end - prefix.size() > 9 ||
        !rest_ok(std::string_view(name).substr(end))) {
        return 0;
    }
    return static_cast<pid_t>(std::stol(name.substr(prefix.size(), end - prefix.size())));
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

// Removes, in `dir`, the entries whose name carries the pid of a process that is gone (a live pid
// may be a freeze still running: left alone). Returns their paths.
std::vector<std::string> remove_if_owner_gone(
    const fs::path& dir, const std::string& prefix,
    const std::function<bool(std::string_view)>& rest_ok) {
    std::vector<std::string> removed;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const pid_t pid = pid_in(entry.path().filename().string(), prefix, rest_ok);
        if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH ||
            !fs::is_directory(entry.symlink_status(ec))) {
            continue;
        }
        remove_tree_forcibly(entry.path());
        removed.push_back(entry.path().string());
    }
    return removed;
}

}  // namespace

// What earlier freezes left behind, once their process is gone: a killed freeze's staging root
// beside the root (.<root>.freeze-<pid>, and the store staging of it, ..<root>.freeze-<pid>
// .staging-*), and the kept logs of failed freezes of this Target name in the temp directory
// (cko-failed-freeze-<name>-<pid>-<unix_s>), and the identity probe's scratch folders of cko
// processes killed while a tool ran (cko-env-<pid>-XXXXXX): the next freeze is the point where
// they are known to be stale.
std::vector<std::string> reclaim_freeze_leftovers(const fs::path& parent,
                                                  const std::string& root_name,
                                                  const std::string& target_name) {
    std::vector<std::string> removed =
        remove_if_owner_gone(parent, fmt::format(".{}.freeze-", root_name),
                             [](std::string_view rest) { return rest.empty(); });
    for (auto& p : remove_if_owner_gone(
             parent, fmt::format("..{}.freeze-", root_name),
             [](std::string_view rest) { return rest.starts_with(".staging-"); })) {
        removed.push_back(std::move(p));
    }
    {
        for (auto& p : remove_if_owner_gone(
                 temp_base(), fmt::format("cko-failed-freeze-{}-", target_name),
                 [](std::string_view rest) {
                     return rest.size() > 1 && rest[0] == '-' && all_digits(rest.substr(1));
                 })) {
            removed.push_back(std::move(p));
        }
    }
    // The scratch folder of a tool run by the identity probe (env/tools.cpp run_captured,
    // cko-env-<pid>-XXXXXX), left when its cko was killed while the tool ran (a freeze probes the
    // identity before its smoke).
    for (auto& p : remove_if_owner_gone(temp_base(), "cko-env-", [](std::string_view rest) {
             return rest.size() == 7 && rest[0] == '-';
         })) {
        removed.push_back(std::move(p));
    }
    return removed;
}

}  // namespace cko::eval
