// Fault points driven by CKO_FAULT_AT / CKO_ENOSPC_AT / CKO_FAULT_COUNT (tests/crash,
// tests/hostile).
#include "cko/util/fault.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cko {
namespace {

struct FaultPlan {
    long kill_at = 0;
    long enospc_at = 0;
    const char* count_file = nullptr;
    std::atomic<long> reached{0};
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
    return p.enospc_at == 0 || n < p.enospc_at;
}

}  // namespace cko
