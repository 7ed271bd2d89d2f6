// An Invocation: one long operation with a frozen request, an append-only event log and a terminal
// result.
#pragma once

#include "cko/run/owner.hpp"
#include "cko/run/slurm_launcher.hpp"
#include "cko/store/records.hpp"
#include "cko/store/store.hpp"
#include "cko/store/write_batch.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/error.hpp"
#include "cko/util/process.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cko::run {

struct StoreListing;  // run/call_guard.hpp

#define CKO_INVOCATION_STATES(X) X(running) X(succeeded) X(failed) X(cancelled) X(timed_out) X(lost)

CKO_CLOSED_ENUM(InvocationState, CKO_INVOCATION_STATES, state_name, state_from_name)
// The terminal state an operation ending with `e` records: cancelled, timed_out, or failed.
[[nodiscard]] InvocationState state_for_error(const Error& e) noexcept;

// The four timeouts of DESIGN.md §5.
struct Limits {
    std::chrono::milliseconds operation{std::chrono::hours(1)};        // the whole invocation
    std::chrono::milliseconds command{std::chrono::minutes(5)};        // one driver call
    std::chrono::milliseconds resource_wait{std::chrono::minutes(2)};  // waiting for a GPU lock
    std::chrono::milliseconds cleanup{std::chrono::seconds(10)};       // SIGTERM -> SIGKILL grace
    [[nodiscard]] Json to_json() const;
};

// One call's place in an invocation, made before its request exists (Invocation::open_call): its
// number, its directory driver/NNNN/ with the output directory out/ made, the file its request
// goes in, and its time: the command limit bounded by the operation's deadline, and the wall-clock
// instant that ends. What the request says about them is the driver protocol's (driver/).
struct CallSlot {
    int number = 0;
    std::string relative_dir;  // e.g. "invocations/inv-…/driver/0001"
    std::filesystem::path call_dir;
    std::filesystem::path output_dir;
    std::filesystem::path request_path;  // <call_dir>/request.json, written by begin_call
    std::chrono::milliseconds timeout{0};
    std::int64_t deadline_unix_ns = 0;  // now + timeout, when the slot was opened
};

// One command run by an invocation in its own call directory driver/NNNN/:
//   request.json (what cko handed over), stdout.txt, stderr.txt, process.json, out/ (output_dir).
struct CallSpec {
    std::vector<std::string> argv;  // the whole command, as its caller built it for the slot
    Json request;                   // written as the slot's request.json, as it is
    std::filesystem::path working_dir;
    std::vector<std::string> env_allow;
    std::map<std::string, std::string> env_set;
    std::uint64_t output_cap_bytes = std::uint64_t{8} << 20;
    // Told the driver's pid as soon as it exists (e.g. so that a GPU monitor counts it as ours).
    std::function<void(pid_t)> on_spawn;
    // Set: the command runs as one Slurm job (run/slurm_launcher.hpp) instead of a local child.
    std::optional<SlurmOptions> slurm;
};

// Where the time of an invocation's driver calls went (the window a call holds its GPUs: from the
// monitor's start to its stop around the call). `driver_s`: the driver had the request (a process
// from spawn to exit, a session request from the line sent to the answer); `workload_s`: of that,
// what the driver's workload code ran, as its SDK reported it (result `cost.workload_s`), for
// `workload_calls` of the `calls`. The rest of `held_s` is cko's own: the request and result
// files, their validation, the store listing around the call, the monitor.
struct HeldTime {
    int calls = 0;
    double held_s = 0;
    double driver_s = 0;
    double workload_s = 0;
    int workload_calls = 0;
    void add(double held, double driver, std::optional<double> workload);
    // {calls, held_s, driver_s, driver_work_s, sdk_s, cko_s, per_request_ms{...}}; driver_work_s
    // and sdk_s are null unless every call reported its workload time.
    [[nodiscard]] Json to_json() const;
};

// The slot a call ran in, and what became of it.
struct CallOutcome : CallSlot {
    ProcessResult process;
    std::vector<std::string> output_files;  // names found in output_dir afterwards, sorted
    Json launch;  // with a Slurm launcher: the cko/slurm-call-v1 record (also
                  // driver/NNNN/slurm.json); else null
    // The store's files when the call began (run/call_guard.hpp): what it gained outside its
    // output directory is refused when the call ends.
    std::shared_ptr<const StoreListing> store_before;
};

struct InvocationStatus {
    std::string id;
    std::string kind;
    InvocationState state = InvocationState::running;
    ProcessIdentity owner;
    bool owner_alive = false;  // while running only: a finished status never carries it
    Json result;               // the terminal record when state != running
    int leftovers_killed = 0;
    [[nodiscard]] Json to_json() const;
};

class Invocation {
public:
    // Writes invocations/<id>/request.json (with this process as owner) and the first event.
    [[nodiscard]] static Invocation create(const store::Store& store, const std::string& kind,
                                           const Json& request, const Limits& limits,
                                           const std::atomic<bool>* cancel);

    [[nodiscard]] const std::string& id() const noexcept { return id_; }
    [[nodiscard]] std::filesystem::path dir() const;
    [[nodiscard]] std::string relative_dir() const { return store::layout::invocation_dir(id_); }
    [[nodiscard]] const Limits& limits() const noexcept { return limits_; }
    [[nodiscard]] const store::Store& store() const noexcept { return store_; }
    [[nodiscard]] const std::atomic<bool>* cancel_flag() const noexcept { return cancel_; }

    // Appends {seq, t_unix_ns, type, data} to events.jsonl (fsynced when finish() seals it).
    void event(const std::string& type, const Json& data = Json::object());

    // Numbers the next call, makes its directories and sets its timeout; writes nothing in them.
    [[nodiscard]] CallSlot open_call();

