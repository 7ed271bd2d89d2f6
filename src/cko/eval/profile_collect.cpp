// Profiles collected around one driver call of a frozen subject: checks, the profiled call, the
// import and the record.
#include "cko/eval/profile_collect.hpp"

#include "cko/driver/stderr_tail.hpp"
#include "cko/eval/decision.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/failure_gate.hpp"
#include "cko/eval/operation.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/eval/profiler_program.hpp"
#include "cko/eval/session.hpp"
#include "cko/profile/tested_versions.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <string_view>

namespace cko::eval {
namespace {

std::string tool_word(const ProfileCollectOptions& o) {
    return std::string(profile_tool_name(o.tool));
}
std::string subject_word(const ProfileCollectOptions& o) {
    return std::string(profile_subject_name(o.subject));
}

namespace fs = std::filesystem;

store::ExperimentRecord load_experiment_named(const store::Store& store, const std::string& id) {
    if (id.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--experiment is required: the experiment whose subject is profiled (see cko "
                    "ls)",
                    Json{{"field", "experiment"}});
    }
    try {
        return load_experiment(store, id);
    } catch (const Error& e) {
        throw Error(e.code(), fmt::format("--experiment: {}", e.what()),
                    Json{{"field", "experiment"}, {"id", id}});
    }
}

// Every file the profiler and the importer left in the work directory, ledgered in one group
// commit (links and hard links are left alone, as for a driver's outputs), listed with digest and
// size.
Json ledger_work_files(const store::Store& store, const std::string& work_rel) {
    Json files = Json::array();
    std::error_code ec;
    const fs::path dir = store.root() / work_rel;
    if (!fs::is_directory(fs::symlink_status(dir, ec))) {
        return files;
    }
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
        names.push_back(entry.path().lexically_relative(dir).string());
    }
    std::sort(names.begin(), names.end());
    std::vector<std::string> to_ledger;
    for (const auto& name : names) {
        const std::string rel = work_rel + "/" + name;
        struct stat st {};
        if (!is_safe_relative_path(rel) || ::lstat((dir / name).c_str(), &st) != 0 ||
            !S_ISREG(st.st_mode) || st.st_nlink != 1) {
            continue;
        }
        to_ledger.push_back(rel);
        files.push_back(Json{{"path", rel},
                             {"sha256", sha256_file_hex(dir / name)},
                             {"size", static_cast<std::uint64_t>(st.st_size)}});
    }
    store.ledger_files(to_ledger);
    return files;
}

// Failure stops what follows: the candidate of an experiment that failed a screen, confirm or
// audit is not profiled without the caller's reason (returned, for the request; null otherwise).
Json gate_profiled_subject(const InvocationLedger& ledger, const ProfileCollectOptions& o,
                           const store::ExperimentRecord& experiment) {
    if (o.subject == ProfileSubject::candidate) {
        return require_candidate_not_failed(ledger, "profile collect", o.experiment_id,
                                            experiment.candidate.digest, o.override_failure,
                                            experiment.is_control());
    }
    if (!o.override_failure.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--override-failure is for a failed candidate; the reference (the "
                    "experiment's base) is profiled without one",
                    Json{{"field", "override_failure"}});
    }
    return Json();
}

Error with_invocation(const Error& e, const std::string& invocation_id) {
    Json details = e.details().is_object() ? e.details() : Json::object();
    details["invocation_id"] = invocation_id;
    return Error(e.code(), e.what(), details);
}

// One collection in its open invocation: what was decided before it, and the steps of its body.
struct ProfileRun {
    const Target& target;
    const ProfileCollectOptions& o;
    const ProfileImport& importer;
    std::string case_id;
    std::vector<std::string> tool_args;
    std::string program;
    std::string tool_version;
    store::Snapshot reference;
    std::string reference_label;
    store::Snapshot candidate;
    std::string label;   // the profiled subject's
    std::string digest;  // the profiled subject's
    ProfileCollectOutcome out;
    std::string work_rel;  // invocations/<id>/profile
    bool ledgered = false;

