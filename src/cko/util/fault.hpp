// Fault points for the crash, full-disk and race tests: the n-th durable write can end the process
// or fail with ENOSPC; a named pause point can sleep to widen a race window.
#pragma once

#include <string_view>

namespace cko {

// Called before every durable step of the write path (temp file written, fsync, rename, ledger
// append, directory fsync). Inert unless the environment asks for a fault:
//   CKO_FAULT_AT=<n>      the n-th point (1-based, counted per process) calls _exit(137), as a
//   SIGKILL
//                         would leave things;
//   CKO_ENOSPC_AT=<n>     the n-th point and every later one report ENOSPC (returns false),
//                         until fault_space_freed() is called;
//   CKO_FAULT_COUNT=FILE  at exit, the number of points reached is appended to FILE (so a harness
//                         knows how many instants an operation has).
// Returns false when the caller must fail the step with ENOSPC.
[[nodiscard]] bool fault_point() noexcept;

// Called once a write that failed with ENOSPC has been undone and what it wrote removed (a
// workspace copy cut short by a full disk: store::materialize_snapshot). On a real disk the space
// that copy took is free again, so the points after it stop reporting ENOSPC (CKO_ENOSPC_AT): the
// operation can then record its failure, as it would on that disk. Inert otherwise.
void fault_space_freed() noexcept;

// Called between a read and the decision taken on it, where a second process could change what was
// read (tests/crash/race_test.py widens the window to make a race happen every time). Inert
// unless the environment names this point:
//   CKO_FAULT_PAUSE=<name>:<ms>  the pause point called <name> sleeps <ms> milliseconds.
void fault_pause(std::string_view name) noexcept;

}  // namespace cko
