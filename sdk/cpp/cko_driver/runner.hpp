// run_driver(): the driver loop — request in, warm-up, timed samples (paired in order), checks,
// result out.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "environment.hpp"
#include "json.hpp"
#include "request.hpp"
#include "timer.hpp"

namespace cko_driver {

inline constexpr const char* kResultFormat = "cko/driver-result-v1";
// v1 + every subject's loaded_digest: written when the request names every subject's digest.
inline constexpr const char* kResultFormatV2 = "cko/driver-result-v2";
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadRequest = 2;    // usage or request error: nothing run, no result
inline constexpr int kExitDriverFailed = 3;  // the driver itself could not run: no result
// A non-finite correctness metric is written as this and the subject's status becomes "failed".
inline constexpr double kNonFiniteMetric = 1.7976931348623157e308;

// The driver cannot produce a valid result (not the fault of one subject's code).
struct DriverFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Check {
    std::string status = "passed";  // passed | failed | error
    std::map<std::string, double> metrics;
};

// One prepared subject. run() is the timed call; the rest are untimed.
class SubjectRun {
public:
    virtual ~SubjectRun() = default;
    virtual void reset() {}  // before every call of run (e.g. restore an in-place buffer)
    virtual void run() = 0;
    virtual Check check() = 0;                                          // after sampling
    virtual std::map<std::string, double> constraints() { return {}; }  // after each timed call
};

class Workload {
public:
    virtual ~Workload() = default;
    virtual void setup(const Request&) {}  // once, before any subject: load the case input here
    virtual std::unique_ptr<SubjectRun> prepare(const Subject& subject, const Request& request) = 0;
    // Override both when the primary metric is not a time (e.g. a throughput computed from the
    // time).
    virtual bool has_primary_value() const { return false; }
    virtual double primary_value(SubjectRun&, double elapsed_ns) { return elapsed_ns; }
};

// Inputs a session keeps per case (PROTOCOL.md, "What a session may keep"): get() builds the T of
// a request's case (id and file) with make() the first time this process sees that case and returns
// the kept one after, so that setup() costs once per case and session instead of once per request
// (cases alternate within a round). A make() that throws keeps nothing. Use it from setup() only
// when the inputs depend on nothing but the case (not request.seed) and no subject writes into
// them.
template <class T>
class PerCase {
public:
    template <class Make>
    T& get(const Request& request, Make&& make) {
        const std::string key = request.case_.id + "\n" + request.case_.path;
        auto it = kept_.find(key);
        if (it == kept_.end())
            it = kept_.emplace(key, make()).first;
        return it->second;
    }
    std::size_t size() const { return kept_.size(); }

private:
    std::map<std::string, T> kept_;
};

enum class TimerKind { cpu, cuda_events };

struct Options {
    TimerKind timer = TimerKind::cpu;
    bool flush_l2 = false;  // cuda_events only
    double warmup_s = 0.2;  // per subject, interleaved in order
    int min_warmup_calls = 1;
    int max_warmup_calls = 1000;
    Timer* custom_timer = nullptr;  // when set, used instead of `timer` (not owned)
#ifdef CKO_DRIVER_HAS_CUDA
    cudaStream_t stream = nullptr;  // where the CUDA events are recorded
#endif
};

namespace detail {

struct SubjectSlot {
    const Subject* subject = nullptr;
    std::unique_ptr<SubjectRun> run;
    bool failed = false;
    std::vector<double> primary;
    std::map<std::string, std::vector<double>> constraints;
    Check check;
};

inline double now_unix_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline std::vector<std::string> list_artifacts(const Request& r) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    const fs::path result = fs::path(r.result_path).lexically_normal();
    for (const auto& entry : fs::recursive_directory_iterator(r.output_dir)) {
        if (!entry.is_regular_file() || entry.path().lexically_normal() == result)
            continue;
        out.push_back(entry.path().lexically_relative(r.output_dir).generic_string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// In output_dir while a request runs: which subject runs now (RunningSubject); removed before the
// result is written.
inline constexpr const char* kRunningSubjectFile = "cko-running-subject.txt";

// Which subject runs now, kept where cko reads it after a crash (PROTOCOL.md "Which subject was
// running"). The line `cko: subject ROLE case ID` is overwritten in
// output_dir/cko-running-subject.txt each time the running subject changes (a paired request
// alternates: one pwrite, nothing on stderr); finish() removes the file before the result is
// written, so it is there only when the driver died mid-request, naming the subject that was
// running. Where the file cannot be made, the line goes to stderr instead (each change of subject),
// which cko reads when there is no file.
class RunningSubject {
public:
    RunningSubject(const std::string& output_dir, std::string case_id)
        : path_(output_dir + "/" + kRunningSubjectFile), case_id_(std::move(case_id)) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    }
    RunningSubject(const RunningSubject&) = delete;
    RunningSubject& operator=(const RunningSubject&) = delete;
    ~RunningSubject() { close(); }  // a failed request leaves who ran last, as a crash does

    void mark(const std::string& role) {
        if (role == last_)
            return;
        const std::string line = "cko: subject " + role + " case " + case_id_ + "\n";
        if (fd_ < 0) {
            std::cerr << line << std::flush;
        } else {
            const bool whole =
                ::pwrite(fd_, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size());
            if (whole && line.size() < size_)
                (void)::ftruncate(fd_, static_cast<off_t>(line.size()));
            size_ = line.size();
        }
        last_ = role;
    }
    // Every subject ran: no crash to attribute, and the file is no artifact.
    void finish() {
        if (fd_ >= 0) {
            close();
            ::unlink(path_.c_str());
        }
    }

private:
    void close() {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }
    std::string path_, case_id_, last_;
    int fd_ = -1;
    std::size_t size_ = 0;
};

// Temp file beside the result, renamed over; the temp never remains. No fsync: the rename already
// makes cko see the whole result or none, and cko makes it durable with the call's other files
// before it ledgers them.
inline void write_atomically(const std::string& path, const std::string& data) {
    std::string tmp = path.substr(0, path.rfind('/') + 1) + ".result-XXXXXX";
    int fd = mkstemp(&tmp[0]);
    if (fd < 0)
        throw DriverFailure("cannot create a temp file beside " + path + ": " +
                            std::strerror(errno));
    bool ok = true;
    for (size_t done = 0; ok && done < data.size();) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        done += ok ? static_cast<size_t>(n) : 0;
    }
    ok = ok && fchmod(fd, 0644) == 0;
    ok = (::close(fd) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        throw DriverFailure("cannot write " + path + ": " + why);
    }
}

inline void write_samples(std::string& out, const Metric& m, const std::vector<double>& xs) {
    out += "{\"name\": ";
    json::write_string(out, m.name);
    out += ", \"unit\": ";
    json::write_string(out, m.unit);
    out += ", \"samples\": [";
    for (size_t i = 0; i < xs.size(); ++i) {
        if (i)
            out += ", ";
        json::write_number(out, xs[i]);
    }
    out += "]}";
}

class Runner {
public:
    Runner(Workload& w, const Request& r, Timer& t, const Options& o) : w_(w), r_(r), t_(t), o_(o) {
        for (const auto& s : r.subjects)
            slots_[s.role].subject = &s;
    }

