// Containment of a child's whole tree: a marker in its environment, a watchdog that outlives us,
// escapee cleanup.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
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

// Orphans: run_process makes this process the child subreaper of everything it starts
// (PR_SET_CHILD_SUBREAPER), so a descendant whose parent ended (a double-forked daemon, even one
// that left the session and cleared its environment) becomes our child instead of init's. Our own
// children (call leaders, watchdogs, a detached operation) are registered; every other child is
// such an orphan, and the call it came from ends it.
void become_child_subreaper() noexcept;

// fork() for a child this process means to have (the watchdog, a detached operation): registered
// as ours atomically with its creation, so no orphan sweep can take it for an orphan. The child
// returns 0 as from fork(). Unregister with forget_own_child once it has been reaped.
[[nodiscard]] pid_t fork_own_child() noexcept;
void forget_own_child(pid_t pid) noexcept;

// One call in flight (run_process): its leader, spawned by `spawn` under the registry's lock, is
// registered as our child, and the call's start is its leader's start time. end_orphans() (called
// once the leader has ended) SIGKILLs and reaps every orphan that can only be this call's: a child
// we did not start, started no earlier than this call, when no other call in flight started before
// it (then it is left to the last such call to end, so a session's daemon lives as long as the
// session). Its zombies are reaped. Returns how many were killed. The destructor ends them too,
// and unregisters the leader: destroy it only after the leader was reaped.
class CallOrphans {
public:
    explicit CallOrphans(const std::function<pid_t()>& spawn);
    ~CallOrphans();
    CallOrphans(const CallOrphans&) = delete;
    CallOrphans& operator=(const CallOrphans&) = delete;

    [[nodiscard]] pid_t leader() const noexcept { return leader_; }
    int end_orphans() noexcept;

private:
    pid_t leader_ = -1;
    unsigned long long start_ticks_ = 0;
    bool ended_ = false;
};

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
