// Target freeze: validate, snapshot, identify, smoke, then move the finished root into place.
#include "cko/eval/target.hpp"

#include "cko/eval/freeze_leftovers.hpp"

#include "cko/env/identity.hpp"
#include "cko/eval/standalone_call.hpp"
#include "cko/run/gpu_lock.hpp"
#include "cko/run/shared_fs.hpp"
#include "cko/util/build_info.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/process.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>

namespace cko::eval {
namespace fs = std::filesystem;
namespace {

fs::path real(const fs::path& p) {
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) == nullptr) {
        throw Error(ErrorCode::not_found, fmt::format("{} does not exist", p.string()),
                    Json{{"path", p.string()}});
    }
    return fs::path(buf);
}

// `present`: the GPUs of this machine, or with a Slurm launcher those the smoke's job was given.
std::vector<std::string> select_gpus(const TargetSpec& spec,
                                     const std::vector<std::string>& present) {
    if (spec.gpus_mode == "auto") {
        return present;
    }
    for (const auto& want : spec.gpu_uuids) {
        if (std::find(present.begin(), present.end(), want) == present.end()) {
            throw Error(ErrorCode::environment_mismatch,
                        fmt::format("resources.gpus: {} is not on {} (found: {})", want,
                                    spec.uses_slurm() ? "the Slurm job's node" : "this machine",
                                    present.empty() ? "no GPU"
                                                    : fmt::format("{}", fmt::join(present, ", "))),
                        Json{{"field", "resources.gpus"},
                             {"fix", "copy a UUID from `cko doctor`, or use \"auto\""}});
        }
    }
    return spec.gpu_uuids;
}

// A Slurm Target's identity is the compute node's, from `cko doctor --json` inside the first
// smoke's job; later smokes (and, per call, every measurement) must match it. The submit host's own
// identity is kept beside it for the record.
void adopt_node_identity(const TargetSpec& spec, const std::string& case_id, const Json& launch,
                         Json& record, std::vector<std::string>& gpus) {
    const Json node = launch.is_object() ? launch.value("node_identity", Json()) : Json();
    if (!node.is_object()) {
        throw Error(
            ErrorCode::environment_mismatch,
            fmt::format(
                "the smoke of case {} ran as Slurm job {} but left no node identity: {}", case_id,
                launch.is_object() ? launch.value("job_id", Json()).dump() : "?",
                launch.is_object() ? launch.value("node_identity_problem", std::string("?")) : "?"),
            Json{{"field", "slurm.cko"},
                 {"fix", "install cko at the same path on the compute nodes, or set slurm.cko"}});
    }
    if (!record.contains("submit_host_environment")) {
        record["submit_host_environment"] = record.at("environment");
        record["environment"] = node;
        record["slurm_node"] = launch.value("node", Json());
        gpus = select_gpus(
            spec, launch.value("gpu_uuids", Json::array()).get<std::vector<std::string>>());
        return;
    }
    if (const auto mismatch = env::identity_mismatch(record.at("environment"), node)) {
        throw Error(ErrorCode::environment_mismatch,
                    fmt::format("the smoke of case {} ran on node {}, whose identity differs from "
                                "the first smoke's "
                                "node: {}; pin one node (slurm.extra_args = [\"--nodelist=NODE\"])",
                                case_id, launch.value("node", Json()).dump(), *mismatch),
                    Json{{"field", "slurm.extra_args"}, {"fix", "add --nodelist=NODE"}});
    }
}

// Throws one error naming every problem at once: a user fixes them in one go, not one freeze at a
// time. Returns when there is none.
void refuse_workload_problems(const std::vector<SpecProblem>& problems) {
    if (problems.empty()) {
        return;
    }
    std::vector<std::string> lines;
    Json list = Json::array();
    for (const auto& p : problems) {
        lines.push_back(fmt::format("{}: {}; {}", p.field, p.problem, p.fix));
        list.push_back(Json{{"field", p.field}, {"problem", p.problem}, {"fix", p.fix}});
    }
    const SpecProblem& p = problems.front();
    throw Error(p.code,
                problems.size() == 1
                    ? lines.front()
                    : fmt::format("{} problems: {}", problems.size(), fmt::join(lines, " | ")),
                Json{{"field", p.field}, {"fix", p.fix}, {"problems", list}});
}

