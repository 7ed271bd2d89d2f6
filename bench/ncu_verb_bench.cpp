// The whole `cko profile ncu FILE [--json]` verb as a user runs it (read + parse + facts + output):
// MB/s (wall and CPU), CPU and wall seconds per run, and peak RSS / file size, raw and details
// pages at 15 MB and 100 MB built from the fixtures.
#include "cko/util/files.hpp"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {
namespace fs = std::filesystem;

std::string fixture(const char* name) {
    return cko::read_file_capped(std::string(CKO_SOURCE_DIR) + "/tests/fixtures/ncu/" + name,
                                 std::uint64_t{1} << 20);
}

// The fixture's CSV rows repeated with fresh launch IDs until the text reaches `bytes`: the same
// sections, units, rule rows and names as the real H200 export. Lines before the header (NCU's
// ==PROF== output) are kept once.
std::string grow(const std::string& text, std::size_t bytes) {
    const std::size_t header = text.find("\"ID\",");
    const std::size_t body = text.find('\n', header) + 1;
    std::string out = text.substr(0, body);
    // Raw page: the units row (empty ID) comes once, right after the header.
    std::size_t first = body;
    if (text.compare(body, 3, "\"\",") == 0) {
        first = text.find('\n', body) + 1;
        out.append(text, body, first - body);
    }
    out.reserve(bytes + (1 << 20));
    long id = 0;
    while (out.size() < bytes) {
        std::size_t pos = first;
        std::string last_id;
        while (pos < text.size() && text[pos] == '"') {
            const std::size_t end = text.find('\n', pos) + 1;
            const std::size_t close = text.find('"', pos + 1);
            const std::string row_id = text.substr(pos + 1, close - pos - 1);
            if (row_id != last_id) {
                last_id = row_id;
                ++id;
            }
            out += '"';
            out += std::to_string(id);
            out.append(text, close, end - close);
            pos = end;
        }
    }
    return out;
}

const fs::path& input(const std::string& page, std::size_t mb) {
    static std::map<std::string, fs::path> made;
    const std::string key = page + std::to_string(mb);
    if (const auto it = made.find(key); it != made.end()) {
        return it->second;
    }
    // The inputs (about 230 MB) live in one temporary directory, removed when the bench exits.
    struct TempDir {
        fs::path path;
        TempDir() {
            std::string pattern =
                (fs::temp_directory_path() / "cko-ncu-verb-bench-XXXXXX").string();
            path = ::mkdtemp(pattern.data());
        }
        ~TempDir() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    };
    static const TempDir temp;
    const fs::path& dir = temp.path;
    const fs::path path = dir / (key + ".csv");
    // Built in a child process: exec keeps the spawning process's memory high-water mark in the
    // child's ru_maxrss, so the bench itself must never hold the 100 MB text.
    const pid_t child = fork();
    if (child == 0) {
        const std::string text =
            grow(fixture(page == "raw" ? "ncu_raw.csv" : "ncu_details.csv"), mb * 1000 * 1000);
        std::ofstream(path, std::ios::binary) << text;
        std::_Exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return made.emplace(key, path).first->second;
}

struct RunResult {
    double seconds = 0;
    double cpu_seconds = 0;  // user + system of the child
    long max_rss_kb = 0;
    int status = 0;
};

// Runs the cko binary with stdout to /dev/null; peak RSS from the child's rusage. The binary is
// the build's, or $CKO_BENCH_BINARY (another build, to compare before and after on one machine).
RunResult run_cko(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    const char* other = std::getenv("CKO_BENCH_BINARY");
    std::string binary = other != nullptr && *other != '\0' ? other : CKO_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    RunResult r;
    if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
        r.status = -1;
        return r;
    }
    rusage usage{};
    wait4(pid, &r.status, 0, &usage);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.max_rss_kb = usage.ru_maxrss;
    const auto secs = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
    };
    r.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
    posix_spawn_file_actions_destroy(&actions);
    return r;
}

void BM_ProfileNcuVerb(benchmark::State& state, const std::string& page, std::size_t mb,
                       bool json) {
    const fs::path& file = input(page, mb);
    const auto bytes = static_cast<double>(fs::file_size(file));
    std::vector<std::string> args = {"profile", "ncu", file.string()};
    if (json) {
        args.emplace_back("--json");
    }
    long rss = 0;
    double cpu = 0;
    double wall = 0;
    for (auto _ : state) {
        const RunResult r = run_cko(args);
        if (r.status != 0) {
            state.SkipWithError("cko profile ncu failed");
            return;
        }
        state.SetIterationTime(r.seconds);
        rss = std::max(rss, r.max_rss_kb);
        cpu += r.cpu_seconds;
        wall += r.seconds;
    }
    // Wall-clock MB/s depends on what else the machine runs; CPU-time MB/s much less so. CPU
    // time is user + system of both threads (the hash and text check run beside the parse), so
    // on an idle machine wall time is below it.
    const auto runs = static_cast<double>(state.iterations());
    state.counters["MB/s_cpu"] = bytes / 1e6 * runs / cpu;
    state.counters["cpu_s"] = cpu / runs;
    state.counters["wall_s"] = wall / runs;
    state.counters["MB/s"] = benchmark::Counter(
        bytes / 1e6 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["file_MB"] = bytes / 1e6;
    state.counters["peak_RSS_MB"] = static_cast<double>(rss) * 1024 / 1e6;
    state.counters["RSS_ratio"] = static_cast<double>(rss) * 1024 / bytes;
}

void register_all() {
    for (const char* page : {"raw", "details"}) {
        for (const std::size_t mb : {15, 100}) {
            for (const bool json : {false, true}) {
                const std::string name = std::string("BM_ProfileNcuVerb/") + page + "/" +
                                         std::to_string(mb) + "MB/" + (json ? "json" : "text");
                benchmark::RegisterBenchmark(
                    name.c_str(),
                    [=](benchmark::State& s) { BM_ProfileNcuVerb(s, page, mb, json); })
                    ->UseManualTime()
                    ->Unit(benchmark::kMillisecond)
                    ->Iterations(3);
            }
        }
    }
}

const int kRegistered = (register_all(), 0);

}  // namespace
