// Invocation records: request, events.jsonl, calls in their own process groups, terminal result,
// lost detection.
#include "cko/run/invocation.hpp"

#include "cko/run/call_guard.hpp"

#include "cko/util/clock.hpp"
#include "cko/util/fault.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

namespace cko::run {

void HeldTime::add(double held, double driver, std::optional<double> workload) {
    ++calls;
    held_s += held;
    driver_s += std::min(driver, held);
    if (workload) {
        workload_s += std::min(*workload, std::min(driver, held));
        ++workload_calls;
    }
}

Json HeldTime::to_json() const {
    const bool split = calls > 0 && workload_calls == calls;
    const auto per_request_ms = [&](double s) {
        return calls > 0 ? Json(1000.0 * s / calls) : Json();
    };
    return Json{{"calls", calls},
                {"held_s", held_s},
                {"driver_s", driver_s},
                {"driver_work_s", split ? Json(workload_s) : Json()},
                {"sdk_s", split ? Json(driver_s - workload_s) : Json()},
                {"cko_s", held_s - driver_s},
                {"per_request_ms",
                 {{"driver_work", split ? per_request_ms(workload_s) : Json()},
                  {"sdk", split ? per_request_ms(driver_s - workload_s) : Json()},
                  {"cko", per_request_ms(held_s - driver_s)}}}};
}

namespace fs = std::filesystem;
namespace {

// An invocation's status from its request record and its result record (null while it runs).
InvocationStatus status_of(const std::string& id, const store::InvocationRecord& request,
                           Json result) {
    InvocationStatus st;
    st.id = id;
    st.kind = request.kind;
    st.owner = ProcessIdentity{static_cast<pid_t>(request.owner.pid), request.owner.start_ticks,
                               request.owner.boot_id, request.owner.hostname};
    // Whether the owner lives means something only while the invocation runs: a finished one's
    // status is its fixed record, the same on every read, whenever its owner's process exits.
    st.owner_alive = result.is_null() && is_alive(st.owner);
    if (!result.is_null()) {
        st.state =
            state_from_name(result.at("state").get<std::string>()).value_or(InvocationState::lost);
        st.result = std::move(result);
    }
    return st;
}

double seconds(std::chrono::nanoseconds d) {
    return static_cast<double>(d.count()) / 1e9;
}

// Appends one whole line (or nothing: a failed write is cut back off). O_NOFOLLOW: a link planted
// in place of the log is refused, never written through. Not fsynced: a crash of the process loses
// no line (the page cache survives it), and the log is made durable when it is sealed, before its
// ledger line (finish); a power loss may cost a running invocation its last lines ([21]: three
// fsyncs a driver call).
void append_line(const fs::path& file, const std::string& line) {
    const int fd =
        ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot append to {}: {}", file.string(), std::strerror(errno)),
                    Json{{"path", file.string()}});
    }
    struct stat st {};
    const bool sized = ::fstat(fd, &st) == 0;
    int err = fault_point() ? 0 : ENOSPC;
    if (err == 0) {
        const ssize_t n = ::write(fd, line.data(), line.size());
        err = n == static_cast<ssize_t>(line.size()) ? 0 : (n < 0 ? errno : ENOSPC);
    }
    if (err != 0 && sized) {
        (void)!::ftruncate(fd, st.st_size);
    }
    ::close(fd);
    if (err != 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot append to {}: {}", file.string(), std::strerror(err)),
                    Json{{"path", file.string()}, {"errno", err}});
    }
}

// The events of an invocation, parsed leniently: a line torn by a crash is skipped, not fatal.
std::vector<Json> read_events(const fs::path& file) {
    std::vector<Json> events;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        try {
            events.push_back(parse_json_strict(line));
        } catch (const Error&) {
        }
    }
    return events;
}

void require_invocation_id(const std::string& id) {
    require_safe_name(id, "invocation id");
    if (!id.starts_with("inv-")) {
        throw Error(
            ErrorCode::invalid_argument,
            fmt::format("\"{}\" is not an invocation id (they start with inv-; see cko ls)", id),
            Json{{"id", id}});
    }
}

}  // namespace

InvocationState state_for_error(const Error& e) noexcept {
    switch (e.code()) {
    case ErrorCode::interrupted:
        return InvocationState::cancelled;
    case ErrorCode::timed_out:
        return InvocationState::timed_out;
    default:
        return InvocationState::failed;
    }
}