// The spec of `options`, its base_dir made real, once the root is known to be new and (unless the
// spec is diagnostic) every workload piece is known to exist.
TargetSpec validated_spec(const FreezeOptions& options) {
    TargetSpec spec = read_target_spec(options.spec);
    spec.base_dir = real(spec.base_dir);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(options.root, ec))) {
        throw Error(
            ErrorCode::already_exists,
            fmt::format("{} already exists: a Target root is frozen once; pick a new --root",
                        options.root.string()),
            Json{{"field", "root"}, {"fix", "pick a path that does not exist yet"}});
    }
    if (!spec.diagnostic) {
        refuse_workload_problems(workload_problems(spec));
    }
    return spec;
}

// Where a freeze builds its root and where the finished root goes.
struct FreezePaths {
    fs::path parent;      // the real directory holding the root
    fs::path final_root;  // the root, once frozen
    fs::path staging;     // the hidden root built beside it, renamed into place at the end
};

// The paths of a freeze of `root` by this process.
FreezePaths freeze_paths(const fs::path& root) {
    FreezePaths paths;
    paths.parent = real(root.has_parent_path() ? root.parent_path() : fs::path("."));
    paths.final_root = paths.parent / root.filename();
    paths.staging =
        paths.parent / fmt::format(".{}.freeze-{}", root.filename().string(), ::getpid());
    return paths;
}

// The lock coherence of the root's filesystem; refused for a Slurm Target where flock would not
// exclude other nodes (jobs on other nodes write into the store and cko locks it).
run::LockCoherence store_filesystem(const TargetSpec& spec, const FreezePaths& paths) {
    const run::LockCoherence store_fs = run::lock_coherence(paths.parent);
    if (spec.uses_slurm() && store_fs.coherent == std::optional<bool>(false)) {
        throw Error(ErrorCode::environment_mismatch,
                    fmt::format("the store {} would be on {} ({}): {}", paths.final_root.string(),
                                store_fs.fs_type, store_fs.mount_point, store_fs.reason),
                    Json{{"field", "root"},
                         {"fix", "put --root on a filesystem whose flock is coherent across nodes"},
                         {"filesystem", store_fs.to_json()}});
    }
    return store_fs;
}

// The Target record before the workload is frozen: the spec, the environment, when and by what.
Json initial_record(const FreezeOptions& options, const TargetSpec& spec,
                    const env::Identity& identity, const run::LockCoherence& store_fs) {
    Json record{{"format_version", "cko/target-v1"},
                {"spec", spec.to_json()},
                {"spec_sha256", sha256_file_hex(options.spec)},
                {"spec_dir", spec.base_dir.string()},
                {"environment", identity.to_json()},
                {"created_unix_s", unix_seconds_now()},
                {"created_by", std::string("cko ") + build_version()}};
    if (spec.deadline_unix_s) {
        record["deadline_unix_s"] = *spec.deadline_unix_s;
    }
    if (spec.uses_slurm()) {
        record["store_filesystem"] = store_fs.to_json();
    }
    return record;
}

// The snapshot references of the spec's cases, in the spec's order.
Json snapshot_cases(const store::Store& store, const TargetSpec& spec) {
    Json cases = Json::array();
    for (const auto& id : spec.case_ids) {
        const auto snap =
            store::take_snapshot(store, spec.base_dir / spec.cases_dir / (id + ".json"));
        cases.push_back(Json{{"id", id}, {"snapshot", snap.reference()}});
    }
    return cases;
}

