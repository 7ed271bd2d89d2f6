// Slurm jobs for driver calls: srun/sbatch argv, the in-job wrapper, scancel, squeue/scontrol/sacct
// queries.
#include "cko/run/slurm_launcher.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

namespace cko::run {
namespace fs = std::filesystem;
namespace {

// What the Slurm client commands need from our environment: where they find themselves, the
// cluster's configuration and the user. Nothing else of cko's environment reaches them.
const std::vector<std::string> kSlurmClientEnv = {"PATH", "SLURM_CONF", "HOME", "USER", "LOGNAME"};

// Runs inside the job, before the driver: the job's facts, then the node's identity, then the
// driver itself (exec, so that the job's signals reach it). Fixed text: the driver's argv arrives
// as positional parameters and is never parsed by the shell.
constexpr const char* kStepScript =
    "step=$1 doctor=$2 cko=$3\n"
    "shift 3\n"
    "printf "
    "'job_id=%s\\nstep_id=%s\\nnode=%s\\njob_gpus=%s\\nstep_gpus=%s\\ncuda_visible_devices=%s\\n' "
    "\"${SLURM_JOB_ID-}\" \"${SLURM_STEP_ID-}\" \"${SLURMD_NODENAME-}\" \"${SLURM_JOB_GPUS-}\" "
    "\"${SLURM_STEP_GPUS-}\" \"${CUDA_VISIBLE_DEVICES-}\" > \"$step\"\n"
    // Written aside and renamed: a job cancelled mid-write leaves no half JSON document.
    "\"$cko\" doctor --json --tool-timeout-ms 3000 > \"$doctor.partial\" 2>/dev/null && "
    "mv -f \"$doctor.partial\" \"$doctor\"\n"
    "exec \"$@\"\n";

struct Query {
    bool ran = false;  // the command could be started and exited 0
    std::string out;
    std::string err;
};

Query slurm_query(const std::vector<std::string>& argv,
                  std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    Query q;
    fs::path dir;
    try {
        dir = make_temp_dir("cko-slurm");
    } catch (const Error&) {
        return q;
    }
    ProcessSpec ps;
    ps.argv = argv;
    ps.env_allow = kSlurmClientEnv;
    ps.stdout_path = dir / "out";
    ps.stderr_path = dir / "err";
    ps.timeout = timeout;
    ps.kill_grace = std::chrono::milliseconds(500);
    try {
        const ProcessResult r = run_process(ps);
        q.ran = r.exited && r.exit_code == 0;
        q.out = read_file_capped(dir / "out", 1 << 20);
        q.err = read_file_capped(dir / "err", 1 << 16);
    } catch (const Error&) {
        q.ran = false;  // not installed, or not on PATH
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return q;
}

std::string self_executable() {
    std::array<char, PATH_MAX> buf{};
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string("cko");
}

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.pop_back();
    }
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) {
        ++i;
    }
    return s.substr(i);
}

std::map<std::string, std::string> read_key_values(const fs::path& file) {
    std::map<std::string, std::string> kv;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) {
            kv.emplace(line.substr(0, eq), line.substr(eq + 1));  // the first one counts
        }
    }
    return kv;
}

// "Key=Value" tokens of `scontrol show job -o` (values without spaces are all cko reads).
std::map<std::string, std::string> scontrol_fields(const std::string& line) {
    std::map<std::string, std::string> f;
    std::istringstream in(line);
    std::string token;
    while (in >> token) {
        const auto eq = token.find('=');
        if (eq != std::string::npos) {
            f.emplace(token.substr(0, eq), token.substr(eq + 1));
        }
    }
    return f;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep)) {
        if (!part.empty()) {
            parts.push_back(part);
        }
    }
    return parts;
}

Json nullable(const std::string& s) {
    return s.empty() ? Json(nullptr) : Json(s);
}

