// The store catalogue: the one place the artifact root's layout is spelled (see catalogue.hpp).
#include "cko/store/catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::store::layout {
namespace {

std::string join(std::string_view a, std::string_view b) {
    std::string out(a);
    out += '/';
    out += b;
    return out;
}

}  // namespace

const std::vector<std::string_view>& layout_dirs() {
    static const std::vector<std::string_view> dirs = {kObjectsDir, kExperimentsDir,
                                                       kInvocationsDir, kSelectionsDir};
    return dirs;
}

std::string experiment_record(std::string_view id) {
    return fmt::format("{}/{}.json", kExperimentsDir, id);
}

std::string profile_record(std::string_view id) {
    return fmt::format("{}/{}.json", kProfilesDir, id);
}

std::string selection_record(std::string_view id) {
    return fmt::format("{}/{}.json", kSelectionsDir, id);
}

std::string conclusion_record(std::string_view id) {
    return fmt::format("{}/{}.json", kConclusionsDir, id);
}

std::string hypothesis_record(std::string_view id) {
    return fmt::format("{}/{}.json", kHypothesesDir, id);
}

std::string settlement_record(std::string_view id) {
    return fmt::format("{}/{}.json", kSettlementsDir, id);
}

std::string snapshot_dir(std::string_view digest) {
    return join(kObjectsDir, digest);
}

std::string snapshot_manifest(std::string_view digest) {
    return join(snapshot_dir(digest), kManifestFile);
}

std::string snapshot_files(std::string_view digest) {
    return join(snapshot_dir(digest), kSnapshotFilesDir);
}

std::string invocation_dir(std::string_view id) {
    return join(kInvocationsDir, id);
}

std::string invocation_request(std::string_view id) {
    return join(invocation_dir(id), kRequestFile);
}

std::string invocation_result(std::string_view id) {
    return join(invocation_dir(id), kResultFile);
}

std::string invocation_events(std::string_view id) {
    return join(invocation_dir(id), kEventsFile);
}

std::string invocation_monitor(std::string_view id) {
    return join(invocation_dir(id), kMonitorFile);
}

std::string invocation_workspace(std::string_view id) {
    return join(invocation_dir(id), kWorkspaceDir);
}

std::string invocation_profile_dir(std::string_view id) {
    return join(invocation_dir(id), "profile");
}

std::string call_dir(std::string_view invocation_id, int number) {
    return fmt::format("{}/{}/{:04d}", invocation_dir(invocation_id), kDriverDir, number);
}

std::string session_dir(std::string_view invocation_id, int number) {
    return fmt::format("{}/{}/session-{:02d}", invocation_dir(invocation_id), kDriverDir, number);
}

std::string call_request(std::string_view call_dir) {
    return join(call_dir, kRequestFile);
}

std::string call_output_dir(std::string_view call_dir) {
    return join(call_dir, kCallOutputDir);
}

std::string call_process(std::string_view call_dir) {
    return join(call_dir, "process.json");
}

std::string call_slurm(std::string_view call_dir) {
    return join(call_dir, "slurm.json");
}

std::string call_stdout(std::string_view call_dir) {
    return join(call_dir, kStdoutFile);
}

std::string call_stderr(std::string_view call_dir) {
    return join(call_dir, kStderrFile);
}

std::string driver_result(std::string_view output_dir) {
    return join(output_dir, kResultFile);
}

std::string driver_running_subject(std::string_view call_dir) {
    return join(call_output_dir(call_dir), kRunningSubjectFile);
}

bool is_mutable_by_design(std::string_view rel) {
    const std::string workspace = fmt::format("/{}/", kWorkspaceDir);
    return rel == kLockFile || rel.starts_with(join(kLocksDir, "")) || rel == kLedger ||
           rel == kStoreMarker || rel == kChampionCurrent || rel == kHandoff ||
           rel.ends_with(join("", kEventsFile)) || rel.ends_with(join("", kMonitorFile)) ||
           rel.find(workspace) != std::string_view::npos;
}