// The GPUs a Target starts from: the spec's among this machine's, or none yet with Slurm (the GPUs
// and the identity are the compute node's, known after the first smoke).
std::vector<std::string> initial_gpus(const TargetSpec& spec, const env::Identity& identity) {
    std::vector<std::string> local_gpus;
    for (const auto& g : identity.gpus) {
        local_gpus.push_back(g.uuid);
    }
    return spec.uses_slurm() ? std::vector<std::string>{} : select_gpus(spec, local_gpus);
}

// The smoke call of case `id`: two samples of the original, through the real driver.
StandaloneCall smoke_call(const TargetSpec& spec, const std::string& id,
                          const std::vector<std::string>& gpus) {
    StandaloneCall call;
    call.driver.argv = spec.driver_argv;
    call.driver.capabilities = spec.capabilities;
    call.driver.env_allow = spec.env_allow;
    call.driver.working_dir = spec.base_dir;
    if (spec.uses_slurm()) {
        call.driver.slurm = spec.slurm;
    }
    call.request.mode = driver::Mode::smoke;
    call.request.case_id = id;
    call.request.case_path = (spec.base_dir / spec.cases_dir / (id + ".json")).string();
    call.request.subjects = {{"reference", "original", (spec.base_dir / spec.original).string()}};
    call.request.order = {"reference"};
    call.request.primary = {spec.primary.name, spec.primary.unit};
    for (const auto& c : spec.constraints) {
        call.request.constraints.push_back({c.name, c.unit});
    }
    call.request.correctness_metrics = {spec.correctness_metric};
    call.limits = limits_for(spec);
    call.gpu_uuid = gpus.empty() || spec.uses_slurm() ? "" : gpus.front();  // Slurm allocates GPUs
    return call;
}

// Why the original failed its correctness rule, as far as the smoke says: a metric the driver does
// not report is a misspelling, not a failing original; then the driver's notes. Empty if neither.
std::string correctness_failure_reason(const TargetSpec& spec, const StandaloneOutcome& smoke) {
    const auto& ref = smoke.result->subject("reference");
    std::string why;
    if (ref.correctness_metrics.count(spec.correctness_metric) == 0) {
        std::vector<std::string> reported;
        for (const auto& [name, v] : ref.correctness_metrics) {
            reported.push_back(name);
        }
        why = fmt::format("; the driver reported no metric \"{}\" ({}): check correctness.metric",
                          spec.correctness_metric,
                          reported.empty()
                              ? std::string("it reported none")
                              : fmt::format("it reported: {}", fmt::join(reported, ", ")));
    }
    for (const auto& note : smoke.result->environment.value("notes", Json::array())) {
        if (note.is_string()) {
            why += "; driver note: " + note.get<std::string>();
        }
    }
    return why;
}

// Throws unless the original passed its own correctness rule in the smoke of case `id`.
void refuse_failing_original(const TargetSpec& spec, const std::string& id,
                             const StandaloneOutcome& smoke) {
    const auto& ref = smoke.result->subject("reference");
    const double value = ref.correctness_metrics.count(spec.correctness_metric) != 0
                             ? ref.correctness_metrics.at(spec.correctness_metric)
                             : std::nan("");
    if (ref.status == driver::CorrectnessStatus::passed &&
        correctness_passes(spec.correctness_operator, value, spec.correctness_threshold)) {
        return;
    }
    throw Error(ErrorCode::invalid_spec,
                fmt::format("the original does not pass its own correctness rule on case {} ({} {} "
                            "{} {}, "
                            "driver status {}){}; fix the rule or the driver before freezing",
                            id, spec.correctness_metric, value, spec.correctness_operator,
                            spec.correctness_threshold, driver::correctness_status_name(ref.status),
                            correctness_failure_reason(spec, smoke)),
                Json{{"field", "correctness.metric"},
                     {"case", id},
                     {"fix", "make the original pass its rule"}});
}