Json Limits::to_json() const {
    return Json{{"operation_timeout_s", seconds(operation)},
                {"command_timeout_s", seconds(command)},
                {"resource_wait_timeout_s", seconds(resource_wait)},
                {"cleanup_timeout_s", seconds(cleanup)}};
}

Invocation::Invocation(const store::Store& store, std::string id, Limits limits,
                       const std::atomic<bool>* cancel)
    : store_(store),
      id_(std::move(id)),
      limits_(limits),
      cancel_(cancel),
      started_(std::chrono::steady_clock::now()),
      deadline_(started_ + limits.operation),
      started_unix_ns_(unix_nanoseconds_now()),
      call_files_(store) {}

Invocation Invocation::create(const store::Store& store, const std::string& kind,
                              const Json& request, const Limits& limits,
                              const std::atomic<bool>* cancel) {
    const ProcessIdentity owner = current_process_identity();
    const std::int64_t now = unix_nanoseconds_now();
    const std::string id = content_id("inv", Json{{"kind", kind},
                                                  {"request", request},
                                                  {"owner", owner.to_json()},
                                                  {"created_unix_ns", now}});
    Invocation inv(store, id, limits, cancel);
    inv.kind_ = kind;
    inv.started_unix_ns_ = now;
    // Built in a staging directory and renamed into place: nobody ever sees an invocation
    // directory without its request and first event (a crash leaves a stale staging directory).
    const fs::path staging = store.stage_directory(inv.relative_dir());
    try {
        make_directories(staging / store::layout::kDriverDir);
        store::InvocationRecord record;
        record.id = id;
        record.kind = kind;
        record.created_unix_ns = now;
        record.owner = {owner.pid, owner.start_ticks, owner.boot_id, owner.hostname};
        record.limits = {seconds(limits.operation), seconds(limits.command),
                         seconds(limits.resource_wait), seconds(limits.cleanup)};
        record.request = request;
        const std::string bytes = canonical_json(record.to_json());
        // Made durable with its directory before the directory appears (publish_directory).
        write_file_create_once_unsynced(staging / store::layout::kRequestFile, bytes, 0444);
        const std::string rel = store::layout::invocation_request(id);
        inv.request_record_ =
            store::InvocationRecord::from_json(parse_json_strict(bytes, {}, rel), rel);
        append_line(staging / store::layout::kEventsFile,
                    inv.event_line("created", Json{{"kind", kind}}));
        store.publish_directory(staging, inv.relative_dir(),
                                {std::string(store::layout::kRequestFile)});
    } catch (...) {
        remove_tree_forcibly(staging);
        throw;
    }
    return inv;
}

std::string Invocation::event_line(const std::string& type, const Json& data) {
    return canonical_json(Json{{"seq", seq_++},
                               {"t_unix_ns", unix_nanoseconds_now()},
                               {"type", type},
                               {"data", data}}) +
           "\n";
}

fs::path Invocation::dir() const {
    return store_.root() / relative_dir();
}

bool Invocation::past_deadline() const {
    return std::chrono::steady_clock::now() >= deadline_;
}

void Invocation::event(const std::string& type, const Json& data) {
    append_line(store_.real_path_of(store::layout::invocation_events(id_)), event_line(type, data));
}

std::filesystem::path Invocation::next_output_dir() const {
    return store_.root() / store::layout::call_output_dir(store::layout::call_dir(id_, calls_ + 1));
}

CallSlot Invocation::open_call() {
    CallSlot slot;
    slot.number = ++calls_;
    slot.relative_dir = store::layout::call_dir(id_, slot.number);
    slot.call_dir = store_.root() / slot.relative_dir;
    slot.output_dir = store_.root() / store::layout::call_output_dir(slot.relative_dir);
    slot.request_path = store_.root() / store::layout::call_request(slot.relative_dir);
    call_files_.make_directories(store::layout::call_output_dir(slot.relative_dir));
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    slot.timeout = std::max(std::chrono::milliseconds(1), std::min(limits_.command, remaining));
    slot.deadline_unix_ns =
        unix_nanoseconds_now() +
        std::chrono::duration_cast<std::chrono::nanoseconds>(slot.timeout).count();
    return slot;
}

