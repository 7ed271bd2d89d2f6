// End-to-end test of cko_driver.hpp: fake requests in a temp dir, run_driver(), the result read
// back. Build and run: g++ -std=c++17 -Wall -Wextra -I sdk/cpp sdk/cpp/tests/cko_driver_test.cpp -o
// /tmp/t && /tmp/t. The GPU part (real CUDA-event timing) runs alone with --gpu, in a build by
//   nvcc -x cu -std=c++17 -arch=sm_90 -I sdk/cpp sdk/cpp/tests/cko_driver_test.cpp -o /tmp/t_cu &&
//   /tmp/t_cu --gpu
// and exits 77 (ctest: Skipped) where it cannot run: no GPU, or a build without CUDA.
#include "cko_driver.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using cko_driver::json::Value;

static int failures = 0;
#define EXPECT(cond)                                                               \
    do {                                                                           \
        if (!(cond)) {                                                             \
            ++failures;                                                            \
            std::cerr << __FILE__ << ":" << __LINE__ << ": FAILED " #cond << "\n"; \
        }                                                                          \
    } while (0)

struct Fixture {
    fs::path dir;
    Fixture() {
        std::string tmpl = (fs::temp_directory_path() / "cko-driver-test-XXXXXX").string();
        dir = mkdtemp(&tmpl[0]);
        std::ofstream(dir / "case.json") << "{\"n\": 4}";
    }
    ~Fixture() { fs::remove_all(dir); }
    fs::path out() const { return dir / "out"; }

    // Writes a request into the fixture dir and returns its path.
    std::string write(const std::string& mode, int samples, const std::string& unit,
                      const std::string& order, const std::string& constraints = "",
                      const std::string& format = "cko/driver-request-v1") {
        std::string subjects =
            "{\"role\": \"reference\", \"label\": \"orig\", \"path\": \"/nowhere/ref\"}";
        if (mode == "paired")
            subjects +=
                ", {\"role\": \"candidate\", \"label\": \"exp-1\", \"path\": \"/nowhere/cand\"}";
        std::ostringstream r;
        r << "{\"seed\": 18446744073709551615, \"format_version\": \"" << format
          << "\", \"mode\": \"" << mode << "\", \"case\": {\"id\": \"main\", \"path\": \""
          << (dir / "case.json").string() << "\"}, \"subjects\": [" << subjects << "]"
          << (order.empty() ? "" : ", \"order\": " + order) << ", \"samples\": " << samples
          << ", \"objective\": {\"primary\": {\"name\": \"latency\", \"unit\": \"" << unit
          << "\"}, \"constraints\": [" << constraints
          << "]}, \"correctness\": {\"metrics\": [\"max_rel_err\"]}"
          << ", \"output_dir\": \"" << out().string() << "\", \"result_path\": \""
          << (out() / "result.json").string() << "\", \"deadline_unix_s\": 4102444800.5}";
        const fs::path p = dir / "request.json";
        std::ofstream(p) << r.str();
        return p.string();
    }
    Value result() const {
        std::ifstream in(out() / "result.json");
        std::stringstream ss;
        ss << in.rdbuf();
        return cko_driver::json::parse(ss.str());
    }
    std::vector<std::string> out_files() const {
        std::vector<std::string> names;
        if (fs::exists(out()))
            for (const auto& e : fs::recursive_directory_iterator(out()))
                names.push_back(e.path().filename().string());
        return names;
    }
};

struct FixedTimer : cko_driver::Timer {
    double ns;
    explicit FixedTimer(double n) : ns(n) {}
    const char* name() const override { return "fixed"; }
    double time_ns(const std::function<void()>& call) override {
        call();
        return ns;
    }
};

// Records every timed call; fails on demand.
struct Recorder : cko_driver::Workload {
    std::vector<std::string> calls;
    std::string throw_in_run_for;
    double metric = 0.0;
    std::map<std::string, double> constraint_values;

