// `cko doctor`: readiness of this machine for measurements, as items with a status and a fix.
#pragma once

#include "cko/env/identity.hpp"
#include "cko/util/json.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::env {

enum class DoctorStatus { ok, warn, blocker };
[[nodiscard]] std::string_view doctor_status_name(DoctorStatus status) noexcept;

struct DoctorItem {
    std::string name;  // "gpu", "tool.ncu", "ncu_counters", ...
    DoctorStatus status = DoctorStatus::ok;
    std::string detail;  // what was found
    std::string fix;     // the cheapest action that would change the status; empty when ok
};

inline constexpr const char* kDoctorFormat = "cko/doctor-v1";

struct DoctorReport {
    std::vector<DoctorItem> items;
    std::string next_step;
    Json identity = nullptr;  // the probed Identity's JSON

    void add(DoctorItem item) { items.push_back(std::move(item)); }
    [[nodiscard]] bool has_blockers() const;
    [[nodiscard]] int exit_code() const;  // 0 without blockers, 3 (environment) with
    // The first blocker's fix; without blockers, the next verb to run.
    [[nodiscard]] std::string cheapest_next_step() const;
    // Sets next_step from the items (call again after appending items).
    void refresh_next_step() { next_step = cheapest_next_step(); }

    [[nodiscard]] Json to_json() const;         // format_version cko/doctor-v1
    [[nodiscard]] std::string to_text() const;  // a table for a person
};

struct DoctorOptions {
    bool require_gpu = false;                // "no GPU" becomes a blocker instead of a warning
    std::vector<std::string> require_tools;  // a missing one is a blocker
    ProbeOptions probe;
};

// The items for an identity already probed (pure; run_doctor = probe_identity + this).
[[nodiscard]] DoctorReport doctor_report(const Identity& identity, const DoctorOptions& options);
// Probes and judges; changes nothing on the host. Bounded by the probe timeouts (about 10 s).
[[nodiscard]] DoctorReport run_doctor(const DoctorOptions& options);

}  // namespace cko::env
