// The whole `cko profile ncu FILE [--json]` verb as a user runs it (read + parse + facts + output):
// MB/s (wall and CPU), CPU and wall seconds per run, and peak RSS / file size, raw and details
// pages at 15 MB and 100 MB built from the fixtures; beside each, Python's csv.reader reading the
// same file (x_csv_reader_*: how many times faster the whole verb is). Each benchmark runs both
// once untimed, then five times each, alternating; the figures are medians of the five.
#include "child_process.hpp"
#include "cko/util/files.hpp"

#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

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

// The yardstick: Python's csv.reader only reading the same file, in the same process tree (so
// the machine's load falls on both alike). The verb should be >= 5x faster (issue 21).
const char* const kCsvReader = "import csv,sys; [0 for _ in csv.reader(open(sys.argv[1]))]";

void BM_ProfileNcuVerb(benchmark::State& state, const std::string& page, std::size_t mb,
                       bool json) {
    const fs::path& file = input(page, mb);
    const auto bytes = static_cast<double>(fs::file_size(file));
    std::vector<std::string> args = {"profile", "ncu", file.string()};
    if (json) {
        args.emplace_back("--json");
    }
    args.insert(args.begin(), cko::bench::cko_binary(CKO_BINARY));
    const std::vector<std::string> yardstick = {"/usr/bin/python3", "-c", kCsvReader,
                                                file.string()};
    long rss = 0;
    double cpu = 0;
    double wall = 0;
    std::vector<double> verb_cpu;
    std::vector<double> csv_cpu;
    std::vector<double> verb_wall;
    std::vector<double> csv_wall;
    // One untimed run of each first, as hyperfine's --warmup does: the first run on a fresh
    // machine pays for memory the host has not handed it yet (on the GPU hosts the first
    // benchmark ran up to 40% slower than the same one after it), whichever program it is.
    if (cko::bench::run_child(args).status != 0 || cko::bench::run_child(yardstick).status != 0) {
        state.SkipWithError("the warm-up run failed (cko, or python3 csv.reader)");
        return;
    }
    for (auto _ : state) {
        const cko::bench::ChildRun r = cko::bench::run_child(args);
        if (r.status != 0) {
            state.SkipWithError("cko profile ncu failed");
            return;
        }
        const cko::bench::ChildRun y = cko::bench::run_child(yardstick);
        if (y.status != 0) {
            state.SkipWithError("python3 csv.reader failed (python3 missing?)");
            return;
        }
        state.SetIterationTime(r.seconds);
        rss = std::max(rss, r.max_rss_kb);
        cpu += r.cpu_seconds;
        wall += r.seconds;
        verb_cpu.push_back(r.cpu_seconds);
        csv_cpu.push_back(y.cpu_seconds);
        verb_wall.push_back(r.seconds);
        csv_wall.push_back(y.seconds);
    }
    // Times faster than csv.reader, from the medians (CPU time: load-independent; wall: what a
    // user waits for, the verb's second thread included).
    state.counters["csv_reader_cpu_s"] = cko::bench::median(csv_cpu);
    state.counters["x_csv_reader_cpu"] = cko::bench::median(csv_cpu) / cko::bench::median(verb_cpu);
    state.counters["x_csv_reader_wall"] =
        cko::bench::median(csv_wall) / cko::bench::median(verb_wall);
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
                    ->Iterations(5);
            }
        }
    }
}

const int kRegistered = (register_all(), 0);

}  // namespace