    void collect(run::Invocation& inv, OperationEnd& end);
    void settle(const run::Invocation& inv, OperationEnd& end) const;

private:
    // How the profiler wraps the call; `output` is where its report will be.
    ProfiledCall profiled_call(const run::Invocation& inv, const fs::path& work_dir,
                               fs::path& output) const;
    // What the profiled call left, for the importer; throws the call's or the profiler's failure.
    CollectedRun collected(const run::Invocation& inv, const Measurement& m, const fs::path& output,
                           const fs::path& work_dir) const;
    // Imports what the call left and stores it as a profile record.
    void import_and_store(const Measurement& m, CollectedRun& run, const ProfiledCall& how,
                          OperationEnd& end);
};

ProfiledCall ProfileRun::profiled_call(const run::Invocation& inv, const fs::path& work_dir,
                                       fs::path& output) const {
    ProfiledCall how;
    if (o.tool == ProfileTool::ncu) {
        how.argv_prefix = {program, "--export", (work_dir / "report").string(),
                           "--force-overwrite"};
        output = work_dir / "report.ncu-rep";
    } else if (o.tool == ProfileTool::nsys) {
        how.argv_prefix = {
            program,    "profile", "--output",          (work_dir / "report").string(),
            "--export", "sqlite",  "--force-overwrite", "true"};
        output = work_dir / "report.sqlite";
    } else {
        // The trace is the driver's output: inside its output_dir, listed in its artifacts.
        output = inv.next_output_dir() / "torch-trace.json";
        how.request_profile = [](const fs::path& output_dir) {
            return Json{{"kind", "torch"},
                        {"trace_path", (output_dir / "torch-trace.json").string()}};
        };
    }
    how.argv_prefix.insert(how.argv_prefix.end(), tool_args.begin(), tool_args.end());
    if (o.tool != ProfileTool::torch) {
        // Nsight tools keep their configuration and temporary files under these.
        how.env_allow_extra = {"HOME", "USER", "TMPDIR"};
    }
    return how;
}

CollectedRun ProfileRun::collected(const run::Invocation& inv, const Measurement& m,
                                   const fs::path& output, const fs::path& work_dir) const {
    const store::Store& store = target.store();
    const int call = m.calls.empty() ? 0 : m.calls.front();
    CollectedRun run;
    run.tool = tool_word(o);
    run.program = program;
    run.tool_version = tool_version;
    run.output = output;
    run.work_dir = work_dir;
    if (call > 0) {
        run.call_dir = store.root() / store::layout::call_dir(inv.id(), call);
    }
    run.timeout = inv.limits().command;
    run.cancel = o.cancel;
    if (importer.refusal && call > 0) {
        if (auto refused = importer.refusal(run)) {
            throw *refused;
        }
    }
    if (m.error) {
        throw Error(m.error->code(),
                    o.tool == ProfileTool::torch
                        ? fmt::format("the profiled driver call failed: {}", m.error->what())
                        : fmt::format("the profiled call ({} around the driver) failed: {}",
                                      tool_word(o), m.error->what()),
                    m.error->details());
    }
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(output, ec))) {
        return run;
    }
    if (o.tool == ProfileTool::torch) {
        throw Error(ErrorCode::missing_result,
                    fmt::format("the driver wrote no torch trace at {}: a request with "
                                "`profile` {{\"kind\": \"torch\", \"trace_path\": …}} "
                                "asks the driver to run torch.profiler around its samples "
                                "and export a Chrome trace there, listed in its artifacts "
                                "(the Python SDK does; docs/PROTOCOL.md)",
                                output.string()),
                    Json{{"field", "profile.trace_path"}, {"path", output.string()}});
    }
    std::string said;
    for (const std::string_view stream : {store::layout::kStderrFile, store::layout::kStdoutFile}) {
        const std::string tail = driver::stderr_tail(run.call_dir / stream, 3, kQuotedTailBytes);
        if (!tail.empty()) {
            said += fmt::format("; {} ends with: {}", stream, tail);
        }
    }
    throw Error(ErrorCode::tool_failed,
                fmt::format("{} ended without writing {} (its messages are in the call's "
                            "stdout.txt and stderr.txt, {}){}",
                            tool_word(o), output.string(), run.call_dir.string(), said),
                Json{{"path", output.string()}, {"call_dir", run.call_dir.string()}});
}

