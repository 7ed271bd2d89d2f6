// Fault points driven by CKO_FAULT_AT / CKO_ENOSPC_AT / CKO_FAULT_COUNT (tests/crash,
// tests/hostile), and the pause point driven by CKO_FAULT_PAUSE (tests/crash/race_test.py).
#include "cko/util/fault.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace cko {
namespace {

struct FaultPlan {
    long kill_at = 0;
    std::atomic<long> enospc_at{0};  // 0 once fault_space_freed() gave the space back
    const char* count_file = nullptr;
    std::atomic<long> reached{0};
    std::string pause_name;  // CKO_FAULT_PAUSE=<name>:<ms>; empty: no pause point sleeps
    long pause_ms = 0;
};

void write_count();

FaultPlan& plan() {
    static FaultPlan* p = [] {
        auto* made = new FaultPlan();  // never freed: read by the atexit hook
        const auto number = [](const char* name) {
            const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once
            return v == nullptr ? 0L : std::strtol(v, nullptr, 10);
        };
        made->kill_at = number("CKO_FAULT_AT");
        made->enospc_at = number("CKO_ENOSPC_AT");
        made->count_file = std::getenv("CKO_FAULT_COUNT");  // NOLINT(concurrency-mt-unsafe)
        // NOLINTNEXTLINE(concurrency-mt-unsafe): read once
        if (const char* pause = std::getenv("CKO_FAULT_PAUSE"); pause != nullptr) {
            const std::string spec(pause);
            const std::size_t colon = spec.rfind(':');
            if (colon != std::string::npos && colon > 0) {
                made->pause_name = spec.substr(0, colon);
                made->pause_ms = std::strtol(spec.c_str() + colon + 1, nullptr, 10);
            }
        }
        if (made->count_file != nullptr) {
            std::atexit(write_count);
        }
        return made;
    }();
    return *p;
}

void write_count() {
    const FaultPlan& p = plan();
    const int fd = ::open(p.count_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        const std::string line = std::to_string(p.reached.load()) + "\n";
        (void)!::write(fd, line.data(), line.size());
        ::close(fd);
    }
}

}  // namespace

bool fault_point() noexcept {
    FaultPlan& p = plan();
    if (p.kill_at == 0 && p.enospc_at == 0 && p.count_file == nullptr) {
        return true;
    }
    const long n = ++p.reached;
    if (n == p.kill_at) {
        ::_exit(137);
    }
    const long enospc_at = p.enospc_at.load();
    return enospc_at == 0 || n < enospc_at;
}

void fault_space_freed() noexcept {
    FaultPlan& p = plan();
    const long enospc_at = p.enospc_at.load();
    if (enospc_at != 0 && p.reached.load() >= enospc_at) {
        p.enospc_at = 0;
    }
}

void fault_pause(std::string_view name) noexcept {
    const FaultPlan& p = plan();
    if (p.pause_ms > 0 && name == p.pause_name) {
        std::this_thread::sleep_for(std::chrono::milliseconds(p.pause_ms));
    }
}

}  // namespace cko