// Snapshots the original and the cases into `record`, runs the smoke of every case, then records
// the driver's identity, the smokes and the GPUs. Returns the smokes' invocation ids.
std::vector<std::string> freeze_workload(const store::Store& store, const TargetSpec& spec,
                                         const env::Identity& identity,
                                         const std::atomic<bool>* cancel, Json& record) {
    record["original"] = store::take_snapshot(store, spec.base_dir / spec.original).reference();
    record["cases"] = snapshot_cases(store, spec);
    std::vector<std::string> gpus = initial_gpus(spec, identity);
    std::vector<std::string> smokes;
    for (const auto& id : spec.case_ids) {
        const auto smoke = run_standalone_call(store, smoke_call(spec, id, gpus), cancel,
                                               [](const std::string&) {});
        smokes.push_back(smoke.invocation_id);
        if (smoke.error) {
            throw Error(smoke.error->code(),
                        fmt::format("the smoke of case {} failed, nothing was frozen: {}", id,
                                    smoke.error->what()),
                        smoke.error->details());
        }
        if (spec.uses_slurm()) {
            adopt_node_identity(spec, id, smoke.launch, record, gpus);
        }
        refuse_failing_original(spec, id, smoke);
    }
    // The identity is taken after the smoke: the smoke runs the driver where every later call runs
    // it (the spec's directory), and what the first run leaves in its own folder (Python's
    // bytecode, a JIT-built extension) is the state later calls start from. Taken before, the
    // smoke itself made the Target refuse every later call.
    record["driver_identity"] = hash_identity_paths(store, spec);
    record["smoke"] = smokes;
    record["gpus"] = gpus;
    return smokes;
}

// Names the record by its content, writes it into the staging store and moves the staging root
// into place. Returns the record as written.
Json publish_target(const store::Store& store, Json record, const FreezePaths& paths) {
    record["id"] = content_id("tgt", record);
    // Written through its type: what lands in target.json is what TargetRecord reads back.
    record = store::TargetRecord::from_json(record, store::layout::kTarget).to_json();
    store.write_record(store::layout::kTarget, record);
    rename_no_replace(paths.staging, paths.final_root);
    fsync_directory(paths.parent);
    return record;
}

}  // namespace

std::vector<SpecProblem> workload_problems(const TargetSpec& spec) {
    std::vector<SpecProblem> out;
    const auto add = [&](std::string field, std::string problem, std::string fix) {
        out.push_back(
            {ErrorCode::invalid_spec, std::move(field), std::move(problem), std::move(fix)});
    };
    std::error_code ec;
    if (!fs::exists(spec.base_dir / spec.original, ec)) {
        add("target.original",
            fmt::format("{} does not exist", (spec.base_dir / spec.original).string()),
            "point it at the original code");
    }
    for (std::size_t i = 0; i < spec.change_scope.size(); ++i) {
        const std::string& pattern = spec.change_scope[i];
        if (pattern.find_first_of("*?[") == std::string::npos &&
            !fs::exists(spec.base_dir / pattern, ec)) {
            add(fmt::format("target.change_scope[{}]", i),
                fmt::format("{} does not exist", pattern),
                "list files of the original that a candidate may change");
        }
    }
    for (const auto& id : spec.case_ids) {
        const fs::path c = spec.base_dir / spec.cases_dir / (id + ".json");
        if (!fs::is_regular_file(c, ec)) {
            add("cases.ids", fmt::format("{} does not exist", c.string()),
                fmt::format("write {}.json in {} or drop \"{}\" from ids", id, spec.cases_dir, id));
            continue;
        }
        try {
            (void)read_json_file(c);
        } catch (const Error& e) {
            add("cases.ids", fmt::format("{} is not valid JSON: {}", c.string(), e.what()),
                "make the case file valid JSON");
        }
    }
    for (std::size_t i = 0; i < spec.identity_paths.size(); ++i) {
        if (!fs::exists(spec.base_dir / spec.identity_paths[i], ec)) {
            add(fmt::format("driver.identity_paths[{}]", i),
                fmt::format("{} does not exist", (spec.base_dir / spec.identity_paths[i]).string()),
                "list files that exist (the driver's own sources)");
        }
    }
    const std::string& program = spec.driver_argv.front();
    if (program.find('/') != std::string::npos) {
        const fs::path p =
            fs::path(program).is_absolute() ? fs::path(program) : spec.base_dir / program;
        if (::access(p.c_str(), X_OK) != 0) {
            add("driver.argv[0]", fmt::format("{} is not an executable file", p.string()),
                "build the driver first, or fix the path (relative to cko.toml's directory)");
        }
    } else if (!find_program(program, scrubbed_environment(spec.env_allow, {}))) {
        // The lookup run_process will make, in the environment the driver will get.
        add("driver.argv[0]", fmt::format("{} is not on the driver's PATH", program),
            "install it, give its path, or allow PATH in driver.env_allow");
    }
    if (spec.deadline_unix_s && *spec.deadline_unix_s <= unix_seconds_now()) {
        out.push_back({ErrorCode::deadline_passed, "limits.deadline",
                       fmt::format("{} has passed", spec.deadline_text), "set a later deadline"});
    }
    return out;
}