void ProfileRun::import_and_store(const Measurement& m, CollectedRun& run, const ProfiledCall& how,
                                  OperationEnd& end) {
    const store::Store& store = target.store();
    if (o.tool == ProfileTool::torch) {
        const Json software = m.environment.is_object()
                                  ? m.environment.value("software", Json::object())
                                  : Json::object();
        run.tool_version = software.is_object() && software.value("torch", Json()).is_string()
                               ? software["torch"].get<std::string>()
                               : std::string();
        end.outputs["tool_version"] = run.tool_version;
    }
    out.imported = importer.import(run);
    Json files = ledger_work_files(store, work_rel);
    ledgered = true;
    if (o.tool == ProfileTool::torch) {
        files.push_back(Json{{"path", run.output.lexically_relative(store.root()).string()},
                             {"sha256", sha256_file_hex(run.output)},
                             {"size", static_cast<std::uint64_t>(fs::file_size(run.output))}});
    }
    const auto subject_it = m.subjects.find(subject_word(o));
    out.collection =
        Json{{"invocation_id", out.invocation_id},
             {"call", m.calls.empty() ? 0 : m.calls.front()},
             {"case_id", case_id},
             {"tool", tool_word(o)},
             {"tool_path", program},
             {"tool_version", run.tool_version},
             {"tool_args", tool_args},
             {"argv", how.argv_prefix},
             {"subject_label", label},
             {"subject_digest", digest},
             {"subject_correct", subject_it != m.subjects.end() && subject_it->second.correct},
             {"contamination", m.contamination},
             {"files", files}};
    ProfileEvidence evidence{tool_word(o),    out.imported.document, out.imported.sources,
                             o.experiment_id, subject_word(o),       out.collection};
    evidence.question = o.question;
    out.stored = store_profile(store, evidence);
    end.outputs["profile"] = out.stored.to_json();
    end.reason = fmt::format("{} profile of {} ({}) on case {} stored as {}", tool_word(o),
                             subject_word(o), label, case_id, out.stored.id);
}

void ProfileRun::collect(run::Invocation& inv, OperationEnd& end) {
    const store::Store& store = target.store();
    out.invocation_id = inv.id();
    end.outputs = Json{{"target", target.id()},       {"experiment_id", o.experiment_id},
                       {"subject", subject_word(o)},  {"subject_label", label},
                       {"case_id", case_id},          {"tool", tool_word(o)},
                       {"tool_version", tool_version}};
    work_rel = store::layout::invocation_profile_dir(inv.id());
    const auto problems = target.environment_problems();
    if (!problems.empty()) {
        throw Error(ErrorCode::environment_mismatch,
                    fmt::format("a profile here would not be of the Target's machine: {}",
                                fmt::join(problems, "; ")),
                    Json{{"problems", problems}});
    }
    make_directories(store.real_path_of(work_rel));
    const fs::path work_dir = store.real_path_of(work_rel);
    fs::path output;
    const ProfiledCall how = profiled_call(inv, work_dir, output);
    if (inv.cancelled()) {
        throw Error(ErrorCode::interrupted, "profile collection cancelled");
    }
    if (o.progress) {
        o.progress(Progress{fmt::format("profile collect {}: {} ({}) on case {}…", tool_word(o),
                                        subject_word(o), label, case_id)});
    }
    Measurement m;
    {
        // Locks, monitor and the materialized subjects live for the call only.
        Session session(target, inv, reference, reference_label, candidate, o.experiment_id,
                        Session::Calls::profiled);
        m = session.measure_profiled(case_id, subject_word(o), how);
    }
    // The driver and the profiler run as the store's owner: records read before the call that
    // they rewrote fail the collection (tampered_record).
    store.verify_ledgered(store::layout::kTarget);
    store.verify_ledgered(store::layout::experiment_record(o.experiment_id));
    end.outputs["call"] = m.calls.empty() ? 0 : m.calls.front();
    end.outputs["contamination"] = m.contamination;
    CollectedRun run = collected(inv, m, output, work_dir);
    import_and_store(m, run, how, end);
}

void ProfileRun::settle(const run::Invocation& /*inv*/, OperationEnd& /*end*/) const {
    if (!ledgered) {
        try {
            (void)ledger_work_files(target.store(), work_rel);
        } catch (const Error&) {
            // The invocation's failure is the one to report.
        }
    }
}

// Refuses a tool cko cannot run for this Target: a diagnostic Target, or ncu/nsys around a call
// that runs through Slurm.
void refuse_unprofilable(const TargetSpec& spec, const std::string& tool) {
    if (spec.diagnostic) {
        throw Error(ErrorCode::not_eligible, "a diagnostic Target has no workload to profile");
    }
    if (spec.uses_slurm() && tool != "torch") {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("this Target's driver calls run through Slurm; cko does not wrap "
                                "them in {} yet: profile on the compute node and keep the export "
                                "with `cko profile {} FILE --root R --experiment EXP --subject S`",
                                tool, tool),
                    Json{{"field", "tool"}});
    }
}

// The case to profile: --case, else the Target's first; refuses a case the Target lacks.
std::string profiled_case(const TargetSpec& spec, const std::string& given) {
    const std::string case_id = given.empty() ? spec.case_ids.front() : given;
    if (std::find(spec.case_ids.begin(), spec.case_ids.end(), case_id) == spec.case_ids.end()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--case '{}' is not a case of the Target; its cases: {}", case_id,
                                fmt::join(spec.case_ids, ", ")),
                    Json{{"field", "case"}, {"cases", spec.case_ids}});
    }
    return case_id;
}