// The job's final state: scontrol while slurmctld still remembers it (MinJobAge), else sacct.
void read_job_state(const std::string& job_id, Json& rec) {
    const Query sc = slurm_query({"scontrol", "show", "job", "-o", job_id});
    if (sc.ran && sc.out.find("JobState=") != std::string::npos) {
        const auto f = scontrol_fields(sc.out);
        rec["job_state"] = f.count("JobState") != 0 ? Json(f.at("JobState")) : Json(nullptr);
        rec["job_reason"] = f.count("Reason") != 0 ? Json(f.at("Reason")) : Json(nullptr);
        rec["exit_code"] = f.count("ExitCode") != 0 ? Json(f.at("ExitCode")) : Json(nullptr);
        if (rec["node"].is_null() && f.count("NodeList") != 0 && f.at("NodeList") != "(null)") {
            rec["node"] = f.at("NodeList");
        }
        rec["job_state_source"] = "scontrol";
        return;
    }
    const Query sa =
        slurm_query({"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State,NodeList,ExitCode"});
    const auto fields = split(trim(sa.out), '|');
    if (sa.ran && fields.size() >= 3) {
        // "CANCELLED by 0" -> "CANCELLED"
        rec["job_state"] =
            split(fields[0], ' ').empty() ? Json(nullptr) : Json(split(fields[0], ' ').front());
        rec["exit_code"] = fields[2];
        if (rec["node"].is_null() && fields[1] != "None assigned") {
            rec["node"] = fields[1];
        }
        rec["job_state_source"] = "sacct";
    }
}

void scancel_named(const std::string& job_name) {
    (void)slurm_query({"scancel", "--name", job_name});
}

}  // namespace

Json SlurmOptions::to_json() const {
    return Json{{"submit", submit},         {"partition", partition},
                {"account", account},       {"constraint", constraint},
                {"time_limit", time_limit}, {"gpus_per_call", gpus_per_call},
                {"extra_args", extra_args}, {"cko", cko_path}};
}

SlurmOptions SlurmOptions::from_json(const Json& j) {
    SlurmOptions o;
    o.submit = j.value("submit", std::string("srun"));
    o.partition = j.value("partition", std::string());
    o.account = j.value("account", std::string());
    o.constraint = j.value("constraint", std::string());
    o.time_limit = j.value("time_limit", std::string());
    o.gpus_per_call = j.value("gpus_per_call", 0);
    o.extra_args = j.value("extra_args", std::vector<std::string>{});
    o.cko_path = j.value("cko", std::string());
    return o;
}

const std::vector<std::string>& slurm_allowed_options() {
    static const std::vector<std::string> allowed = {"--exclusive",
                                                     "--nodelist",
                                                     "--exclude",
                                                     "--qos",
                                                     "--reservation",
                                                     "--mem",
                                                     "--mem-per-cpu",
                                                     "--mem-per-gpu",
                                                     "--cpus-per-task",
                                                     "--cpus-per-gpu",
                                                     "--gres",
                                                     "--gpus-per-node",
                                                     "--gpu-bind",
                                                     "--cpu-bind",
                                                     "--hint",
                                                     "--comment",
                                                     "--wckey",
                                                     "--licenses",
                                                     "--cluster-constraint",
                                                     "--clusters",
                                                     "--mcs-label",
                                                     "--network",
                                                     "--tmp",
                                                     "--core-spec"};
    return allowed;
}

std::optional<std::string> slurm_extra_arg_problem(const std::string& arg) {
    const std::string name = arg.substr(0, arg.find('='));
    const auto& allowed = slurm_allowed_options();
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end() &&
        arg.find_first_of(std::string("\n\0", 2)) == std::string::npos) {
        return std::nullopt;
    }
    return fmt::format(
        "\"{}\" is not an allowed srun/sbatch option (job name, output, time, signals and the "
        "environment are cko's); allowed: {}, each written --name or --name=value",
        arg, fmt::join(allowed, ", "));
}