run::Limits limits_for(const TargetSpec& s) {
    const auto ms = [](double sec) {
        return std::chrono::milliseconds(static_cast<std::int64_t>(sec * 1000));
    };
    run::Limits l;
    l.operation = ms(s.operation_timeout_s);
    l.command = ms(s.command_timeout_s);
    l.resource_wait = ms(s.resource_wait_timeout_s);
    l.cleanup = ms(s.cleanup_timeout_s);
    return l;
}

Json hash_identity_paths(const store::Store& store, const TargetSpec& spec) {
    Json out = Json::array();
    for (const auto& p : spec.identity_paths) {
        const store::Snapshot snap = store::take_snapshot(store, spec.base_dir / p);
        out.push_back(Json{{"path", p}, {"snapshot", snap.reference()}});
    }
    return out;
}

FreezeOutcome freeze_target(const FreezeOptions& options) {
    const TargetSpec spec = validated_spec(options);
    const FreezePaths paths = freeze_paths(options.root);
    FreezeOutcome outcome;
    outcome.reclaimed =
        reclaim_freeze_leftovers(paths.parent, options.root.filename().string(), spec.name);
    const run::LockCoherence store_fs = store_filesystem(spec, paths);
    try {
        const store::Store store = store::Store::create(paths.staging);
        env::ProbeOptions probe;
        probe.tools = options.probe_tools;
        const env::Identity identity = env::probe_identity(probe);
        Json record = initial_record(options, spec, identity, store_fs);
        if (!spec.diagnostic) {
            outcome.smoke_invocations =
                freeze_workload(store, spec, identity, options.cancel, record);
        }
        outcome.target = publish_target(store, std::move(record), paths);
    } catch (const Error& e) {
        // Nothing is frozen, but the driver's logs of the smoke are kept where the message says.
        const std::string kept = keep_failed_freeze_logs(paths.staging, spec.name);
        remove_tree_forcibly(paths.staging);
        if (kept.empty()) {
            throw;
        }
        Json details = e.details();
        details["logs"] = kept;
        throw Error(e.code(),
                    fmt::format("{} (the smoke's driver logs are kept in {})", e.what(), kept),
                    details);
    } catch (...) {
        remove_tree_forcibly(paths.staging);
        throw;
    }
    outcome.root = paths.final_root;
    return outcome;
}

Target::Target(const store::Store& store, store::TargetRecord record, TargetSpec spec)
    : store_(store), record_(std::move(record)), id_(record_.id), spec_(std::move(spec)) {}

Target Target::open(const store::Store& store) {
    store::TargetRecord record = store::read_target_record(store);
    // The spec as frozen (not the user's current cko.toml, which may have been edited since).
    TargetSpec spec = frozen_spec(record);
    return Target(store, std::move(record), std::move(spec));
}

store::Snapshot Target::original() const {
    if (!record_.original) {
        throw Error(ErrorCode::not_found,
                    fmt::format("Target {} is diagnostic: it froze no original", id_));
    }
    return store::load_snapshot(store_, record_.original->digest);
}