bool is_driver_output(std::string_view rel) {
    const std::string driver = fmt::format("/{}/", kDriverDir);
    const std::string out = join("", kCallOutputDir);
    return rel.starts_with(join(kInvocationsDir, "")) &&
           rel.find(driver) != std::string_view::npos &&
           (rel.find(out + "/") != std::string_view::npos || rel.ends_with(out));
}

bool is_call_file(std::string_view rel) {
    // invocations/<id>/driver/<call>/<name>: exactly four levels below the root.
    const std::string prefix = join(kInvocationsDir, "");
    if (!rel.starts_with(prefix) || std::count(rel.begin(), rel.end(), '/') != 4) {
        return false;
    }
    const std::size_t id_end = rel.find('/', prefix.size());
    const std::string_view rest = rel.substr(id_end + 1);
    const std::string_view name = rel.substr(rel.rfind('/') + 1);
    return rest.starts_with(join(kDriverDir, "")) &&
           (name == kRequestFile || name == kStdoutFile || name == kStderrFile ||
            rel == call_process(rel.substr(0, rel.rfind('/'))));
}

bool is_invocation_dir(std::string_view rel) {
    return rel.starts_with(join(kInvocationsDir, "inv-")) &&
           rel.find('/', kInvocationsDir.size() + 1) == std::string_view::npos;
}

bool is_invocation_workspace(std::string_view rel) {
    const std::string invocations = join(kInvocationsDir, "");
    const std::size_t id_end = rel.find('/', invocations.size());
    return rel.starts_with(invocations) && id_end != std::string_view::npos &&
           rel.substr(id_end + 1) == kWorkspaceDir;
}

bool is_lock(std::string_view rel) {
    return rel == kLockFile || rel == kLocksDir || rel.starts_with(join(kLocksDir, ""));
}

bool is_bundled_unledgered(std::string_view rel) {
    const bool invocation_log =
        rel.starts_with(join(kInvocationsDir, "")) &&
        std::count(rel.begin(), rel.end(), '/') == 2 &&
        (rel.ends_with(join("", kEventsFile)) || rel.ends_with(join("", kMonitorFile)));
    return rel == kStoreMarker || rel == kLedger || rel == kChampionCurrent || invocation_log;
}

bool is_snapshot_file(std::string_view rel) {
    const std::string prefix = join(kObjectsDir, "");
    if (!rel.starts_with(prefix)) {
        return false;
    }
    const std::string_view rest = rel.substr(prefix.size());
    const std::size_t slash = rest.find('/');
    return slash != std::string_view::npos && slash > 0 && !rest.starts_with(".");
}

bool is_redactable(std::string_view rel) {
    if (is_snapshot_file(rel)) {
        const std::string_view rest = rel.substr(kObjectsDir.size() + 1);
        const std::string payload = snapshot_files(rest.substr(0, rest.find('/')));
        return rel == payload || rel.starts_with(join(payload, ""));  // a file's, a folder's
    }
    const std::string invocations = join(kInvocationsDir, "");
    const std::size_t id_end = rel.find('/', invocations.size());
    if (!rel.starts_with(invocations) || id_end == std::string_view::npos) {
        return false;
    }
    const std::string_view id = rel.substr(invocations.size(), id_end - invocations.size());
    const std::string calls = join(join(invocation_dir(id), kDriverDir), "");
    if (rel.starts_with(calls)) {  // invocations/<id>/driver/<call>/...
        const std::size_t call_end = rel.find('/', calls.size());
        if (call_end == std::string_view::npos) {
            return false;
        }
        const std::string call(rel.substr(0, call_end));
        return rel != call_request(call) && rel != driver_result(call_output_dir(call));
    }
    return rel.starts_with(join(invocation_profile_dir(id), "")) || rel == invocation_monitor(id);
}

}  // namespace cko::store::layout
