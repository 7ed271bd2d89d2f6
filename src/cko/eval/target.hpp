// Freezing a Target (cko target freeze) and opening a frozen one for later operations.
#pragma once

#include "cko/driver/call.hpp"
#include "cko/eval/target_spec.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/records.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::eval {

struct FreezeOptions {
    std::filesystem::path spec;
    std::filesystem::path root;
    const std::atomic<bool>* cancel = nullptr;
    // Tests and GPU-less machines: identity probing without tool version calls is faster.
    bool probe_tools = true;
};

struct FreezeOutcome {
    std::filesystem::path root;
    Json target;  // the target.json record
    std::vector<std::string> smoke_invocations;
    // Leftovers of earlier freezes whose process is gone, removed by this one: a killed freeze's
    // hidden staging root beside the root, a failed freeze's kept logs of the same Target name.
    std::vector<std::string> reclaimed;
};

// Validates the spec, checks that every workload piece exists, snapshots the original, the cases
// and the driver's identity paths, records the environment identity, runs the 2-sample smoke of
// the original on every case, and only then moves the finished root into place: a failed freeze
// leaves nothing at `root`.
[[nodiscard]] FreezeOutcome freeze_target(const FreezeOptions& options);

// One driver file that differs from the frozen identity.
struct DriverFileChange {
    std::string path;  // relative to the spec's directory: "bench/driver.py"
    store::EntryChangeKind kind = store::EntryChangeKind::changed;
    std::string reason;  // why an identity path can no longer be read ("" otherwise)
    [[nodiscard]] std::string describe() const;  // "bench/driver.py changed"
};

// The driver_changed error of an operation refused because of `changes` (not empty); `consequence`
// says what did not happen ("nothing was measured"). Details: files [{path, change}], problems.
[[nodiscard]] Error driver_changed_error(const std::vector<DriverFileChange>& changes,
                                         std::string_view consequence);

// What later operations need from a frozen Target.
class Target {
public:
    [[nodiscard]] static Target open(const store::Store& store);

    [[nodiscard]] const store::TargetRecord& record() const noexcept { return record_; }
    [[nodiscard]] const std::string& id() const noexcept { return id_; }
    [[nodiscard]] const store::Store& store() const noexcept { return store_; }
    [[nodiscard]] const TargetSpec& spec() const noexcept { return spec_; }
    [[nodiscard]] store::Snapshot original() const;
    [[nodiscard]] store::Snapshot case_snapshot(const std::string& case_id) const;
    [[nodiscard]] driver::DriverSpec driver() const;
    [[nodiscard]] std::vector<std::string> gpu_uuids() const;

    // What makes a measurement on this machine invalid: the machine (host, GPUs) differs from the
    // frozen identity. Empty when measurements may proceed.
    [[nodiscard]] std::vector<std::string> environment_problems(bool probe_tools = false) const;
    // Every file of `[driver] identity_paths` that appeared, changed or vanished since the freeze
    // (an error of the Target, never a fact about a candidate). Empty when the driver is as frozen.
    [[nodiscard]] std::vector<DriverFileChange> driver_changes() const;

private:
    Target(const store::Store& store, store::TargetRecord record, TargetSpec spec);
    const store::Store& store_;
    store::TargetRecord record_;
    std::string id_;
    TargetSpec spec_;
};

struct SpecProblem {
    ErrorCode code;
    std::string field;
    std::string problem;
    std::string fix;
};

// Every workload piece the spec names that is missing or broken (original, change scope, case
// files, driver program, identity paths, deadline). Empty when a freeze may proceed.
[[nodiscard]] std::vector<SpecProblem> workload_problems(const TargetSpec& spec);

// The four runtime limits of the spec.
[[nodiscard]] run::Limits limits_for(const TargetSpec& spec);

// Snapshots every identity path into the store: [{path, snapshot}], the Target's driver_identity.
// Each snapshot's stored manifest holds the per-file digests that driver_changes() compares.
[[nodiscard]] Json hash_identity_paths(const store::Store& store, const TargetSpec& spec);

}  // namespace cko::eval