    struct Run : cko_driver::SubjectRun {
        Recorder& owner;
        std::string role;
        Run(Recorder& o, std::string r) : owner(o), role(std::move(r)) {}
        void run() override {
            owner.calls.push_back(role);
            if (role == owner.throw_in_run_for)
                throw std::runtime_error("kernel crashed");
        }
        cko_driver::Check check() override { return {"passed", {{"max_rel_err", owner.metric}}}; }
        std::map<std::string, double> constraints() override { return owner.constraint_values; }
    };
    std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& s,
                                                    const cko_driver::Request& r) override {
        if (r.case_.id != "main")
            throw std::runtime_error("wrong case");
        return std::make_unique<Run>(*this, s.role);
    }
};

static int run(const std::string& request, cko_driver::Workload& w, cko_driver::Options o) {
    std::string arg0 = "driver", arg1 = "--request", arg2 = request;
    char* argv[] = {&arg0[0], &arg1[0], &arg2[0], nullptr};
    return cko_driver::run_driver(3, argv, w, o);
}

static cko_driver::Options no_warmup(cko_driver::Timer* t) {
    cko_driver::Options o;
    o.warmup_s = 0;
    o.min_warmup_calls = 0;
    o.custom_timer = t;
    return o;
}

static const Value& at(const Value& v, const std::string& key) {
    const Value* f = v.find(key);
    if (!f)
        throw std::runtime_error("missing key " + key);
    return *f;
}

static std::string file_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