    std::string run() {
        // What the workload's code runs (setup to check): the result's cost.workload_s.
        const auto started = std::chrono::steady_clock::now();
        try {
            w_.setup(r_);
        } catch (const std::exception& e) {
            throw DriverFailure(std::string("setup threw: ") + e.what());
        }
        for (const auto& role : r_.order) {
            SubjectSlot& s = slots_[role];
            mark(s);
            guard(s, "prepare", [&] { s.run = w_.prepare(*s.subject, r_); });
            if (!s.failed && !s.run)
                fail(s, "prepare", "returned no SubjectRun");
        }
        warm_up();
        // Sample i of every subject is taken back to back in the request's order: pair i.
        for (int i = 0; i < r_.samples; ++i)
            for (SubjectSlot* s : alive())
                guard(*s, "run", [&] { sample(*s); });
        for (SubjectSlot* s : alive())
            guard(*s, "check", [&] { check(*s); });
        workload_s_ =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        running_.finish();
        return result_json();
    }

private:
    Workload& w_;
    const Request& r_;
    Timer& t_;
    const Options& o_;
    std::map<std::string, SubjectSlot> slots_;
    std::vector<std::string> notes_;
    double workload_s_ = 0;
    RunningSubject running_{r_.output_dir, r_.case_.id};

