// Host CPU readings: the aggregate time counters, the run queue, the load average and cpufreq.
#include "cko/env/host_cpu.hpp"

#include "cko/env/host.hpp"

#include <unistd.h>

#include <sstream>
#include <string>
#include <system_error>

namespace cko::env {
namespace fs = std::filesystem;

std::optional<CpuTimes> cpu_times_from_stat(std::string_view stat) {
    if (!stat.starts_with("cpu ")) {
        return std::nullopt;
    }
    std::istringstream line(std::string(stat.substr(4, stat.find('\n'))));
    // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user/nice)
    std::uint64_t f[8] = {};
    for (auto& v : f) {
        if (!(line >> v)) {
            return std::nullopt;
        }
    }
    CpuTimes t;
    for (const auto v : f) {
        t.total += v;
    }
    t.idle = f[3] + f[4];
    t.steal = f[7];
    return t;
}

std::optional<unsigned> procs_running_from_stat(std::string_view stat) {
    constexpr std::string_view key = "\nprocs_running ";
    const auto at = stat.find(key);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::istringstream in(std::string(stat.substr(at + key.size(), 32)));
    unsigned n = 0;
    if (!(in >> n)) {
        return std::nullopt;
    }
    return n;
}

std::optional<double> mean_cpu_freq_mhz(const fs::path& cpu_dir) {
    std::error_code ec;
    double sum_khz = 0;
    unsigned count = 0;
    for (fs::directory_iterator it(cpu_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() < 4 || !name.starts_with("cpu") ||
            name.find_first_not_of("0123456789", 3) != std::string::npos) {
            continue;
        }
        const auto text = read_small_file(it->path() / "cpufreq" / "scaling_cur_freq");
        if (!text) {
            continue;
        }
        try {
            sum_khz += std::stod(*text);
            ++count;
        } catch (const std::exception&) {  // unreadable: this CPU's frequency stays unknown
        }
    }
    if (count == 0) {
        return std::nullopt;
    }
    return sum_khz / count / 1000.0;
}

HostCpuReading read_host_cpu() {
    HostCpuReading r;
    if (const auto stat = read_small_file("/proc/stat")) {
        r.times = cpu_times_from_stat(*stat);
        r.procs_running = procs_running_from_stat(*stat);
    }
    if (const auto loadavg = read_small_file("/proc/loadavg")) {
        try {
            r.load_1m = std::stod(*loadavg);
        } catch (const std::exception&) {
        }
    }
    r.freq_mhz = mean_cpu_freq_mhz("/sys/devices/system/cpu");
    return r;
}

unsigned online_cpus() {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1U;
}

}  // namespace cko::env