std::optional<std::string> slurm_time_limit_problem(const std::string& text) {
    // D-HH[:MM[:SS]] or MM[:SS] or HH:MM:SS, digits only.
    std::string rest = text;
    const auto dash = text.find('-');
    if (dash != std::string::npos) {
        rest = text.substr(dash + 1);
        if (dash == 0 ||
            !std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(dash),
                         ::isdigit)) {
            rest.clear();
        }
    }
    const auto parts = split(rest, ':');
    const bool digits = !parts.empty() && parts.size() <= 3 &&
                        std::count(rest.begin(), rest.end(), ':') + 1 ==
                            static_cast<std::ptrdiff_t>(parts.size()) &&
                        std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
                            return std::all_of(p.begin(), p.end(), ::isdigit);
                        });
    if (digits && !text.empty() && text.find_first_not_of("0123456789:-") == std::string::npos) {
        return std::nullopt;
    }
    return fmt::format(
        "\"{}\" is not a Slurm time limit; write minutes (\"30\"), \"HH:MM:SS\" or \"D-HH:MM:SS\"",
        text);
}

std::string slurm_job_name(const std::string& invocation_id, int number) {
    return fmt::format("cko-{}-{:04d}", invocation_id, number);
}

void wrap_in_slurm_job(const SlurmOptions& o, const std::string& job_name, const fs::path& call_dir,
                       std::chrono::milliseconds queue_wait, ProcessSpec& ps) {
    const bool batch = o.submit == "sbatch";
    const auto minutes = (ps.timeout.count() + 59999) / 60000 + 1;
    std::vector<std::string> argv = {batch ? "sbatch" : "srun", "--job-name=" + job_name,
                                     "--nodes=1", "--ntasks=1"};
    if (batch) {
        argv.insert(argv.end(), {"--wait", "--parsable",
                                 "--output=" + (call_dir / store::layout::kStdoutFile).string(),
                                 "--error=" + (call_dir / store::layout::kStderrFile).string()});
    } else {
        argv.insert(argv.end(), {"--quiet", "--kill-on-bad-exit=1"});
    }
    if (!o.partition.empty()) {
        argv.push_back("--partition=" + o.partition);
    }
    if (!o.account.empty()) {
        argv.push_back("--account=" + o.account);
    }
    if (!o.constraint.empty()) {
        argv.push_back("--constraint=" + o.constraint);
    }
    if (o.gpus_per_call > 0) {
        argv.push_back(fmt::format("--gpus={}", o.gpus_per_call));
    }
    argv.push_back("--time=" + (o.time_limit.empty() ? fmt::format("{}", minutes) : o.time_limit));
    argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
    const std::string cko = o.cko_path.empty() ? self_executable() : o.cko_path;
    const std::string step = (call_dir / store::layout::kSlurmStepFile).string();
    const std::string doctor = (call_dir / store::layout::kNodeDoctorFile).string();
    if (batch) {
        // sbatch runs a script file with the arguments that follow it; the script is ours.
        const fs::path script = call_dir / store::layout::kJobScriptFile;
        write_file_create_once(
            script, std::string("#!/bin/sh\n# cko: one driver call as a batch job\n") + kStepScript,
            0555);
        argv.push_back(script.string());
        // The job writes the driver's output into the call's stdout.txt/stderr.txt; sbatch's own
        // (the job id) is captured beside them.
        for (const std::string_view name :
             {store::layout::kStdoutFile, store::layout::kStderrFile}) {
            write_file_create_once(call_dir / name, "", 0644);
        }
        ps.stdout_path = call_dir / store::layout::kSubmitStdoutFile;
        ps.stderr_path = call_dir / store::layout::kSubmitStderrFile;
    } else {
        argv.insert(argv.end(), {"/bin/sh", "-c", kStepScript, "cko-slurm-step"});
    }
    argv.insert(argv.end(), {step, doctor, cko});
    argv.insert(argv.end(), ps.argv.begin(), ps.argv.end());
    ps.argv = std::move(argv);
    for (const auto& name : kSlurmClientEnv) {
        if (std::find(ps.env_allow.begin(), ps.env_allow.end(), name) == ps.env_allow.end() &&
            name != "PATH") {
            if (const char* v = std::getenv(name.c_str()); v != nullptr) {
                ps.env_set.emplace(name, v);
            }
        }
    }
    if (ps.env_set.count("PATH") == 0 &&
        std::find(ps.env_allow.begin(), ps.env_allow.end(), "PATH") == ps.env_allow.end()) {
        // srun/sbatch must be found; the job then sees this PATH too (as with any srun).
        if (const char* v = std::getenv("PATH"); v != nullptr) {
            ps.env_set.emplace("PATH", v);
        }
    }
    ps.timeout += queue_wait;
    // scancel before the kill sequence: signalling srun alone would not end a job that is still
    // pending, and sbatch --wait does not forward signals at all.
    auto previous = ps.before_kill;
    ps.before_kill = [job_name, previous] {
        if (previous) {
            previous();
        }
        scancel_named(job_name);
    };
}