static int count_of(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

static void smoke_gives_two_samples_for_one_subject() {
    Fixture f;
    Recorder w;
    FixedTimer t(1500);
    EXPECT(run(f.write("smoke", 2, "us", ""), w, no_warmup(&t)) == 0);
    const Value r = f.result();
    EXPECT(at(r, "format_version").string == "cko/driver-result-v1");
    EXPECT(at(r, "subjects").array.size() == 1);
    const Value& s = at(r, "subjects").array[0];
    EXPECT(s.object.size() == 3);
    EXPECT(at(s, "role").string == "reference");
    EXPECT(at(at(s, "correctness"), "status").string == "passed");
    EXPECT(at(at(at(s, "correctness"), "metrics"), "max_rel_err").number == 0.0);
    const Value& p = at(at(s, "measurements"), "primary");
    EXPECT(at(p, "name").string == "latency" && at(p, "unit").string == "us");
    EXPECT(at(p, "samples").array.size() == 2 && at(p, "samples").array[0].number == 1.5);
    EXPECT(at(r, "artifacts").array.empty());
    EXPECT(f.out_files() == std::vector<std::string>{"result.json"});
}

static void single_accepts_empty_or_own_order() {
    for (const std::string order : {"", "[]", "null", "[\"reference\"]"}) {
        Fixture f;
        Recorder w;
        FixedTimer t(1000);
        EXPECT(run(f.write("single", 2, "us", order), w, no_warmup(&t)) == 0);
    }
}

static void paired_alternates_in_request_order() {
    Fixture f;
    Recorder w;
    FixedTimer t(1000);
    EXPECT(run(f.write("paired", 4, "ns", "[\"candidate\", \"reference\"]"), w, no_warmup(&t)) ==
           0);
    std::vector<std::string> expected;
    for (int i = 0; i < 4; ++i)
        expected.insert(expected.end(), {"candidate", "reference"});
    EXPECT(w.calls == expected);
    const Value r = f.result();
    for (const Value& s : at(r, "subjects").array)
        EXPECT(at(at(at(s, "measurements"), "primary"), "samples").array.size() == 4);
}

// With every subject's digest in the request the result is v2, each entry carrying the digest of
// the subject whose samples it holds (cko refuses any other: role_mismatch).
static void each_subject_reports_its_loaded_digest() {
    Fixture f;
    Recorder w;
    FixedTimer t(1000);
    std::string request = f.write("paired", 2, "us", "[\"candidate\", \"reference\"]");
    std::string text;
    {
        std::ifstream in(request);
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    const std::string ref = std::string(64, 'a'), cand = std::string(64, 'b');
    for (const auto& [path, digest] :
         {std::pair<std::string, std::string>{"/nowhere/ref", ref}, {"/nowhere/cand", cand}}) {
        const std::string key = "\"path\": \"" + path + "\"";
        text.replace(text.find(key), key.size(), key + ", \"digest\": \"" + digest + "\"");
    }
    std::ofstream(request) << text;
    EXPECT(run(request, w, no_warmup(&t)) == 0);
    const Value r = f.result();
    EXPECT(at(r, "format_version").string == "cko/driver-result-v2");
    const auto& subjects = at(r, "subjects").array;
    EXPECT(subjects.size() == 2);
    EXPECT(at(subjects[0], "role").string == "reference" &&
           at(subjects[0], "loaded_digest").string == ref);
    EXPECT(at(subjects[1], "role").string == "candidate" &&
           at(subjects[1], "loaded_digest").string == cand);
    // Without digests (an older cko): v1, no loaded_digest.
    Fixture g;
    EXPECT(run(g.write("single", 2, "us", ""), w, no_warmup(&t)) == 0);
    EXPECT(at(g.result(), "format_version").string == "cko/driver-result-v1");
    EXPECT(at(g.result(), "subjects").array[0].find("loaded_digest") == nullptr);
}

static void warm_up_by_time_comes_first() {
    Fixture f;
    Recorder w;
    cko_driver::Options o;  // real steady_clock timer, 20 ms warm-up per subject
    o.warmup_s = 0.02;
    EXPECT(run(f.write("single", 3, "us", ""), w, o) == 0);
    EXPECT(w.calls.size() > 3 + 1);
    const Value r = f.result();
    EXPECT(at(at(r, "environment"), "timer").string == "cpu_steady_clock");
}

static void units_are_converted() {
    const std::vector<std::pair<std::string, double>> cases = {
        {"ns", 2.5e6}, {"us", 2500}, {"ms", 2.5}, {"s", 0.0025}};
    for (const auto& c : cases) {
        Fixture f;
        Recorder w;
        FixedTimer t(2.5e6);
        EXPECT(run(f.write("single", 2, c.first, ""), w, no_warmup(&t)) == 0);
        const Value r = f.result();
        const Value& s = at(r, "subjects").array[0];
        const double x = at(at(at(s, "measurements"), "primary"), "samples").array[1].number;
        EXPECT(std::abs(x - c.second) <= 1e-12 * c.second);
    }
}

static void real_clock_measures_sleep() {
    struct Sleeper : Recorder {
        struct Run : Recorder::Run {
            using Recorder::Run::Run;
            void run() override { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }
        };
        std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& s,
                                                        const cko_driver::Request&) override {
            return std::make_unique<Run>(*this, s.role);
        }
    };
    Fixture f;
    Sleeper w;
    cko_driver::Options o;
    o.warmup_s = 0;
    EXPECT(run(f.write("single", 2, "ms", ""), w, o) == 0);
    const Value r = f.result();
    for (const Value& x :
         at(at(at(at(r, "subjects").array[0], "measurements"), "primary"), "samples").array)
        EXPECT(x.number > 4.5 && x.number < 200);
}

static void invalid_requests_exit_2_without_result() {
    struct Bad {
        std::string mode, unit, order, format;
    };
    const std::vector<Bad> bad = {
        {"paired", "us", "[\"candidate\", \"reference\"]", "cko/driver-request-v0"},
        {"baseline", "us", "", "cko/driver-request-v1"},
        {"paired", "us", "", "cko/driver-request-v1"},                                // no order
        {"paired", "us", "[\"candidate\", \"candidate\"]", "cko/driver-request-v1"},  // bad order
        {"single", "cycles", "", "cko/driver-request-v1"},  // not a time unit
    };
    for (const auto& b : bad) {
        Fixture f;
        Recorder w;
        EXPECT(run(f.write(b.mode, 2, b.unit, b.order, "", b.format), w, {}) == 2);
        EXPECT(!fs::exists(f.out()));
        EXPECT(w.calls.empty());
    }
    Fixture f;
    Recorder w;
    EXPECT(run((f.dir / "missing.json").string(), w, {}) == 2);
    std::ofstream(f.dir / "nan.json") << "{\"format_version\": NaN}";
    EXPECT(run((f.dir / "nan.json").string(), w, {}) == 2);
    std::ofstream(f.dir / "dup.json") << "{\"mode\": \"smoke\", \"mode\": \"smoke\"}";
    EXPECT(run((f.dir / "dup.json").string(), w, {}) == 2);
    char arg0[] = "driver";
    char* argv[] = {arg0, nullptr};
    EXPECT(cko_driver::run_driver(1, argv, w) == 2);
}

static void user_exception_gives_status_error() {
    Fixture f;
    Recorder w;
    w.throw_in_run_for = "candidate";
    FixedTimer t(1000);
    EXPECT(run(f.write("paired", 3, "us", "[\"reference\", \"candidate\"]"), w, no_warmup(&t)) ==
           0);
    const Value r = f.result();
    for (const Value& s : at(r, "subjects").array) {
        const bool cand = at(s, "role").string == "candidate";
        EXPECT(at(at(s, "correctness"), "status").string == (cand ? "error" : "passed"));
        EXPECT(at(at(at(s, "measurements"), "primary"), "samples").array.size() ==
               (cand ? 0u : 3u));
    }
    const Value& notes = at(at(r, "environment"), "notes");
    EXPECT(notes.array.size() == 1 &&
           notes.array[0].string.find("kernel crashed") != std::string::npos);
    EXPECT(f.out_files() == std::vector<std::string>{"result.json"});
}

static void non_finite_metric_fails() {
    Fixture f;
    Recorder w;
    w.metric = std::nan("");
    FixedTimer t(1000);
    EXPECT(run(f.write("single", 2, "us", ""), w, no_warmup(&t)) == 0);
    const Value r = f.result();
    const Value& c = at(at(r, "subjects").array[0], "correctness");
    EXPECT(at(c, "status").string == "failed");
    EXPECT(at(at(c, "metrics"), "max_rel_err").number == cko_driver::kNonFiniteMetric);
}

static void constraints_are_sampled_and_checked() {
    const std::string mem = "{\"name\": \"peak_mem_bytes\", \"unit\": \"byte\"}";
    {
        Fixture f;
        Recorder w;
        w.constraint_values = {{"peak_mem_bytes", 4096}};
        FixedTimer t(1000);
        EXPECT(run(f.write("single", 2, "us", "", mem), w, no_warmup(&t)) == 0);
        const Value r = f.result();
        const Value& c = at(at(at(r, "subjects").array[0], "measurements"), "constraints");
        EXPECT(c.array.size() == 1 && at(c.array[0], "samples").array.size() == 2);
        EXPECT(at(c.array[0], "unit").string == "byte" &&
               at(c.array[0], "samples").array[1].number == 4096);
    }
    Fixture f;
    Recorder w;
    w.constraint_values = {{"other", 1}};
    FixedTimer t(1000);
    EXPECT(run(f.write("single", 2, "us", "", mem), w, no_warmup(&t)) == 3);
    // No result; only which subject ran when the driver gave up (as after a crash).
    EXPECT(f.out_files() == std::vector<std::string>{"cko-running-subject.txt"});
    EXPECT(file_text(f.out() / "cko-running-subject.txt") == "cko: subject reference case main\n");
}

static void artifacts_are_listed() {
    struct Tracer : Recorder {
        std::string out;
        struct Run : Recorder::Run {
            using Recorder::Run::Run;
            cko_driver::Check check() override {
                fs::create_directories(static_cast<Tracer&>(owner).out + "/traces");
                std::ofstream(static_cast<Tracer&>(owner).out + "/traces/t.json") << "{}";
                return {"passed", {{"max_rel_err", 0}}};
            }
        };
        std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& s,
                                                        const cko_driver::Request& r) override {
            out = r.output_dir;
            return std::make_unique<Run>(*this, s.role);
        }
    };
    Fixture f;
    Tracer w;
    FixedTimer t(1000);
    EXPECT(run(f.write("single", 2, "us", ""), w, no_warmup(&t)) == 0);
    const Value r = f.result();
    const Value& a = at(r, "artifacts");
    EXPECT(a.array.size() == 1 && a.array[0].string == "traces/t.json");
}

