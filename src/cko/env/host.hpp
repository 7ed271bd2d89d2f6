// The host half of the environment identity: machine, kernel, CPU, container and scheduler hints.
#pragma once

#include "cko/util/json.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::env {

struct Scheduler {
    std::string name;    // "slurm", "pbs", "lsf", "flux", "sge"
    std::string job_id;  // as the scheduler spells it
};

struct Host {
    std::string machine_id;  // /etc/machine-id (or dbus's copy); empty when neither exists
    std::string boot_id;     // /proc/sys/kernel/random/boot_id: changes at every boot
    std::string hostname;
    std::string kernel_release;  // uname -r
    std::string kernel_version;  // uname -v
    std::string arch;            // uname -m
    std::string cpu_model;       // /proc/cpuinfo "model name" (or the ARM equivalent)
    unsigned logical_cpus = 0;
    std::optional<std::uint64_t> memory_total_bytes;      // /proc/meminfo MemTotal
    std::optional<std::uint64_t> memory_available_bytes;  // /proc/meminfo MemAvailable
    std::optional<double> load_1m;                        // /proc/loadavg
    bool in_container = false;
    std::vector<std::string> container_hints;  // why we think so, e.g. "/.dockerenv exists"
    std::optional<Scheduler> scheduler;

    // Always the same keys; absent values are null.
    [[nodiscard]] Json to_json() const;
};

// Reads everything above; never throws (a file that cannot be read leaves its field empty).
[[nodiscard]] Host probe_host();

// Pure pieces of probe_host, for tests.
using GetEnv = std::function<const char*(const char*)>;
[[nodiscard]] std::string cpu_model_from_cpuinfo(std::string_view cpuinfo);
// Hints from the text of /proc/1/cgroup, the presence of marker files and the environment.
[[nodiscard]] std::vector<std::string> container_hints(std::string_view init_cgroup,
                                                       const std::filesystem::path& root,
                                                       const GetEnv& getenv);
[[nodiscard]] std::optional<Scheduler> scheduler_from_env(const GetEnv& getenv);
// "MemTotal:  16310268 kB" → bytes; nullopt when the key is missing.
[[nodiscard]] std::optional<std::uint64_t> meminfo_bytes(std::string_view meminfo,
                                                         std::string_view key);

// A small text file (a /proc entry or similar), whole; nullopt when it cannot be read.
[[nodiscard]] std::optional<std::string> read_small_file(const std::filesystem::path& path);
// The text with leading and trailing whitespace removed.
[[nodiscard]] std::string trim(std::string_view text);

}  // namespace cko::env
