// `cko profile collect ncu|nsys|torch --root R --experiment EXP --subject S [--case C]`: one driver
// call of a subject's frozen snapshot under a profiler, through the invocation runtime (GPU locks,
// the Target's timeouts, the invocation record, the monitor); its output imported by the caller's
// importer and kept as a profile record bound to the experiment, subject, case and invocation.
#pragma once

#include "cko/util/progress.hpp"

#include "cko/eval/operation.hpp"
#include "cko/eval/target.hpp"
#include "cko/store/store.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/error.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

// What `profile collect` runs (the verb fixes it) and which subject of the experiment it profiles.
#define CKO_PROFILE_TOOLS(X) X(ncu) X(nsys) X(torch)
CKO_CLOSED_ENUM(ProfileTool, CKO_PROFILE_TOOLS, profile_tool_name, profile_tool_from_name)
#define CKO_PROFILE_SUBJECTS(X) X(reference) X(candidate)
CKO_CLOSED_ENUM(ProfileSubject, CKO_PROFILE_SUBJECTS, profile_subject_name,
                profile_subject_from_name)

// The subject word where it enters (--subject, a request's `subject`): invalid_argument naming the
// field and the two words when it is missing or another word.
[[nodiscard]] ProfileSubject parse_profile_subject(const std::string& word);

struct ProfileCollectOptions {
    ProfileTool tool = ProfileTool::ncu;
    std::string experiment_id;                           // the experiment whose subject is profiled
    ProfileSubject subject = ProfileSubject::reference;  // reference: the experiment's base
    std::string case_id;                                 // "" = the Target's first case
    // ncu/nsys: a path, or a name found where `cko doctor` looks for tools; "" = the tool's name.
    std::string program;
    std::vector<std::string> tool_args;  // ncu/nsys options, checked by checked_profiler_args
    // The caller's reason to profile a candidate that a screen, confirm or audit failed (else
    // candidate_failed); recorded in the request as override_failure.
    std::string override_failure;
    // The caller's reason to profile an experiment recorded as falsified (else falsified);
    // recorded in the request as override_falsified.
    std::string override_falsified;
    // The one question the profile is meant to answer (--question), kept in the profile record and
    // the invocation request; "" when none was given.
    std::string question;
    const std::atomic<bool>* cancel = nullptr;
    ProgressFn progress;
};

// The profiler options `--ncu-arg` / `--nsys-arg` may pass (each as "--name value", "--name=value"
// or a flag), normalized to argv; anything else (an output path, --import, another report format)
// is invalid_argument naming the field `ncu_arg` / `nsys_arg` and the allowed names.
[[nodiscard]] std::vector<std::string> checked_profiler_args(const std::string& tool,
                                                             const std::vector<std::string>& args);

// What the profiled call left, handed to the importer while the invocation is still open.
struct CollectedRun {
    std::string tool;
    std::string program;             // the profiler's absolute path ("" for torch)
    std::string tool_version;        // ncu/nsys: from `--version`; torch: the driver's
                                     // environment.software.torch ("" when it did not say)
    std::filesystem::path output;    // ncu: report.ncu-rep; nsys: report.sqlite; torch: the trace
    std::filesystem::path work_dir;  // invocations/<id>/profile: where an importer may write
    std::filesystem::path call_dir;  // invocations/<id>/driver/NNNN
    std::chrono::milliseconds timeout{0};  // for an import step that runs the profiler again
    const std::atomic<bool>* cancel = nullptr;
};

struct ImportedProfile {
    Json document;  // what `cko profile <tool> FILE --json` prints for the output
    Json sources;   // [{path, report_sha256, tool, tool_version, dialect, parser_version}]
    std::string text;
};

struct ProfileImport {
    // A refusal the profiler printed (ncu's ERR_NVGPUCTRPERM), read from the call's stdout/stderr
    // before the call's own outcome is judged; nullopt when there is none. May be unset.
    std::function<std::optional<Error>(const CollectedRun&)> refusal;
    std::function<ImportedProfile(const CollectedRun&)> import;
};

struct ProfileCollectOutcome {
    std::string invocation_id;
    ImportedProfile imported;
    store::RecordRef stored;
    Json collection;             // the record's `collection`
    OperationOutcome operation;  // the finished invocation
};

// Throws before any invocation exists: not_eligible (a diagnostic Target; ncu/nsys through
// Slurm), invalid_argument naming the field (tool, subject, case, ncu_arg/nsys_arg), not_found
// (experiment; the profiler, naming the tool and how to give it), candidate_failed (the candidate
// failed an earlier screen, confirm or audit and no override_failure reason was given), tool_failed
// (its --version fails), driver_changed, budget_exhausted. After it exists every failure (the
// environment differs from the frozen one, the call, a profiler that wrote nothing or refused, the
// import) ends the invocation failed / cancelled / timed_out, stores no profile record, ledgers
// whatever the profiler left, and is rethrown with `invocation_id` added to its details.
[[nodiscard]] ProfileCollectOutcome collect_profile(const Target& target,
                                                    const ProfileCollectOptions& options,
                                                    const ProfileImport& importer,
                                                    const Announce& announce);

}  // namespace cko::eval