static void json_round_trips() {
    const Value v = cko_driver::json::parse(
        R"({"s": "a\"b\\c\n\u00e9\ud83d\ude00", "n": [1, -2.5e3, 0], "t": true, "f": false, "z": null})");
    EXPECT(at(v, "s").string == "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT(at(v, "n").array[1].number == -2500 && at(v, "t").boolean && !at(v, "f").boolean);
    std::string out;
    cko_driver::json::write_string(out, "a\"b\x01");
    EXPECT(out == "\"a\\\"b\\u0001\"");
    out.clear();
    cko_driver::json::write_number(out, 0.1);
    EXPECT(out == "0.1");
    for (const char* bad : {"{", "[1,]", "01", "\"\\x\"", "{\"a\":1} x", "Infinity", "1e999"}) {
        bool threw = false;
        try {
            cko_driver::json::parse(bad);
        } catch (const cko_driver::json::Error&) {
            threw = true;
        }
        EXPECT(threw);
    }
}

#ifdef CKO_DRIVER_HAS_CUDA
// Under nvcc (-x cu) on a machine with a GPU: real CUDA-event timing with the L2 flush, and GPU
// facts.
static void cuda_events_time_real_work(int count) {
    struct Memset : cko_driver::Workload {
        struct Run : cko_driver::SubjectRun {
            void* buf = nullptr;
            Run() { cko_driver::cuda_check(cudaMalloc(&buf, 64 << 20), "cudaMalloc"); }
            ~Run() override { cudaFree(buf); }
            void run() override {
                cko_driver::cuda_check(cudaMemsetAsync(buf, 1, 64 << 20, nullptr), "memset");
            }
            cko_driver::Check check() override { return {"passed", {{"max_rel_err", 0}}}; }
        };
        std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject&,
                                                        const cko_driver::Request&) override {
            return std::make_unique<Run>();
        }
    };
    Fixture f;
    Memset w;
    cko_driver::Options o;
    o.timer = cko_driver::TimerKind::cuda_events;
    o.flush_l2 = true;
    o.warmup_s = 0.01;
    EXPECT(run(f.write("single", 3, "us", ""), w, o) == 0);
    const Value r = f.result();
    for (const Value& x :
         at(at(at(at(r, "subjects").array[0], "measurements"), "primary"), "samples").array)
        EXPECT(x.number > 0.5 && x.number < 1e5);
    const Value& env = at(r, "environment");
    EXPECT(at(env, "timer").string == "cuda_event_l2_flush");
    EXPECT(at(env, "gpu_uuids").array.size() == static_cast<size_t>(count));
    EXPECT(at(env, "gpu_uuids").array[0].string.rfind("GPU-", 0) == 0);
}
#endif

