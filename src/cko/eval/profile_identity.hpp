// Who made a profile (the tool and its version, the devices it names), compared with the Target
// it is offered to: the rule that keeps another machine's or an untested tool's export out of the
// evidence a claim may cite (docs/reliability.md, "Evidence identity").
#pragma once

#include "cko/store/records.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::eval {

// One reason a profile cannot be bound to the Target as its own evidence.
struct IdentityProblem {
    ErrorCode code;       // tool_version_unknown or environment_mismatch
    std::string field;    // "tool_version", "schema_version", "device"
    std::string what;     // what was seen and what was expected
    std::string message;  // `what` and the fix
    Json details;         // {field, seen, expected, fix}
};

struct ProfileIdentity {
    Json tools = Json::array();      // [{tool, field, version, status, tested}]
    Json devices = Json::array();    // [{name, compute_capability}]: what the export names
    bool gpu_work = false;           // the export shows GPU work (an NCU export always does)
    std::vector<std::string> notes;  // what could not be compared, and why
    std::vector<IdentityProblem> problems;

    // {tools, devices, target_devices, notes}: the record's `identity`.
    [[nodiscard]] Json to_json(const Json& target_devices) const;
};

// The export's identity from its parsed document (the verb's --json) and its sources; a
// collected profile's `collection.tool_version` stands in for a source that states none.
[[nodiscard]] ProfileIdentity read_profile_identity(const std::string& kind, const Json& document,
                                                    const Json& sources, const Json& collection);

// The GPUs the Target measures on ({name, compute_capability} from its frozen environment; a
// Target without `gpus`, a diagnostic one, has every GPU of its environment).
[[nodiscard]] Json target_devices(const store::TargetRecord& target);

// Adds the problems of binding `identity` to `target`: a tool version not stated or outside the
// tested ranges (profile/tested_versions.hpp), a device the Target does not have (a CPU-only
// Target has none), a tool version other than the one the Target's environment recorded.
// `collected`: taken by `cko profile collect` (the fixes then name the profiler, not flags).
void compare_with_target(ProfileIdentity& identity, const store::TargetRecord& target,
                         bool collected);

// One error for the problems (the first device or tool mismatch as environment_mismatch, else
// tool_version_unknown), its message naming every problem and the fix.
[[nodiscard]] Error identity_refusal(const std::vector<IdentityProblem>& problems);

}  // namespace cko::eval
