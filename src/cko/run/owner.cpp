// Process identities from /proc, liveness that survives pid reuse, and group cleanup.
#include "cko/run/owner.hpp"

#include <dirent.h>
#include <unistd.h>
#include <csignal>
#include <fstream>
#include <sstream>

namespace cko::run {
namespace {

struct StatFields {
    pid_t ppid = 0;
    pid_t pgrp = 0;
    std::uint64_t start_ticks = 0;
    char state = '?';
};

// /proc/<pid>/stat: "pid (comm) state ppid pgrp ... starttime(22) ..."; comm may hold spaces and
// parentheses, so fields are counted from the last ')'.
std::optional<StatFields> read_stat(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(in, text)) {
        return std::nullopt;
    }
    const auto close = text.rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream rest(text.substr(close + 2));
    StatFields f;
    std::string field;
    rest >> f.state;
    rest >> f.ppid >> f.pgrp;
    for (int i = 6; i < 22 && rest >> field; ++i) {
    }
    if (!(rest >> f.start_ticks)) {
        return std::nullopt;
    }
    return f;
}

std::string read_line(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

Json ProcessIdentity::to_json() const {
    return Json{
        {"pid", pid}, {"start_ticks", start_ticks}, {"boot_id", boot_id}, {"hostname", hostname}};
}

ProcessIdentity ProcessIdentity::from_json(const Json& j) {
    return ProcessIdentity{j.at("pid").get<pid_t>(), j.at("start_ticks").get<std::uint64_t>(),
                           j.at("boot_id").get<std::string>(), j.at("hostname").get<std::string>()};
}

std::optional<ProcessIdentity> process_identity_of(pid_t pid) {
    const auto stat = read_stat(pid);
    if (!stat || stat->state == 'Z') {
        return std::nullopt;
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return ProcessIdentity{pid, stat->start_ticks, read_line("/proc/sys/kernel/random/boot_id"),
                           host};
}

ProcessIdentity current_process_identity() {
    return *process_identity_of(::getpid());
}

bool is_alive(const ProcessIdentity& who) {
    const auto now = process_identity_of(who.pid);
    return now && now->start_ticks == who.start_ticks && now->boot_id == who.boot_id;
}

bool is_descendant_of(pid_t pid, pid_t ancestor) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
        if (pid == ancestor) {
            return true;
        }
        const auto stat = read_stat(pid);
        if (!stat) {
            return false;
        }
        pid = stat->ppid;
    }
    return pid == ancestor;
}

int kill_process_group_leftovers(pid_t pgid, std::uint64_t not_before_ticks) {
    if (pgid <= 1) {
        return 0;
    }
    int killed = 0;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) {
        return 0;
    }
    while (const dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 1) {
            continue;
        }
        const auto stat = read_stat(static_cast<pid_t>(pid));
        if (stat && stat->pgrp == pgid && stat->start_ticks >= not_before_ticks &&
            stat->state != 'Z') {
            if (::kill(static_cast<pid_t>(pid), SIGKILL) == 0) {
                ++killed;
            }
        }
    }
    ::closedir(proc);
    return killed;
}

}  // namespace cko::run