struct ProfiledSides {
    store::Snapshot reference;
    std::string reference_label;
    store::Snapshot candidate;
    std::string label;   // the profiled subject's
    std::string digest;  // the profiled subject's
};

// The experiment's two sides, as a screen of it sees them, and the profiled subject's label and
// digest.
ProfiledSides profiled_sides(const store::Store& store, const store::ExperimentRecord& experiment,
                             const ProfileCollectOptions& o) {
    const store::ExperimentRecord::Base& base = experiment.base;
    ProfiledSides sides;
    sides.reference = store::load_snapshot(store, base.digest);
    sides.reference_label = base.kind == store::BaseKind::champion && base.experiment_id
                                ? *base.experiment_id
                                : std::string("original");
    sides.candidate = store::load_snapshot(store, experiment.candidate.digest);
    const bool is_candidate = o.subject == ProfileSubject::candidate;
    sides.label = is_candidate ? o.experiment_id : sides.reference_label;
    sides.digest = is_candidate ? sides.candidate.digest : sides.reference.digest;
    return sides;
}

// The profile invocation's request: what is profiled, with which tool, and any override given.
Json collect_request(const ProfileRun& run, const Json& overridden,
                     const Json& overridden_falsified) {
    Json request{{"target", run.target.id()},        {"experiment_id", run.o.experiment_id},
                 {"subject", subject_word(run.o)},   {"subject_label", run.label},
                 {"subject_digest", run.digest},     {"case_id", run.case_id},
                 {"tool", tool_word(run.o)},         {"tool_path", run.program},
                 {"tool_version", run.tool_version}, {"tool_args", run.tool_args},
                 {"driver_mode", "process"}};
    if (!overridden.is_null()) {
        request["override_failure"] = overridden;
    }
    if (!overridden_falsified.is_null()) {
        request["override_falsified"] = overridden_falsified;
    }
    if (!run.o.question.empty()) {
        request["question"] = run.o.question;
    }
    return request;
}

}  // namespace

ProfileSubject parse_profile_subject(const std::string& word) {
    if (const auto subject = profile_subject_from_name(word)) {
        return *subject;
    }
    throw Error(ErrorCode::invalid_argument,
                word.empty() ? std::string("--subject is required: reference (the experiment's "
                                           "base) or candidate")
                             : fmt::format("--subject is '{}'; use reference (the experiment's "
                                           "base) or candidate",
                                           word),
                Json{{"field", "subject"}});
}

ProfileCollectOutcome collect_profile(const Target& target, const ProfileCollectOptions& o,
                                      const ProfileImport& importer,
                                      const std::function<void(const std::string&)>& announce) {
    const TargetSpec& spec = target.spec();
    const store::Store& store = target.store();
    refuse_unprofilable(spec, tool_word(o));
    const store::ExperimentRecord experiment = load_experiment_named(store, o.experiment_id);
    // The invocations, read once for the failure gate and the budget.
    const InvocationLedger ledger = InvocationLedger::read(store);
    const Json overridden = gate_profiled_subject(ledger, o, experiment);
    const Json overridden_falsified =
        require_not_falsified(ledger, "profile collect", o.experiment_id, o.override_falsified);
    const std::string case_id = profiled_case(spec, o.case_id);
    const std::vector<std::string> tool_args = checked_profiler_args(tool_word(o), o.tool_args);
    const ProfilerProgram profiler = checked_profiler_program(o);
    const auto changes = target.driver_changes();
    if (!changes.empty()) {
        throw driver_changed_error(changes, "nothing was profiled");
    }
    require_budget(target, 0, ledger);

    ProfiledSides sides = profiled_sides(store, experiment, o);
    ProfileRun collection{target,
                          o,
                          importer,
                          case_id,
                          tool_args,
                          profiler.path,
                          profiler.version,
                          std::move(sides.reference),
                          std::move(sides.reference_label),
                          std::move(sides.candidate),
                          std::move(sides.label),
                          std::move(sides.digest),
                          {},
                          {},
                          false};
    const Json request = collect_request(collection, overridden, overridden_falsified);
    const OperationOutcome done = run_in_invocation(
        store, InvocationSpec{"profile", request, limits_for(spec), o.cancel}, announce,
        [&](run::Invocation& inv, OperationEnd& end) { collection.collect(inv, end); },
        [&](run::Invocation& inv, OperationEnd& end) { collection.settle(inv, end); });
    if (done.error) {
        throw with_invocation(*done.error, done.invocation_id);
    }
    collection.out.operation = done;
    return collection.out;
}

}  // namespace cko::eval