store::Snapshot Target::case_snapshot(const std::string& case_id) const {
    for (const auto& c : record_.cases.value_or(std::vector<store::TargetRecord::Case>{})) {
        if (c.id == case_id) {
            return store::load_snapshot(store_, c.snapshot.digest);
        }
    }
    throw Error(ErrorCode::not_found,
                fmt::format("case {} is not part of Target {}", case_id, id_));
}

driver::DriverSpec Target::driver() const {
    driver::DriverSpec d;
    d.argv = spec_.driver_argv;
    d.capabilities = spec_.capabilities;
    d.env_allow = spec_.env_allow;
    d.working_dir = spec_.base_dir;
    if (spec_.uses_slurm()) {
        d.slurm = spec_.slurm;
    }
    return d;
}

std::vector<std::string> Target::gpu_uuids() const {
    return record_.gpus.value_or(std::vector<std::string>{});
}

std::vector<std::string> Target::environment_problems(bool probe_tools) const {
    std::vector<std::string> problems;
    if (spec_.uses_slurm()) {
        // This host only submits: the identity that counts is the compute node's, checked for
        // every call from `cko doctor --json` inside its job (Session). The store must stay on a
        // filesystem whose flock excludes other nodes.
        const run::LockCoherence fs = run::lock_coherence(store_.root());
        if (fs.coherent == std::optional<bool>(false)) {
            problems.push_back(
                fmt::format("the store is on {} ({}): {}", fs.fs_type, fs.mount_point, fs.reason));
        }
        return problems;
    }
    env::ProbeOptions probe;
    probe.tools = probe_tools;
    if (const auto mismatch =
            env::identity_mismatch(record_.environment, env::probe_identity(probe))) {
        problems.push_back(*mismatch);
    }
    return problems;
}

std::vector<DriverFileChange> Target::driver_changes() const {
    std::vector<DriverFileChange> changes;
    for (const auto& item : record_.driver_identity.value_or(Json::array())) {
        const std::string path = item.at("path");
        const std::string digest = item.at("snapshot").at("digest");
        const fs::path source = spec_.base_dir / path;
        const auto file_path = [&](const std::string& entry) {
            return entry.empty() ? path : fmt::format("{}/{}", path, entry);
        };
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(source, ec))) {
            // The whole path is gone: each of its frozen files vanished.
            for (const auto& e : store::load_snapshot(store_, digest).entries) {
                changes.push_back({file_path(e.path), store::EntryChangeKind::vanished, ""});
            }
            continue;
        }
        store::Snapshot now;
        try {
            now = store::snapshot_manifest_of(source);
        } catch (const Error& e) {
            changes.push_back({path, store::EntryChangeKind::changed, e.what()});
            continue;
        }
        if (now.digest == digest) {
            continue;
        }
        for (const auto& c : store::changed_entries(store::load_snapshot(store_, digest), now)) {
            changes.push_back({file_path(c.path), c.kind, ""});
        }
    }
    return changes;
}

std::string DriverFileChange::describe() const {
    const std::string_view change = store::entry_change_name(kind);
    return reason.empty() ? fmt::format("{} {}", path, change)
                          : fmt::format("{} {} ({})", path, change, reason);
}

Error driver_changed_error(const std::vector<DriverFileChange>& changes,
                           std::string_view consequence) {
    std::vector<std::string> problems;
    Json files = Json::array();
    for (const auto& c : changes) {
        problems.push_back(c.describe());
        files.push_back(Json{{"path", c.path}, {"change", store::entry_change_name(c.kind)}});
    }
    return Error(ErrorCode::driver_changed,
                 fmt::format("driver files changed since the Target was frozen: {}; {}; freeze a "
                             "new Target to measure with the edited driver",
                             fmt::join(problems, ", "), consequence),
                 Json{{"files", files},
                      {"problems", problems},
                      {"fix", "restore the driver files, or freeze a new Target"}});
}

}  // namespace cko::eval
