// The store catalogue: every path of an artifact root's layout, named in one place. Paths are
// relative to the root, '/'-separated; the Store checks each component when it joins one (ids are
// checked by the callers before they name a record). No other source file spells these names
// (tests/cli/store_layout_test.sh greps for them).
//
//   store.json  ledger.jsonl  .lock  .locks/<name>.lock
//   target.json  stop.json  handoff.md (the person's; never read)
//   objects/sha256/<digest>/{manifest.json,files/}        content-addressed snapshots
//   experiments/<exp-id>.json
//   profiles/<prof-id>.json
//   champion/current.json  champion/selections/<sel-id>.json
//   conclusions/<low-id>.json                              lowered conclusions (created on demand)
//   hypotheses/<hyp-id>.json                               competing hypotheses (created on demand)
//   hypotheses/settlements/<hset-id>.json                  how each was settled, citing it
//   invocations/<inv-id>/{request.json,result.json,events.jsonl,monitor.jsonl,workspace/,profile/}
//   invocations/<inv-id>/driver/NNNN/{request.json,process.json,slurm.json,out/{result.json,...}}
//   invocations/<inv-id>/driver/session-NN/
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cko::store::layout {

// The root's own files.
inline constexpr std::string_view kStoreMarker = "store.json";
inline constexpr std::string_view kLedger = "ledger.jsonl";
inline constexpr std::string_view kLockFile = ".lock";
inline constexpr std::string_view kLocksDir = ".locks";
inline constexpr std::string_view kTarget = "target.json";
inline constexpr std::string_view kStop = "stop.json";
inline constexpr std::string_view kHandoff = "handoff.md";

// Directories.
inline constexpr std::string_view kObjectsTop = "objects";
inline constexpr std::string_view kObjectsDir = "objects/sha256";
inline constexpr std::string_view kExperimentsDir = "experiments";
inline constexpr std::string_view kProfilesDir = "profiles";
inline constexpr std::string_view kInvocationsDir = "invocations";
inline constexpr std::string_view kChampionCurrent = "champion/current.json";
inline constexpr std::string_view kSelectionsDir = "champion/selections";
inline constexpr std::string_view kConclusionsDir = "conclusions";
inline constexpr std::string_view kHypothesesDir = "hypotheses";
inline constexpr std::string_view kSettlementsDir = "hypotheses/settlements";

// File names inside an invocation's or a call's directory (for listings and checks by name).
inline constexpr std::string_view kRequestFile = "request.json";
inline constexpr std::string_view kResultFile = "result.json";  // also the driver's, in out/
// The SDKs' note of which subject runs, in out/ while a request runs (docs/PROTOCOL.md).
inline constexpr std::string_view kRunningSubjectFile = "cko-running-subject.txt";
inline constexpr std::string_view kEventsFile = "events.jsonl";
inline constexpr std::string_view kMonitorFile = "monitor.jsonl";
inline constexpr std::string_view kWorkspaceDir = "workspace";
inline constexpr std::string_view kDriverDir = "driver";
inline constexpr std::string_view kCallOutputDir = "out";
inline constexpr std::string_view kStdoutFile = "stdout.txt";
inline constexpr std::string_view kStderrFile = "stderr.txt";
inline constexpr std::string_view kManifestFile = "manifest.json";
// A Slurm call's own files, beside the call's (run/slurm_launcher.cpp).
inline constexpr std::string_view kSlurmStepFile = "slurm-step.txt";
inline constexpr std::string_view kNodeDoctorFile = "node-doctor.json";
inline constexpr std::string_view kNodeDoctorPartialFile = "node-doctor.json.partial";
inline constexpr std::string_view kJobScriptFile = "job.sh";
inline constexpr std::string_view kSubmitStdoutFile = "submit-stdout.txt";
inline constexpr std::string_view kSubmitStderrFile = "submit-stderr.txt";
inline constexpr std::string_view kSnapshotFilesDir = "files";

// The directories a new root is created with.
[[nodiscard]] const std::vector<std::string_view>& layout_dirs();

// Records by id.
[[nodiscard]] std::string experiment_record(std::string_view id);  // experiments/<id>.json
[[nodiscard]] std::string profile_record(std::string_view id);     // profiles/<id>.json
[[nodiscard]] std::string selection_record(std::string_view id);   // champion/selections/<id>.json
[[nodiscard]] std::string conclusion_record(std::string_view id);  // conclusions/<id>.json
[[nodiscard]] std::string hypothesis_record(std::string_view id);  // hypotheses/<id>.json
[[nodiscard]] std::string settlement_record(
    std::string_view id);  // hypotheses/settlements/<id>.json

// Snapshots.
[[nodiscard]] std::string snapshot_dir(std::string_view digest);  // objects/sha256/<digest>
[[nodiscard]] std::string snapshot_manifest(std::string_view digest);
[[nodiscard]] std::string snapshot_files(std::string_view digest);

// An invocation.
[[nodiscard]] std::string invocation_dir(std::string_view id);  // invocations/<id>
[[nodiscard]] std::string invocation_request(std::string_view id);
[[nodiscard]] std::string invocation_result(std::string_view id);
[[nodiscard]] std::string invocation_events(std::string_view id);
[[nodiscard]] std::string invocation_monitor(std::string_view id);
[[nodiscard]] std::string invocation_workspace(std::string_view id);
[[nodiscard]] std::string invocation_profile_dir(std::string_view id);  // invocations/<id>/profile

// One driver call of an invocation, and its files.
[[nodiscard]] std::string call_dir(std::string_view invocation_id, int number);     // driver/NNNN
[[nodiscard]] std::string session_dir(std::string_view invocation_id, int number);  // session-NN
[[nodiscard]] std::string call_request(std::string_view call_dir);
[[nodiscard]] std::string call_output_dir(std::string_view call_dir);  // <call>/out
[[nodiscard]] std::string call_process(std::string_view call_dir);
[[nodiscard]] std::string call_slurm(std::string_view call_dir);
[[nodiscard]] std::string call_stdout(std::string_view call_dir);
[[nodiscard]] std::string call_stderr(std::string_view call_dir);
[[nodiscard]] std::string driver_result(std::string_view output_dir);         // <out>/result.json
[[nodiscard]] std::string driver_running_subject(std::string_view call_dir);  // <call>/out/cko-…

// Predicates over a relative path (fsck, listings).
[[nodiscard]] bool is_mutable_by_design(std::string_view rel);     // unledgered on purpose
[[nodiscard]] bool is_driver_output(std::string_view rel);         // under some driver/*/out
[[nodiscard]] bool is_invocation_dir(std::string_view rel);        // invocations/inv-*, depth 1
[[nodiscard]] bool is_invocation_workspace(std::string_view rel);  // invocations/<id>/workspace
// A call's own file (driver/<call>/request.json, process.json, stdout.txt, stderr.txt; a session's
// logs): made by cko around the driver, ledgered when that call ends (store::WriteBatch).
[[nodiscard]] bool is_call_file(std::string_view rel);

// What a bundle (`cko bundle`) does with a path.
// The lock file and the lock directory: never bundled, never listed as left out.
[[nodiscard]] bool is_lock(std::string_view rel);
// Unledgered on purpose, yet evidence a bundle carries: the root's marker, the ledger, the champion
// pointer, an invocation's event and monitor logs.
[[nodiscard]] bool is_bundled_unledgered(std::string_view rel);
// A snapshot's file (objects/sha256/<digest>/...), not a staging one's: checked by its manifest.
[[nodiscard]] bool is_snapshot_file(std::string_view rel);
// What `--redact` may replace: a driver call's files other than its request.json and the driver's
// result.json (the raw samples), an invocation's profiler work files and monitor log, a snapshot's
// payload. The records a report or fsck reads are never redactable.
[[nodiscard]] bool is_redactable(std::string_view rel);

}  // namespace cko::store::layout