    void fail(SubjectSlot& s, const char* stage, const std::string& what) {
        s.failed = true;
        notes_.push_back("subject " + s.subject->role + " (" + s.subject->label + "): " + stage +
                         " threw: " + what);
        std::cerr << "cko_driver: " << notes_.back() << "\n";
    }
    template <class F>
    void guard(SubjectSlot& s, const char* stage, F&& f) {
        try {
            f();
        } catch (const DriverFailure&) {
            throw;
        } catch (const std::exception& e) {
            fail(s, stage, e.what());
        } catch (...) {
            fail(s, stage, "unknown exception");
        }
    }
    std::vector<SubjectSlot*> alive() {
        std::vector<SubjectSlot*> out;
        for (const auto& role : r_.order)
            if (!slots_[role].failed)
                out.push_back(&slots_[role]);
        return out;
    }
    // Says which subject runs next, so that cko can attribute a crash (docs/PROTOCOL.md).
    void mark(const SubjectSlot& s) { running_.mark(s.subject->role); }
    double timed_call(SubjectSlot& s) {
        mark(s);
        s.run->reset();
        t_.before_each();
        return t_.time_ns([&] { s.run->run(); });
    }

    void warm_up() {
        const double start_unix = now_unix_s();
        const auto start = std::chrono::steady_clock::now();
        for (int calls = 0; calls < o_.max_warmup_calls; ++calls) {
            std::vector<SubjectSlot*> subjects = alive();
            if (subjects.empty())
                return;
            const double elapsed =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (calls >= o_.min_warmup_calls &&
                elapsed >= o_.warmup_s * static_cast<double>(subjects.size()))
                return;
            // Never spend more than half of the time left before the deadline on warming up.
            if (calls >= 1 && r_.has_deadline &&
                now_unix_s() - start_unix > (r_.deadline_unix_s - start_unix) / 2)
                return;
            for (SubjectSlot* s : subjects)
                guard(*s, "run (warm-up)", [&] { timed_call(*s); });
        }
    }

    void sample(SubjectSlot& s) {
        const double ns = timed_call(s);
        const double value = w_.has_primary_value() ? w_.primary_value(*s.run, ns)
                                                    : ns / ns_per_unit(r_.primary.unit);
        if (!(std::isfinite(value) && value > 0))
            throw DriverFailure("subject " + s.subject->role + ": primary sample " +
                                std::to_string(value) + " is not finite and positive");
        s.primary.push_back(value);
        if (r_.constraints.empty())
            return;
        const std::map<std::string, double> got = s.run->constraints();
        std::set<std::string> want;
        for (const auto& c : r_.constraints)
            want.insert(c.name);
        std::set<std::string> have;
        for (const auto& kv : got)
            have.insert(kv.first);
        if (have != want)
            throw DriverFailure("constraints() names differ from the request's constraint set");
        for (const auto& kv : got) {
            if (!(std::isfinite(kv.second) && kv.second > 0))
                throw DriverFailure("subject " + s.subject->role + ": constraint " + kv.first +
                                    " sample is not finite and positive");
            s.constraints[kv.first].push_back(kv.second);
        }
    }

    void check(SubjectSlot& s) {
        Check c = s.run->check();
        if (c.status != "passed" && c.status != "failed" && c.status != "error")
            throw std::runtime_error("check() returned status \"" + c.status + "\"");
        for (const auto& m : r_.correctness_metrics)
            if (!c.metrics.count(m))
                throw std::runtime_error("check() did not report correctness metric " + m);
        for (auto& kv : c.metrics) {
            if (std::isfinite(kv.second))
                continue;
            notes_.push_back("subject " + s.subject->role + ": metric " + kv.first +
                             " is not finite; status set to failed");
            kv.second = kNonFiniteMetric;
            if (c.status == "passed")
                c.status = "failed";
        }
        s.check = std::move(c);
    }

