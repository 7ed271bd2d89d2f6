// Profiles kept as evidence: a parsed profiler document (or a map) stored content-addressed.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

inline constexpr const char* kProfileRecordFormat = "cko/profile-record-v1";

struct ProfileEvidence {
    std::string kind;        // "torch", "nsys", "ncu", "map"
    Json document;           // the parsed document the verb printed with --json
    Json sources;            // [{path, report_sha256, tool, tool_version, dialect, parser_version}]
    std::string experiment;  // "" when not tied to an experiment
    std::string subject;     // "reference" or "candidate" with an experiment, else ""
    // Set by `cko profile collect` (eval/profile_collect.hpp): how the profile was taken, the
    // invocation and call, case, tool identity, the subject's snapshot; null for an imported file.
    Json collection;
    // --foreign: keep it although its identity does not match the Target's (or whatever it is),
    // recorded `foreign: true` with the reasons; no claim may cite it.
    bool foreign = false;
    // The one question the profile is meant to answer (--question): kept as the record's
    // `question`; "" when none was given (and in records of older cko versions).
    std::string question = {};
};

// What keep_profile stored: the record, and whether (and why) it is foreign evidence.
struct KeptProfile {
    store::RecordRef ref;
    bool foreign = false;
    std::vector<std::string> foreign_reasons;
    std::vector<std::string> notes;  // what of its identity could not be compared, and why
};

// Writes profiles/<id>.json, id = content_id("profile", {kind, sources' digests, document,
// experiment, subject, environment, identity, foreign, question}), so the same evidence stored
// twice for the same question is one record (the second call returns the first's ref). The Target's
// environment identity (target.json's `environment`, by digest) and Target id are bound in, and the
// export's identity is compared with the Target's (eval/profile_identity.hpp): bound to an
// experiment, a problem refuses it (environment_mismatch: a device or tool the Target does not
// have; tool_version_unknown: a version not stated or outside the tested ranges) unless `foreign`;
// kept without an experiment, a problem makes it foreign evidence. Throws not_found (the root has
// no frozen Target; the experiment does not exist), invalid_argument (subject other than reference
// or candidate; subject without experiment or the reverse).
KeptProfile keep_profile(const store::Store& store, const ProfileEvidence& evidence);
// keep_profile's record.
store::RecordRef store_profile(const store::Store& store, const ProfileEvidence& evidence);

// Refuses (invalid_argument naming `field`) a stored profile kept as foreign evidence: no claim,
// falsify record or gain bound may cite it.
void refuse_foreign_citation(const Json& profile, const std::string& field);

// The stored profiles, each {id, kind, created_unix_s, experiment_id, subject, sources, foreign},
// `question` when it has one and, for a collected one, {invocation_id, case_id, tool,
// tool_version}.
[[nodiscard]] std::vector<Json> list_profiles(const store::Store& store);

// Reads profiles/<id>.json (not_found naming the id otherwise).
[[nodiscard]] Json load_profile(const store::Store& store, const std::string& id);

}  // namespace cko::eval