// Reads, in every timed call, which subject the SDK says runs now.
struct RunningWatcher : Recorder {
    std::string marker_file;
    std::vector<std::string> seen;
    int kill_candidate_at = 0;  // SIGKILL this process at the candidate's Nth call (0: never)
    struct Run : Recorder::Run {
        using Recorder::Run::Run;
        void run() override {
            auto& w = static_cast<RunningWatcher&>(owner);
            w.seen.push_back(file_text(w.marker_file));
            Recorder::Run::run();
            if (role == "candidate" && w.kill_candidate_at > 0 &&
                std::count(w.calls.begin(), w.calls.end(), role) == w.kill_candidate_at)
                ::kill(::getpid(), SIGKILL);
        }
    };
    std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& s,
                                                    const cko_driver::Request& r) override {
        marker_file = r.output_dir + "/cko-running-subject.txt";
        return std::make_unique<Run>(*this, s.role);
    }
};

// A paired request alternates subjects at every call: the running subject is kept in a file of
// output_dir (exact at every call, removed before the result), and nothing goes to stderr (it wrote
// `cko: subject ROLE case ID` at every change: ~2 000 lines a request).
static void the_running_subject_is_a_file_not_stderr_lines() {
    Fixture f;
    RunningWatcher w;
    FixedTimer t(1000);
    cko_driver::Options o = no_warmup(&t);
    o.min_warmup_calls = 3;
    std::ostringstream err;
    std::streambuf* was = std::cerr.rdbuf(err.rdbuf());
    const int rc = run(f.write("paired", 5, "us", "[\"candidate\", \"reference\"]"), w, o);
    std::cerr.rdbuf(was);
    EXPECT(rc == 0);
    EXPECT(w.seen.size() == 16 && w.seen.size() == w.calls.size());
    for (size_t i = 0; i < w.seen.size() && i < w.calls.size(); ++i)
        EXPECT(w.seen[i] == "cko: subject " + w.calls[i] + " case main\n");
    EXPECT(count_of(err.str(), "cko: subject") == 0);
    EXPECT(f.out_files() == std::vector<std::string>{"result.json"});
    EXPECT(at(f.result(), "artifacts").array.empty());
}