    std::string result_json() {
        bool v2 = true;  // a cko that names every subject's digest reads v2
        for (const auto& sub : r_.subjects)
            v2 = v2 && !sub.digest.empty();
        std::string out = "{\"format_version\": ";
        json::write_string(out, v2 ? kResultFormatV2 : kResultFormat);
        out += ",\n \"subjects\": [";
        for (size_t i = 0; i < r_.subjects.size(); ++i) {
            const SubjectSlot& s = slots_[r_.subjects[i].role];
            out += i ? ",\n  {" : "\n  {";
            out += "\"role\": ";
            json::write_string(out, s.subject->role);
            // The digest of the subject these samples were measured on (the slot's own subject,
            // never looked up by role): cko refuses any other (role_mismatch).
            if (v2) {
                out += ", \"loaded_digest\": ";
                json::write_string(out, s.subject->digest);
            }
            // An erroring subject carries no samples and no metrics.
            out += ", \"correctness\": {\"status\": ";
            json::write_string(out, s.failed ? "error" : s.check.status);
            out += ", \"metrics\": {";
            bool first = true;
            for (const auto& kv : s.failed ? std::map<std::string, double>{} : s.check.metrics) {
                out += first ? "" : ", ";
                first = false;
                json::write_string(out, kv.first);
                out += ": ";
                json::write_number(out, kv.second);
            }
            out += "}}, \"measurements\": {\"primary\": ";
            static const std::vector<double> none;
            write_samples(out, r_.primary, s.failed ? none : s.primary);
            out += ", \"constraints\": [";
            for (size_t k = 0; k < r_.constraints.size(); ++k) {
                if (k)
                    out += ", ";
                auto it = s.constraints.find(r_.constraints[k].name);
                write_samples(out, r_.constraints[k],
                              s.failed || it == s.constraints.end() ? none : it->second);
            }
            out += "]}}";
        }
        out += "\n ],\n \"environment\": ";
        write_environment(out, t_.name(), notes_);
        out += ",\n \"artifacts\": [";
        const std::vector<std::string> artifacts = list_artifacts(r_);
        for (size_t i = 0; i < artifacts.size(); ++i) {
            if (i)
                out += ", ";
            json::write_string(out, artifacts[i]);
        }
        out += "]";
        if (v2) {  // every cko that reads v2 reads cost
            out += ",\n \"cost\": {\"workload_s\": ";
            json::write_number(out, workload_s_ > 0 ? workload_s_ : 0.0);
            out += "}";
        }
        out += "}\n";
        return out;
    }
};

inline std::string request_path(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--request" && i + 1 < argc)
            return argv[i + 1];
        if (a.rfind("--request=", 0) == 0)
            return a.substr(10);
    }
    throw RequestError("usage: <driver> --request <request.json>");
}

inline std::unique_ptr<Timer> make_timer(const Options& o) {
    if (o.timer == TimerKind::cpu) {
        if (o.flush_l2)
            throw DriverFailure("flush_l2 needs TimerKind::cuda_events");
        return std::make_unique<CpuTimer>();
    }
#ifdef CKO_DRIVER_HAS_CUDA
    return std::make_unique<CudaEventTimer>(o.stream, o.flush_l2);
#else
    throw DriverFailure(
        "TimerKind::cuda_events needs the driver compiled with nvcc (or -DCKO_DRIVER_WITH_CUDA)");
#endif
}

}  // namespace detail

// Runs the whole driver call and returns the exit code (return it from main).
// 0: result written (subjects may still be failed/error); 2: bad usage or request; 3: driver could
// not run.
namespace detail {

// What a session carries from one request to the next (nothing results- or sample-like).
struct SessionState {
    std::set<std::string> warmed;  // subject paths already run here: they get one untimed call
};

// One request, as one process-per-call would run it; returns that call's exit code. `session` is
// null for a one-process call.
inline int run_one(const std::string& request_file, Workload& workload, const Options& options,
                   Timer* timer, SessionState* session) {
    Request request;
    try {
        request = load_request(request_file);
        if (!workload.has_primary_value() && ns_per_unit(request.primary.unit) == 0.0)
            throw RequestError(
                "primary unit \"" + request.primary.unit +
                "\" is not a time unit (ns, us, ms, s); override Workload::primary_value");
    } catch (const RequestError& e) {
        std::cerr << "cko_driver: invalid request: " << e.what() << "\n";
        return kExitBadRequest;
    }
    try {
        std::filesystem::create_directories(request.output_dir);
        std::unique_ptr<Timer> owned =
            (options.custom_timer || timer) ? nullptr : make_timer(options);
        Timer& t = options.custom_timer ? *options.custom_timer : timer ? *timer : *owned;
        Options o = options;
        bool all_warm = session != nullptr;
        for (const auto& sub : request.subjects)
            all_warm = all_warm && session->warmed.count(sub.path) > 0;
        if (all_warm)
            o.warmup_s = 0.0;
        const std::string doc = Runner(workload, request, t, o).run();
        write_atomically(request.result_path, doc);
        if (session)
            for (const auto& sub : request.subjects)
                session->warmed.insert(sub.path);
    } catch (const std::exception& e) {
        std::cerr << "cko_driver: driver failed, no result written: " << e.what() << "\n";
        return kExitDriverFailed;
    }
    return kExitOk;
}

inline bool has_flag(int argc, char** argv, const std::string& flag) {
    for (int i = 1; i < argc; ++i)
        if (flag == argv[i])
            return true;
    return false;
}

}  // namespace detail