    // Runs one command in `slot` with the slot's timeout and the cleanup grace; records
    // call_started (with the process group, so that a later `status` can kill leftovers if this
    // process dies) and call_finished; ledgers the call's files.
    [[nodiscard]] CallOutcome call(const CallSlot& slot, const CallSpec& spec);

    // The two halves of call() for a request served by a persistent driver session (no process of
    // its own): begin_call writes `request` as the slot's request.json and lists the store;
    // end_call checks and ledgers what the driver left (refusing links, special files and files
    // planted elsewhere in the store: unsafe_output), given how the request ended (`process`
    // describes the session as it stood when the request was answered).
    [[nodiscard]] CallOutcome begin_call(const CallSlot& slot, const Json& request);
    // The output_dir the next call (open_call()) will get, for a request that names a file inside
    // it (the `profile` object's trace_path) before the call exists.
    [[nodiscard]] std::filesystem::path next_output_dir() const;
    void end_call(CallOutcome& out, const ProcessResult& process);
    // The next call lists the store afresh instead of starting from the listing the last call's
    // check took: for a caller that wrote files between calls that are ledgered only later (a new
    // driver session's logs), which that listing would count as the next call's plants.
    void relist_before_next_call() { listing_after_last_call_.reset(); }

    // True once the operation deadline has passed or cancellation was requested.
    [[nodiscard]] bool cancelled() const noexcept { return cancel_ != nullptr && cancel_->load(); }
    [[nodiscard]] bool past_deadline() const;
    [[nodiscard]] std::chrono::steady_clock::time_point deadline() const noexcept {
        return deadline_;
    }

    // Writes the terminal result.json (create-once) and seals events.jsonl.
    store::RecordRef finish(InvocationState state, const std::string& reason, const Json& outputs,
                            const std::optional<Error>& error = std::nullopt);

    // The request record as create() wrote it, and after finish() the result record as finish()
    // wrote it: each parsed from the very bytes written, so that what the operation hands on is
    // what a later read gives, without reading it back.
    [[nodiscard]] const store::InvocationRecord& request_record() const noexcept {
        return request_record_;
    }
    // Before finish(): internal.
    [[nodiscard]] const store::InvocationResultRecord& result_record() const;
    // After finish(): what invocation_status() reads back now, built from the bytes written.
    [[nodiscard]] InvocationStatus finished_status() const;

    void add_gpu_seconds(double seconds) { gpu_seconds_ += seconds; }
    void add_held_time(double held_s, double driver_s, std::optional<double> workload_s) {
        held_.add(held_s, driver_s, workload_s);
    }
    [[nodiscard]] const HeldTime& held_time() const noexcept { return held_; }
    // GPU seconds held by this invocation's driver calls so far (calls × GPUs of the Target).
    [[nodiscard]] double gpu_seconds() const noexcept { return gpu_seconds_; }

private:
    Invocation(const store::Store& store, std::string id, Limits limits,
               const std::atomic<bool>* cancel);
    std::string event_line(const std::string& type, const Json& data);

    const store::Store& store_;
    std::string id_;
    std::string kind_;
    Limits limits_;
    const std::atomic<bool>* cancel_;
    std::chrono::steady_clock::time_point started_;
    std::chrono::steady_clock::time_point deadline_;
    std::int64_t started_unix_ns_ = 0;
    std::uint64_t seq_ = 0;
    int calls_ = 0;
    double gpu_seconds_ = 0;
    HeldTime held_;
    // The files of the call in progress (its directories, request, process.json, captures and
    // outputs): made durable and ledgered together when it ends (end_call), or at finish().
    store::WriteBatch call_files_;
    // The store as the last call's check listed it after the call (null once taken, or when that
    // check did not run or refused): the next call's `before`.
    std::shared_ptr<const StoreListing> listing_after_last_call_;
    store::InvocationRecord request_record_;
    Json result_json_;  // null until finish()
    std::optional<store::InvocationResultRecord> result_record_;
};

// Reads an invocation's state; never writes. One without a result whose owner is gone still
// reads `running` (owner_alive false) until detect_lost_invocation() looks.
[[nodiscard]] InvocationStatus invocation_status(const store::Store& store, const std::string& id);

// The explicit step that declares `lost` (called by status, wait, cancel, ls and operations, never
// by a plain read): an invocation without a result whose owner on this host is gone gets its
// calls' process groups killed and a terminal `lost` result written. Returns the status after it.
[[nodiscard]] InvocationStatus detect_lost_invocation(const store::Store& store,
                                                      const std::string& id);

// Asks the owner to cancel (SIGTERM to the owner, which kills its child group and records
// `cancelled`); an owner already gone gives `lost`. Returns the status after the request.
[[nodiscard]] InvocationStatus cancel_invocation(const store::Store& store, const std::string& id);

// Polls until the invocation is terminal, `timeout` passes or `stop` is set (then state is still
// running; stopping a wait leaves the operation alone). With `declare_lost` false it only reads:
// an invocation whose owner is gone is returned at once, still running, owner_alive false.
[[nodiscard]] InvocationStatus wait_invocation(const store::Store& store, const std::string& id,
                                               std::chrono::milliseconds timeout,
                                               const std::atomic<bool>* stop = nullptr,
                                               bool declare_lost = true);

// The ids of the whole invocations under invocations/, sorted. Each call reads the directory.
[[nodiscard]] std::vector<std::string> list_invocations(const store::Store& store);
// How many times this process has called list_invocations: tests count the scans of one operation
// (eval's InvocationLedger reads the invocations once per operation).
[[nodiscard]] std::uint64_t invocation_scans() noexcept;

}  // namespace cko::run