CallOutcome Invocation::begin_call(const CallSlot& slot, const Json& request) {
    CallOutcome out;
    static_cast<CallSlot&>(out) = slot;
    // The driver request has no id of its own (PROTOCOL.md): ledger it under the call's. The
    // driver only reads it, so it is made durable and ledgered with the call's other files when the
    // call ends (end_call), not before the driver may read it.
    call_files_.write_file(store::layout::call_request(out.relative_dir), canonical_json(request),
                           fmt::format("{}-call-{}-request", id_, out.number));
    // The listing the last call's check took after it, where that check passed: every file cko
    // wrote since is ledgered or the open call's own, and a file a session driver left between
    // calls is found by this call's check (a listing taken now would count it as there before).
    out.store_before = std::exchange(listing_after_last_call_, nullptr);
    if (!out.store_before) {
        out.store_before =
            list_store_files(store_, store::layout::call_output_dir(out.relative_dir));
    }
    return out;
}

CallOutcome Invocation::call(const CallSlot& slot, const CallSpec& spec) {
    CallOutcome out = begin_call(slot, spec.request);

    ProcessSpec ps;
    ps.argv = spec.argv;
    ps.working_dir = spec.working_dir;
    ps.env_allow = spec.env_allow;
    ps.env_set = spec.env_set;
    ps.stdout_path = store_.root() / store::layout::call_stdout(out.relative_dir);
    ps.stderr_path = store_.root() / store::layout::call_stderr(out.relative_dir);
    ps.output_cap_bytes = spec.output_cap_bytes;
    ps.timeout = out.timeout;
    ps.kill_grace = limits_.cleanup;
    ps.cancel = cancel_;
    const std::string job_name = spec.slurm ? slurm_job_name(id_, out.number) : std::string();
    if (spec.slurm) {
        wrap_in_slurm_job(*spec.slurm, job_name, out.call_dir, limits_.resource_wait, ps);
    }
    ps.on_spawn = [&](pid_t pid) {
        if (spec.on_spawn) {
            spec.on_spawn(pid);
        }
        const auto who = process_identity_of(pid);
        Json data{{"call", out.number},
                  {"pgid", pid},
                  {"start_ticks", who ? who->start_ticks : 0},
                  {"argv", ps.argv}};
        if (spec.slurm) {
            data["slurm_job_name"] = job_name;  // what `status` scancels if we die
        }
        event("call_started", data);
    };
    ProcessResult process;
    try {
        process = run_process(ps);
    } catch (const Error& e) {
        event("call_failed_to_start", Json{{"call", out.number}, {"error", e.to_json()["error"]}});
        throw;
    }
    if (spec.slurm) {
        out.launch =
            settle_slurm_job(*spec.slurm, job_name, out.call_dir, process, limits_.cleanup);
        Json record = out.launch;
        record["id"] = fmt::format("{}-call-{}-slurm", id_, out.number);
        store_.write_record(store::layout::call_slurm(out.relative_dir), record);
        for (const auto& name : out.launch.at("files")) {
            store_.ledger_file(out.relative_dir + "/" + name.get<std::string>());
        }
    }
    end_call(out, process);
    return out;
}