std::vector<std::string> slurm_jobs_named(const std::string& job_name) {
    const Query q = slurm_query({"squeue", "-h", "--name", job_name, "-o", "%i"});
    return q.ran ? split(trim(q.out), '\n') : std::vector<std::string>{};
}

namespace {
// Jobs that still hold or wait for resources (not those merely completing).
std::vector<std::string> active_jobs_named(const std::string& job_name) {
    const Query q =
        slurm_query({"squeue", "-h", "--name", job_name, "-t",
                     "PENDING,RUNNING,SUSPENDED,CONFIGURING,REQUEUED,RESIZING", "-o", "%i"});
    return q.ran ? split(trim(q.out), '\n') : std::vector<std::string>{};
}
}  // namespace

int cancel_slurm_jobs_named(const std::string& job_name) {
    const auto jobs = active_jobs_named(job_name);
    if (!jobs.empty()) {
        scancel_named(job_name);
    }
    return static_cast<int>(jobs.size());
}

namespace {

// Makes sure the job is gone: records the scancel of cko's kill sequence, scancels a job that
// outlived srun/sbatch (`queued`: its ids), and waits until squeue lists it no more.
void end_the_job(const std::string& job_name, const ProcessResult& process,
                 const std::vector<std::string>& queued, std::chrono::milliseconds grace,
                 Json& rec) {
    if (process.timed_out || process.cancelled) {
        rec["scancelled"] = true;  // the kill sequence ran scancel first
        rec["scancel_reason"] = process.timed_out ? "timeout" : "cancel";
    }
    if (!queued.empty()) {
        // srun/sbatch ended but the job did not (srun killed, a lost connection): never leave it.
        scancel_named(job_name);
        rec["scancelled"] = true;
        if (rec["scancel_reason"].is_null()) {
            rec["scancel_reason"] = "left_running";
        }
    }
    {
        // Until squeue lists the job no more (a completing job is listed for a moment).
        const auto until = std::chrono::steady_clock::now() + grace + std::chrono::seconds(10);
        while (!slurm_jobs_named(job_name).empty()) {
            if (std::chrono::steady_clock::now() >= until) {
                rec["left_in_queue"] = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
}

// The node's identity as `cko doctor --json` saw it inside the job, and the UUIDs of the GPUs the
// job was given (the node's GPUs whose index Slurm named).
void read_node_identity(const fs::path& call_dir, const std::map<std::string, std::string>& step,
                        Json& rec) {
    try {
        const Json doctor = read_json_file(call_dir / store::layout::kNodeDoctorFile,
                                           JsonLimits{std::size_t{8} << 20, 64});
        rec["node_identity"] = doctor.at("identity");
    } catch (const std::exception& e) {
        rec["node_identity_problem"] =
            step.empty()
                ? std::string("the job never started the wrapper (no slurm-step.txt)")
                : fmt::format(
                      "cko doctor --json on node {} gave no identity ({}); is cko installed at the "
                      "same path on the compute nodes? (set slurm.cko)",
                      rec["node"].is_null() ? std::string("?") : rec["node"].get<std::string>(),
                      e.what());
    }
    Json uuids = Json::array();
    if (rec["node_identity"].is_object()) {
        const auto wanted =
            split(rec["job_gpus"].is_string() ? rec["job_gpus"].get<std::string>() : "", ',');
        for (const auto& g : rec["node_identity"].value("gpus", Json::array())) {
            const std::string index = g.contains("index") ? g["index"].dump() : "";
            if (wanted.empty() || std::find(wanted.begin(), wanted.end(), index) != wanted.end()) {
                uuids.push_back(g.value("uuid", std::string()));
            }
        }
    }
    rec["gpu_uuids"] = uuids;
}

// Slurm, not the driver, ended the job: an infrastructure failure (`lost`). Also whether Slurm's
// time limit ended it.
void judge_lost(const std::string& job_id, Json& rec) {
    const std::string state =
        rec["job_state"].is_string() ? rec["job_state"].get<std::string>() : "";
    static const std::vector<std::string> lost_states = {"NODE_FAIL", "BOOT_FAIL", "PREEMPTED",
                                                         "DEADLINE", "REVOKED"};
    if (std::find(lost_states.begin(), lost_states.end(), state) != lost_states.end() ||
        (state == "CANCELLED" && !rec["scancelled"].get<bool>())) {
        rec["lost"] = fmt::format(
            "Slurm ended job {} with state {}{} on node {}: the call was lost to the cluster, "
            "not failed by the driver",
            job_id, state, state == "CANCELLED" ? " (cancelled outside cko)" : "",
            rec["node"].is_null() ? std::string("?") : rec["node"].get<std::string>());
    }
    rec["slurm_timeout"] = state == "TIMEOUT";
}

// The launcher's files present in the call directory.
Json slurm_files(const fs::path& call_dir) {
    Json files = Json::array();
    for (const std::string_view name :
         {store::layout::kSlurmStepFile, store::layout::kNodeDoctorFile,
          store::layout::kNodeDoctorPartialFile, store::layout::kJobScriptFile,
          store::layout::kSubmitStdoutFile, store::layout::kSubmitStderrFile}) {
        std::error_code ec;
        if (fs::is_regular_file(fs::symlink_status(call_dir / name, ec))) {
            files.push_back(std::string(name));
        }
    }
    return files;
}

}  // namespace

Json settle_slurm_job(const SlurmOptions& o, const std::string& job_name, const fs::path& call_dir,
                      const ProcessResult& process, std::chrono::milliseconds grace) {
    Json rec{{"format_version", "cko/slurm-call-v1"},
             {"submit", o.submit},
             {"job_name", job_name},
             {"job_id", nullptr},
             {"node", nullptr},
             {"job_state", nullptr},
             {"scancelled", false},
             {"scancel_reason", nullptr},
             {"left_in_queue", false},
             {"lost", nullptr},
             {"node_identity", nullptr}};
    const auto step = read_key_values(call_dir / store::layout::kSlurmStepFile);
    std::string job_id = step.count("job_id") != 0 ? step.at("job_id") : "";
    if (job_id.empty() && o.submit == "sbatch") {
        try {  // --parsable: "<id>[;<cluster>]"
            job_id = trim(read_file_capped(call_dir / store::layout::kSubmitStdoutFile, 4096));
            job_id = job_id.substr(0, job_id.find(';'));
        } catch (const Error&) {
        }
    }
    const auto queued = active_jobs_named(job_name);
    if (job_id.empty() && !queued.empty()) {
        job_id = queued.front();
    }
    end_the_job(job_name, process, queued, grace, rec);
    rec["job_id"] = nullable(job_id);
    rec["node"] = nullable(step.count("node") != 0 ? step.at("node") : "");
    for (const char* key : {"job_gpus", "step_gpus", "cuda_visible_devices"}) {
        rec[key] = nullable(step.count(key) != 0 ? step.at(key) : "");
    }
    if (!job_id.empty()) {
        read_job_state(job_id, rec);
    }
    read_node_identity(call_dir, step, rec);
    judge_lost(job_id, rec);
    rec["files"] = slurm_files(call_dir);
    return rec;
}

}  // namespace cko::run
