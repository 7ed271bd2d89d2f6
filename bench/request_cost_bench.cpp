// What one driver request costs beyond the driver's own work ([21]): a Target with a trivial
// Python driver (the SDK, a workload that sums 2000 numbers) is frozen once, then every iteration
// runs `cko screen` as a user does (the binary, a child process) and reads the comparison's
// outputs.to_verdict.held: the time the calls held their (here: no) GPUs, split into the
// workload's own code, the SDK's share and cko's own. Printed per request, for a session driver
// (one process serves every request) and a one-process-per-call driver. Goals: cko <= 3 ms and
// the SDK <= 2 ms per session request.
#include "child_process.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {
namespace fs = std::filesystem;
using Json = nlohmann::json;

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int sh(const std::string& command) {
    return cko::bench::run_child({"/bin/sh", "-c", command}).status;
}

// A project with a trivial driver; `session`: the driver declares the session capability.
fs::path make_project(const fs::path& dir, bool session) {
    fs::remove_all(dir);
    write(dir / "original/work.py", "N = 2000\n");
    write(dir / "candidate/work.py", "N = 2000  # the same work\n");
    write(dir / "cases/tiny.json", "{}\n");
    write(dir / "driver.py", std::string(R"(import os, sys
sys.path.insert(0, )") + "\"" CKO_SOURCE_DIR "/sdk/python\"" +
                                 R"()
from cko_driver import Workload, run_driver

class Tiny(Workload):
    def prepare(self, subject, request):
        return list(range(2000))
    def run(self, state):
        sum(state)
    def check(self, state):
        return {"max_rel_err": 0.0}

raise SystemExit(run_driver(Tiny(), warmup_s=0.0))
)");
    write(dir / "cko.toml", std::string(R"([target]
name = "request-cost"
claim_layer = "kernel"
original = "original"
change_scope = ["original/work.py"]
[cases]
dir = "cases"
ids = ["tiny"]
[driver]
argv = ["python3", "driver.py"]
capabilities = ["single_subject", "paired_in_process")") +
                                (session ? ", \"session\"" : "") + R"(]
identity_paths = ["driver.py"]
env_allow = ["PATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
constraints = []
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
confidence = 0.95
min_pairs = 20
max_pairs = 20
samples_per_call = 5
sequential = false
[limits]
command_timeout_s = 60
operation_timeout_s = 600
resource_wait_timeout_s = 60
cleanup_timeout_s = 10
[resources]
gpus = []
[observation]
max_host_load_per_cpu = 1000
)");
    return dir;
}

void BM_ScreenRequestCost(benchmark::State& state) {
    const bool session = state.range(0) == 1;
    const std::string cko = cko::bench::cko_binary(CKO_BINARY);
    const char* tmp = std::getenv("TMPDIR");
    const fs::path dir = make_project(
        fs::path(tmp != nullptr ? tmp : "/tmp") /
            (std::string("cko-bench-request-cost-") + (session ? "session" : "process")),
        session);
    const std::string root = (dir / "R").string();
    const std::string in_dir = "cd '" + dir.string() + "' && '" + cko + "' ";
    if (sh(in_dir + "target freeze --spec cko.toml --root R > /dev/null") != 0 ||
        sh(in_dir + "experiment new --root R --candidate candidate --hypothesis h --mechanism m " +
           "--failure-closes mechanism --no-falsifier-reason r --json > exp.json") != 0) {
        const std::string why =
            "freeze or experiment new failed (run it by hand in " + dir.string() + ")";
        state.SkipWithError(why.c_str());
        return;
    }
    const std::string experiment = Json::parse(slurp(dir / "exp.json")).at("id");
    double cko_ms = 0, sdk_ms = 0, work_ms = 0, held_ms = 0, requests = 0;
    for (auto _ : state) {
        (void)sh(in_dir + "screen " + experiment + " --root R --json > screen.json");
        const Json d = Json::parse(slurp(dir / "screen.json"), nullptr, false);
        const Json held =
            d.is_object() ? d["result"]["outputs"]["to_verdict"].value("held", Json()) : Json();
        if (!held.is_object() || !held["sdk_s"].is_number()) {
            const std::string why = "the screen gave no outputs.to_verdict.held split: " +
                                    slurp(dir / "screen.json").substr(0, 400);
            state.SkipWithError(why.c_str());
            return;
        }
        requests += held["calls"].get<double>();
        cko_ms += 1000 * held["cko_s"].get<double>();
        sdk_ms += 1000 * held["sdk_s"].get<double>();
        work_ms += 1000 * held["driver_work_s"].get<double>();
        held_ms += 1000 * held["held_s"].get<double>();
    }
    state.counters["requests"] = requests / static_cast<double>(state.iterations());
    state.counters["cko_ms_per_request"] = cko_ms / requests;
    state.counters["sdk_ms_per_request"] = sdk_ms / requests;
    state.counters["work_ms_per_request"] = work_ms / requests;
    state.counters["held_ms_per_request"] = held_ms / requests;
    state.SetLabel(session ? "session driver (goal: cko <= 3 ms, SDK <= 2 ms)"
                           : "one process per call");
}
BENCHMARK(BM_ScreenRequestCost)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