// A driver killed while the candidate runs (its 4th call, after 3 of the reference) leaves the file
// naming the candidate: what cko reads to attribute the crash.
static void a_crash_leaves_the_running_subject_named() {
    Fixture f;
    const std::string request = f.write("paired", 5, "us", "[\"reference\", \"candidate\"]");
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open((f.dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 2);
        RunningWatcher w;
        w.kill_candidate_at = 4;
        FixedTimer t(1000);
        ::_exit(run(request, w, no_warmup(&t)) == 0 ? 10 : 11);
    }
    int status = 0;
    EXPECT(::waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT(file_text(f.out() / "cko-running-subject.txt") == "cko: subject candidate case main\n");
    EXPECT(count_of(file_text(f.dir / "stderr.txt"), "cko: subject") == 0);
    EXPECT(!fs::exists(f.out() / "result.json"));
}

// Where the file cannot be made, the line goes to stderr at every change of subject, as before (cko
// reads the last one when there is no file).
static void without_the_file_each_change_of_subject_goes_to_stderr() {
    Fixture f;
    fs::create_directories(f.out() / "cko-running-subject.txt");  // a directory: open() fails
    Recorder w;
    FixedTimer t(1000);
    std::ostringstream err;
    std::streambuf* was = std::cerr.rdbuf(err.rdbuf());
    const int rc =
        run(f.write("paired", 3, "us", "[\"candidate\", \"reference\"]"), w, no_warmup(&t));
    std::cerr.rdbuf(was);
    EXPECT(rc == 0);
    // prepare, then 3 samples: 4 changes of subject each
    EXPECT(count_of(err.str(), "cko: subject candidate case main\n") == 4);
    EXPECT(count_of(err.str(), "cko: subject reference case main\n") == 4);
    EXPECT(err.str().rfind("cko: subject reference case main\n") + 33 == err.str().size());
}

// `--session`: the same run_driver() serves every request of the FIFO in one call, one notice each
// ("failed" with the one-process exit code for a bad request), and returns 0 on {"exit": true}.
static void session_serves_requests_until_exit() {
    Fixture f;
    const std::string good = f.write("paired", 3, "us", "[\"candidate\", \"reference\"]");
    const std::string requests = (f.dir / "requests").string(),
                      notices = (f.dir / "notices").string();
    EXPECT(mkfifo(requests.c_str(), 0600) == 0 && mkfifo(notices.c_str(), 0600) == 0);
    const int rq = open(requests.c_str(), O_RDWR | O_NONBLOCK);
    const int nt = open(notices.c_str(), O_RDWR | O_NONBLOCK);
    const std::string lines = "{\"call\": 1, \"request\": \"" + good +
                              "\"}\n{\"call\": 2, \"request\": \"" +
                              (f.dir / "missing.json").string() + "\"}\n{\"exit\": true}\n";
    EXPECT(write(rq, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size()));
    setenv("CKO_SESSION_REQUESTS", requests.c_str(), 1);
    setenv("CKO_SESSION_NOTICES", notices.c_str(), 1);
    Recorder w;
    FixedTimer t(1000);
    std::string arg0 = "driver", arg1 = "--session";
    char* argv[] = {&arg0[0], &arg1[0], nullptr};
    EXPECT(cko_driver::run_driver(2, argv, w, no_warmup(&t)) == 0);
    char buf[512] = {};
    const ssize_t n = read(nt, buf, sizeof buf - 1);
    const std::string got(buf, n > 0 ? static_cast<size_t>(n) : 0);
    EXPECT(
        got ==
        "{\"ready\": true}\n{\"call\": 1, \"status\": \"done\", \"exit_code\": 0}\n{\"call\": 2, "
        "\"status\": "
        "\"failed\", "
        "\"exit_code\": 2}\n");
    const Value result = f.result();
    const Value& first = at(result, "subjects").array.at(0);
    EXPECT(at(at(at(first, "measurements"), "primary"), "samples").array.size() == 3);
    unsetenv("CKO_SESSION_REQUESTS");
    unsetenv("CKO_SESSION_NOTICES");
    close(rq);
    close(nt);
}

// PerCase: in a session, a setup() that keeps its inputs per case builds them once per case even as
// cases alternate; a make() that throws keeps nothing (the next request of that case builds again).
struct PerCaseInputs : Recorder {
    int builds = 0;
    int throw_on = 0;  // the build (1-based) that throws
    cko_driver::PerCase<std::string> inputs;
    const std::string* current = nullptr;
    void setup(const cko_driver::Request& r) override {
        current = &inputs.get(r, [&] {
            if (++builds == throw_on)
                throw std::runtime_error("setup broke");
            return r.case_.path;
        });
    }
};

static int serve_lines(const std::string& lines, cko_driver::Workload& w, Fixture& f) {
    const std::string requests = (f.dir / "requests.jsonl").string(),
                      notices = (f.dir / "notices.jsonl").string();
    std::ofstream(requests) << lines << "{\"exit\": true}\n";
    setenv("CKO_SESSION_REQUESTS", requests.c_str(), 1);
    setenv("CKO_SESSION_NOTICES", notices.c_str(), 1);
    FixedTimer t(1000);
    std::string arg0 = "driver", arg1 = "--session";
    char* argv[] = {&arg0[0], &arg1[0], nullptr};
    const int rc = cko_driver::run_driver(2, argv, w, no_warmup(&t));
    unsetenv("CKO_SESSION_REQUESTS");
    unsetenv("CKO_SESSION_NOTICES");
    return rc;
}

static void session_keeps_inputs_per_case() {
    Fixture a, b;
    const std::string ra = a.write("paired", 2, "us", "[\"candidate\", \"reference\"]");
    const std::string rb = b.write("paired", 2, "us", "[\"candidate\", \"reference\"]");
    const std::string la = "{\"call\": 1, \"request\": \"" + ra + "\"}\n";
    const std::string lb = "{\"call\": 2, \"request\": \"" + rb + "\"}\n";
    PerCaseInputs w;
    EXPECT(serve_lines(la + lb + la + lb + la, w, a) == 0);
    EXPECT(w.builds == 2);
    EXPECT(w.inputs.size() == 2);
    EXPECT(w.current != nullptr && *w.current == (a.dir / "case.json").string());
    // The first build of b throws: that request fails, and the next b builds again (3 builds).
    PerCaseInputs failing;
    failing.throw_on = 2;
    EXPECT(serve_lines(la + lb + lb + la, failing, a) == 0);
    EXPECT(failing.builds == 3);
    EXPECT(failing.inputs.size() == 2);
}

// Exit 77 is ctest's SKIP_RETURN_CODE for sdk_cpp_gpu (tests/CMakeLists.txt): a part that cannot
// run here is reported as skipped, never as passed.
constexpr int kSkipped = 77;

static int finish(const char* name) {
    if (failures) {
        std::cerr << failures << " check(s) failed\n";
        return 1;
    }
    std::cout << name << ": all checks passed\n";
    return 0;
}

static int gpu_part() {
#ifdef CKO_DRIVER_HAS_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        std::cout << "cuda_events_time_real_work: no GPU here: skipped\n";
        return kSkipped;
    }
    cuda_events_time_real_work(count);
    return finish("cko_driver_test --gpu");
#else
    std::cout << "cuda_events_time_real_work: this build has no CUDA (compile with nvcc -x cu): "
                 "skipped\n";
    return kSkipped;
#endif
}

int main(int argc, char** argv) {
    if (argc == 2 && std::string(argv[1]) == "--gpu") {
        return gpu_part();
    }
    smoke_gives_two_samples_for_one_subject();
    single_accepts_empty_or_own_order();
    paired_alternates_in_request_order();
    each_subject_reports_its_loaded_digest();
    warm_up_by_time_comes_first();
    units_are_converted();
    real_clock_measures_sleep();
    invalid_requests_exit_2_without_result();
    user_exception_gives_status_error();
    non_finite_metric_fails();
    constraints_are_sampled_and_checked();
    artifacts_are_listed();
    the_running_subject_is_a_file_not_stderr_lines();
    a_crash_leaves_the_running_subject_named();
    without_the_file_each_change_of_subject_goes_to_stderr();
    json_round_trips();
    session_serves_requests_until_exit();
    session_keeps_inputs_per_case();
    return finish("cko_driver_test");
}