void Invocation::end_call(CallOutcome& out, const ProcessResult& process) {
    out.process = process;
    // The driver may have replaced its output directory (or the call directory) with a link:
    // then nothing it left is read, listed, chmodded or ledgered.
    struct stat out_st {};
    const fs::path checked_out =
        store_.real_path_of(store::layout::call_output_dir(out.relative_dir));
    if (::lstat(checked_out.c_str(), &out_st) != 0 || !S_ISDIR(out_st.st_mode)) {
        const Error e(
            ErrorCode::symlink_refused,
            fmt::format(
                "the driver replaced its output directory {} (with a link or a file); nothing in "
                "it was read",
                store::layout::call_output_dir(out.relative_dir)),
            Json{{"call_dir", out.relative_dir}});
        event("call_tampered", Json{{"call", out.number}, {"error", e.to_json()["error"]}});
        throw e;
    }
    // Every non-directory below output_dir, as a relative path (drivers may use subfolders);
    // lexically: fs::relative would resolve a link and name its target (".." and worse).
    for (const auto& entry : fs::recursive_directory_iterator(out.output_dir)) {
        if (!entry.is_directory() || entry.is_symlink()) {
            out.output_files.push_back(entry.path().lexically_relative(out.output_dir).string());
        }
    }
    std::sort(out.output_files.begin(), out.output_files.end());
    call_files_.write_record(store::layout::call_process(out.relative_dir),
                             Json{{"format_version", "cko/process-v1"},
                                  {"id", fmt::format("{}-call-{}", id_, out.number)},
                                  {"process", out.process.to_json()},
                                  {"output_files", out.output_files}});
    // One group commit for the call's files: its request, process.json, captures and outputs.
    call_files_.add(store::layout::call_stdout(out.relative_dir));
    call_files_.add(store::layout::call_stderr(out.relative_dir));
    for (const auto& name : out.output_files) {
        // A name that cannot be a store path (non-UTF-8, spaces, links, hard links to a file
        // elsewhere) stays unledgered: the
        // result check refuses it as an undeclared output, and fsck lists it as a note.
        struct stat st {};
        if (is_safe_relative_path(name) && ::lstat((out.output_dir / name).c_str(), &st) == 0 &&
            S_ISREG(st.st_mode) && st.st_nlink == 1) {
            call_files_.add(store::layout::call_output_dir(out.relative_dir) + "/" + name);
        }
    }
    call_files_.commit();
    Json finished{{"call", out.number}, {"process", out.process.to_json()}};
    if (out.launch.is_object()) {  // a Slurm job (call() settled it)
        for (const char* key : {"job_id", "node", "job_state", "scancelled", "lost"}) {
            finished["slurm"][key] = out.launch.at(key);
        }
    }
    event("call_finished", finished);
    // What the driver may not leave: links or special files among its outputs, files anywhere else
    // in the store. The call is refused; what it left stays for inspection (fsck lists it).
    try {
        const std::string call_output = store::layout::call_output_dir(out.relative_dir);
        refuse_unsafe_outputs(out.output_dir, out.output_files, call_output);
        if (out.store_before) {
            listing_after_last_call_ = refuse_planted_files(store_, *out.store_before, call_output);
        }
    } catch (const Error& e) {
        event("call_tampered", Json{{"call", out.number}, {"error", e.to_json()["error"]}});
        throw;
    }
}

store::RecordRef Invocation::finish(InvocationState state, const std::string& reason,
                                    const Json& outputs, const std::optional<Error>& error) {
    const auto wall = std::chrono::steady_clock::now() - started_;
    event("finished", Json{{"state", state_name(state)}, {"reason", reason}});
    store::InvocationResultRecord result;
    result.id = id_;
    result.kind = kind_;
    result.state = state_name(state);
    result.reason = reason;
    result.started_unix_ns = started_unix_ns_;
    result.finished_unix_ns = unix_nanoseconds_now();
    result.cost = {seconds(wall), gpu_seconds_, calls_};
    result.outputs = outputs;
    if (error) {
        result.error = error->to_json()["error"];
    }
    if (!call_files_.empty()) {
        // A call that ended before its files were committed (a driver that could not start):
        // its request is ledgered with the result. What cannot be stays unledgered (fsck notes
        // it) and never keeps the result from being written.
        try {
            call_files_.commit();
        } catch (const Error&) {
        }
    }
    const std::string rel = store::layout::invocation_result(id_);
    const Json written = result.to_json();
    const auto ref = store_.write_record(rel, written);
    store_.ledger_file(store::layout::invocation_events(id_));
    result_json_ = parse_json_strict(canonical_json(written), {}, rel);
    result_record_ = store::InvocationResultRecord::from_json(result_json_, rel);
    return ref;
}

const store::InvocationResultRecord& Invocation::result_record() const {
    if (!result_record_) {
        throw Error(ErrorCode::internal,
                    fmt::format("invocation {} has no result before it finishes", id_));
    }
    return *result_record_;
}

InvocationStatus Invocation::finished_status() const {
    (void)result_record();  // internal before finish()
    return status_of(id_, request_record_, result_json_);
}

Json InvocationStatus::to_json() const {
    Json j{{"id", id}, {"kind", kind}, {"state", state_name(state)}, {"owner", owner.to_json()}};
    if (state == InvocationState::running) {
        j["owner_alive"] = owner_alive;
    }
    if (!result.is_null()) {
        j["result"] = result;
    }
    if (leftovers_killed > 0) {
        j["leftovers_killed"] = leftovers_killed;
    }
    return j;
}

