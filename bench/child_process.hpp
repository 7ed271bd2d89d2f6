// Runs a program as a child process, stdout to /dev/null, and reports its wall and CPU time and
// peak RSS (getrusage of the child): the whole-verb benches time cko as a user runs it.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace cko::bench {

struct ChildRun {
    double seconds = 0;
    double cpu_seconds = 0;  // user + system of the child (all its threads)
    long max_rss_kb = 0;
    int status = -1;  // wait status; 0: exited 0
};

// argv[0] is the program's path.
inline ChildRun run_child(const std::vector<std::string>& args) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    ChildRun r;
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return r;
    }
    rusage usage{};
    wait4(pid, &r.status, 0, &usage);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.max_rss_kb = usage.ru_maxrss;
    const auto secs = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    r.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
    posix_spawn_file_actions_destroy(&actions);
    return r;
}

// The cko binary of this build, or $CKO_BENCH_BINARY (another build, to compare before and
// after on one machine).
inline std::string cko_binary(const char* built) {
    const char* other = std::getenv("CKO_BENCH_BINARY");
    return other != nullptr && *other != '\0' ? other : built;
}

inline double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Least-squares slope of log(y) against log(x): the exponent b of y = a·x^b.
inline double fitted_exponent(const std::vector<double>& x, const std::vector<double>& y) {
    const auto n = static_cast<double>(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double lx = std::log(x[i]);
        const double ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace cko::bench
