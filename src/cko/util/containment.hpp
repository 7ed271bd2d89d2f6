// Containment of a child's whole tree: a marker in its environment, a watchdog that outlives us,
// escapee cleanup.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace cko {

// The environment variable every child of run_process carries (with a value unique to the call),
// inherited by everything it starts, even across setsid or a double fork.
inline constexpr const char* kContainmentVariable = "CKO_CONTAINMENT_TOKEN";

// A fresh token for one call.
[[nodiscard]] std::string new_containment_token();

// SIGKILLs every process of this user whose environment holds kContainmentVariable=token
// (daemons that left the process group). Returns how many were signalled. Processes that scrub
// their environment before daemonizing are not found: see docs/reliability.md.
int kill_marked_processes(const std::string& token) noexcept;

// A forked watchdog process in its own session that kills process group `pgid` (SIGTERM, then
// SIGKILL after `grace`) as soon as this process dies, or once `deadline` (from now; 0 = none)
// passes. So a SIGKILLed cko never leaves its driver running past its timeout. Destroying the
// Watchdog (the call ended normally) ends it.
class Watchdog {
public:
    Watchdog(pid_t pgid, std::chrono::milliseconds deadline,
             std::chrono::milliseconds grace) noexcept;
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    pid_t pid_ = -1;
};

}  // namespace cko