InvocationStatus invocation_status(const store::Store& store, const std::string& id) {
    require_invocation_id(id);
    if (!store.exists(store::layout::invocation_request(id))) {
        throw Error(ErrorCode::not_found,
                    fmt::format("no invocation {} in {} (see cko ls)", id, store.root().string()),
                    Json{{"id", id}});
    }
    const store::InvocationRecord request = store::read_invocation_record(store, id);
    return status_of(id, request,
                     store.exists(store::layout::invocation_result(id))
                         ? store.read_record(store::layout::invocation_result(id))
                         : Json());
}

InvocationStatus detect_lost_invocation(const store::Store& store, const std::string& id) {
    InvocationStatus st = invocation_status(store, id);
    if (st.state != InvocationState::running || st.owner_alive) {
        return st;
    }
    const store::InvocationRecord request = store::read_invocation_record(store, id);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    if (st.owner.hostname != host) {
        return st;  // owned by another host (shared filesystem): not ours to declare lost
    }
    // The owner died without a result: kill whatever its calls left behind, then record `lost`.
    const auto events = read_events(store.path_of(store::layout::invocation_events(id)));
    for (const auto& ev : events) {
        // A session driver's group is named by its start event (its requests' call_started repeat
        // it).
        if (ev.value("type", "") == "call_started" ||
            ev.value("type", "") == "driver_session_started") {
            st.leftovers_killed += kill_process_group_leftovers(
                ev["data"].value("pgid", 0), ev["data"].value("start_ticks", std::uint64_t{0}));
            if (ev["data"].contains("slurm_job_name")) {  // its job runs elsewhere: end it there
                st.leftovers_killed +=
                    cancel_slurm_jobs_named(ev["data"]["slurm_job_name"].get<std::string>());
            }
        }
    }
    store::InvocationResultRecord result;  // nothing is known of its cost or outputs
    result.id = id;
    result.kind = st.kind;
    result.state = state_name(InvocationState::lost);
    result.reason =
        fmt::format("owner process {} ended without a result; {} leftover process(es) killed",
                    st.owner.pid, st.leftovers_killed);
    result.started_unix_ns = request.created_unix_ns;
    result.finished_unix_ns = unix_nanoseconds_now();
    try {
        store.write_record(store::layout::invocation_result(id), result.to_json());
    } catch (const Error& e) {
        if (e.code() != ErrorCode::already_exists) {  // another `status` got there first
            throw;
        }
    }
    st.result = store.read_record(store::layout::invocation_result(id));
    st.state =
        state_from_name(st.result.at("state").get<std::string>()).value_or(InvocationState::lost);
    return st;
}

InvocationStatus cancel_invocation(const store::Store& store, const std::string& id) {
    InvocationStatus st = detect_lost_invocation(store, id);
    if (st.state != InvocationState::running || !st.owner_alive) {
        return st;
    }
    ::kill(st.owner.pid, SIGTERM);
    return wait_invocation(store, id, std::chrono::seconds(30));
}

InvocationStatus wait_invocation(const store::Store& store, const std::string& id,
                                 std::chrono::milliseconds timeout, const std::atomic<bool>* stop,
                                 bool declare_lost) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        InvocationStatus st =
            declare_lost ? detect_lost_invocation(store, id) : invocation_status(store, id);
        if (st.state != InvocationState::running || (!declare_lost && !st.owner_alive) ||
            std::chrono::steady_clock::now() >= deadline || (stop != nullptr && stop->load())) {
            return st;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

namespace {
std::atomic<std::uint64_t> invocation_scans_so_far{0};
}  // namespace

std::uint64_t invocation_scans() noexcept {
    return invocation_scans_so_far.load();
}

std::vector<std::string> list_invocations(const store::Store& store) {
    invocation_scans_so_far.fetch_add(1);
    std::vector<std::string> ids;
    const fs::path dir = store.real_path_of(store::layout::kInvocationsDir);
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(dir, ec))) {
        return ids;  // a root made by hand, or one whose layout a crash cut short: no invocations
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        // Only whole invocations: staging directories are hidden, and a directory without its
        // request (made by a cko from before staged creation, cut short) is not one; fsck notes it.
        std::error_code ec;
        if (name.starts_with("inv-") && entry.is_directory(ec) && !entry.is_symlink(ec) &&
            fs::is_regular_file(
                fs::symlink_status(entry.path() / store::layout::kRequestFile, ec))) {
            ids.push_back(name);
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace cko::run
