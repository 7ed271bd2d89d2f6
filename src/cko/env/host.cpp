// Host identity from /etc, /proc, uname and the environment; read-only, never throws.
#include "cko/env/host.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace cko::env {
namespace fs = std::filesystem;

std::optional<std::string> read_small_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    // /proc files report size 0, so read until EOF with a cap instead of trusting st_size.
    std::string text;
    char buffer[4096];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > (std::size_t{1} << 20)) {
            break;
        }
    }
    return text;
}

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    return std::string(text.substr(first, last - first + 1));
}

namespace {

// The value of the first "key<spaces>: value" line of a /proc text, trimmed.
std::optional<std::string> colon_value(std::string_view text, std::string_view key) {
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon != std::string::npos && trim(line.substr(0, colon)) == key) {
            return trim(line.substr(colon + 1));
        }
    }
    return std::nullopt;
}

std::string first_line(const fs::path& path) {
    const auto text = read_small_file(path);
    if (!text) {
        return {};
    }
    return trim(text->substr(0, text->find('\n')));
}

}  // namespace

std::string cpu_model_from_cpuinfo(std::string_view cpuinfo) {
    // x86 says "model name"; some ARM kernels say "Model" or only give "CPU part" numbers.
    for (const char* key : {"model name", "Model", "Hardware", "cpu model"}) {
        if (auto value = colon_value(cpuinfo, key); value && !value->empty()) {
            return *value;
        }
    }
    const auto implementer = colon_value(cpuinfo, "CPU implementer");
    const auto part = colon_value(cpuinfo, "CPU part");
    if (implementer && part) {
        return "implementer " + *implementer + " part " + *part;
    }
    return {};
}

std::vector<std::string> container_hints(std::string_view init_cgroup, const fs::path& root,
                                         const GetEnv& getenv) {
    std::vector<std::string> hints;
    std::error_code ec;
    if (fs::exists(root / ".dockerenv", ec)) {
        hints.emplace_back("/.dockerenv exists");
    }
    if (fs::exists(root / "run" / ".containerenv", ec)) {
        hints.emplace_back("/run/.containerenv exists (podman)");
    }
    for (const char* word : {"docker", "kubepods", "containerd", "libpod", "lxc"}) {
        if (init_cgroup.find(word) != std::string_view::npos) {
            hints.push_back(std::string("cgroup of pid 1 mentions ") + word);
        }
    }
    if (const char* v = getenv("KUBERNETES_SERVICE_HOST"); v != nullptr && *v != '\0') {
        hints.emplace_back("KUBERNETES_SERVICE_HOST is set");
    }
    if (const char* v = getenv("container"); v != nullptr && *v != '\0') {
        hints.push_back(std::string("container=") + v);
    }
    return hints;
}

std::optional<Scheduler> scheduler_from_env(const GetEnv& getenv) {
    struct Known {
        const char* variable;
        const char* name;
    };
    for (const Known& known : {Known{"SLURM_JOB_ID", "slurm"}, Known{"PBS_JOBID", "pbs"},
                               Known{"LSB_JOBID", "lsf"}, Known{"FLUX_JOB_ID", "flux"}}) {
        if (const char* v = getenv(known.variable); v != nullptr && *v != '\0') {
            return Scheduler{known.name, v};
        }
    }
    // JOB_ID alone is too common a name; Grid Engine also sets SGE_ROOT.
    const char* sge_job = getenv("JOB_ID");
    const char* sge_root = getenv("SGE_ROOT");
    if (sge_job != nullptr && *sge_job != '\0' && sge_root != nullptr) {
        return Scheduler{"sge", sge_job};
    }
    return std::nullopt;
}

std::optional<std::uint64_t> meminfo_bytes(std::string_view meminfo, std::string_view key) {
    const auto value = colon_value(meminfo, key);
    if (!value) {
        return std::nullopt;
    }
    try {
        std::size_t used = 0;
        const std::uint64_t number = std::stoull(*value, &used);
        const std::string unit = trim(value->substr(used));
        return unit == "kB" ? number * 1024 : number;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

Host probe_host() {
    Host host;
    host.machine_id = first_line("/etc/machine-id");
    if (host.machine_id.empty()) {
        host.machine_id = first_line("/var/lib/dbus/machine-id");
    }
    host.boot_id = first_line("/proc/sys/kernel/random/boot_id");
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) {
        host.hostname = name;
    }
    struct utsname uts {};
    if (::uname(&uts) == 0) {
        host.kernel_release = uts.release;
        host.kernel_version = uts.version;
        host.arch = uts.machine;
    }
    if (const auto cpuinfo = read_small_file("/proc/cpuinfo")) {
        host.cpu_model = cpu_model_from_cpuinfo(*cpuinfo);
    }
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    host.logical_cpus =
        online > 0 ? static_cast<unsigned>(online) : std::thread::hardware_concurrency();
    if (const auto meminfo = read_small_file("/proc/meminfo")) {
        host.memory_total_bytes = meminfo_bytes(*meminfo, "MemTotal");
        host.memory_available_bytes = meminfo_bytes(*meminfo, "MemAvailable");
    }
    if (const auto loadavg = read_small_file("/proc/loadavg")) {
        try {
            host.load_1m = std::stod(*loadavg);
        } catch (const std::exception&) {
        }
    }
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only, no setenv in cko
    const GetEnv getenv = [](const char* n) { return std::getenv(n); };
    host.container_hints =
        container_hints(read_small_file("/proc/1/cgroup").value_or(""), "/", getenv);
    host.in_container = !host.container_hints.empty();
    host.scheduler = scheduler_from_env(getenv);
    return host;
}

Json Host::to_json() const {
    const auto opt = [](const auto& value) { return value ? Json(*value) : Json(nullptr); };
    const auto str = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    Json sched = nullptr;
    if (scheduler) {
        sched = Json{{"name", scheduler->name}, {"job_id", scheduler->job_id}};
    }
    return Json{{"machine_id", str(machine_id)},
                {"boot_id", str(boot_id)},
                {"hostname", str(hostname)},
                {"kernel_release", str(kernel_release)},
                {"kernel_version", str(kernel_version)},
                {"arch", str(arch)},
                {"cpu_model", str(cpu_model)},
                {"logical_cpus", logical_cpus},
                {"memory_total_bytes", opt(memory_total_bytes)},
                {"memory_available_bytes", opt(memory_available_bytes)},
                {"load_1m", opt(load_1m)},
                {"in_container", in_container},
                {"container_hints", container_hints},
                {"scheduler", sched}};
}

}  // namespace cko::env
