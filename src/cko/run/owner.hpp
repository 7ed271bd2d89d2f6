// Who owns an invocation: a process identity that survives pid reuse (pid + start time + boot id).
#pragma once

#include "cko/util/json.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cko::run {

struct ProcessIdentity {
    pid_t pid = 0;
    std::uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat: start time since boot
    std::string boot_id;            // /proc/sys/kernel/random/boot_id
    std::string hostname;
    [[nodiscard]] Json to_json() const;
    [[nodiscard]] static ProcessIdentity from_json(const Json& j);
};

[[nodiscard]] ProcessIdentity current_process_identity();
[[nodiscard]] std::optional<ProcessIdentity> process_identity_of(pid_t pid);
// True only if the same process (not a later one reusing its pid) is still running on this boot.
[[nodiscard]] bool is_alive(const ProcessIdentity& who);

// True if `pid` is `ancestor` or one of its descendants (walks the parent chain in /proc).
[[nodiscard]] bool is_descendant_of(pid_t pid, pid_t ancestor);

// SIGKILLs every process whose process group is `pgid` and that started no earlier than
// `not_before_ticks` (so a reused group id of unrelated, older processes is spared). Returns how
// many were signalled.
int kill_process_group_leftovers(pid_t pgid, std::uint64_t not_before_ticks);

}  // namespace cko::run