// The session loop (driver protocol v2, capability `session`; PROTOCOL.md): {"ready": true} on
// $CKO_SESSION_NOTICES once started, then one JSON line per request from $CKO_SESSION_REQUESTS
// ({"call": N, "request": PATH}), run exactly as a one-process call, answered by one line on
// $CKO_SESSION_NOTICES ({"call": N, "status": "done" | "failed", "exit_code": C}); {"exit": true}
// ends it. The process, its loaded libraries, CUDA context and timer stay; setup() and prepare()
// still run for every request, prepare() from that request's snapshots (setup() may keep its inputs
// per case: PerCase above).
inline int serve(Workload& workload, const Options& options = {}) {
    const char* in_path = std::getenv("CKO_SESSION_REQUESTS");
    const char* out_path = std::getenv("CKO_SESSION_NOTICES");
    if (!in_path || !out_path) {
        std::cerr << "cko_driver: invalid request: --session needs CKO_SESSION_REQUESTS and "
                     "CKO_SESSION_NOTICES "
                     "(cko sets both)\n";
        return kExitBadRequest;
    }
    std::FILE* in = std::fopen(in_path, "r");
    std::FILE* out = std::fopen(out_path, "w");
    if (!in || !out) {
        std::cerr << "cko_driver: cannot open the session FIFOs: " << std::strerror(errno) << "\n";
        return kExitDriverFailed;
    }
    // Ready: the process is up. cko waits for this before it takes the GPU locks, so nothing before
    // it may touch a GPU; the timer (CUDA events, the context) is made after it.
    std::fputs("{\"ready\": true}\n", out);
    std::fflush(out);
    std::unique_ptr<Timer> owned;
    try {
        if (!options.custom_timer)
            owned = detail::make_timer(options);
    } catch (const std::exception& e) {
        std::cerr << "cko_driver: driver failed, no result written: " << e.what() << "\n";
        return kExitDriverFailed;
    }
    detail::SessionState session;
    std::string line;
    for (int c; (c = std::fgetc(in)) != EOF;) {
        if (c != '\n') {
            line.push_back(static_cast<char>(c));
            continue;
        }
        std::string call, path;
        try {
            const json::Value msg = json::parse(line);
            const json::Value* exit_flag = msg.find("exit");
            if (exit_flag && exit_flag->kind == json::Value::Kind::boolean && exit_flag->boolean)
                return kExitOk;
            const json::Value* n = msg.find("call");
            const json::Value* p = msg.find("request");
            if (!n || !n->is_integer() || !p || p->kind != json::Value::Kind::string)
                throw json::Error("no call or request");
            call = n->number_text;
            path = p->string;
        } catch (const std::exception& e) {
            std::cerr << "cko_driver: invalid session message: " << e.what() << "\n";
            return kExitBadRequest;
        }
        line.clear();
        const int code = detail::run_one(path, workload, options, owned.get(), &session);
        std::cout.flush();
        std::cerr.flush();
        std::fprintf(out, "{\"call\": %s, \"status\": \"%s\", \"exit_code\": %d}\n", call.c_str(),
                     code == kExitOk ? "done" : "failed", code);
        std::fflush(out);
    }
    return kExitOk;
}

// The whole driver: `--request FILE` runs one call; `--session` (cko passes it when the Target's
// driver declares the capability `session`) serves every request of the operation in this process.
inline int run_driver(int argc, char** argv, Workload& workload, const Options& options = {}) {
    if (detail::has_flag(argc, argv, "--session"))
        return serve(workload, options);
    std::string path;
    try {
        path = detail::request_path(argc, argv);
    } catch (const RequestError& e) {
        std::cerr << "cko_driver: invalid request: " << e.what() << "\n";
        return kExitBadRequest;
    }
    return detail::run_one(path, workload, options, nullptr, nullptr);
}

}  // namespace cko_driver
