// Profile records: one content-addressed file per parsed document, bound to the Target's
// environment and checked against its identity.
#include "cko/eval/profile_evidence.hpp"

#include "cko/eval/experiment.hpp"
#include "cko/eval/profile_identity.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace cko::eval {

namespace {

void check_binding(const store::Store& store, const ProfileEvidence& evidence) {
    if (!store.exists(store::layout::kTarget)) {
        throw Error(ErrorCode::not_found,
                    store.root().string() +
                        " has no frozen Target: run `cko target freeze` first, or drop --root",
                    {{"field", "root"}});
    }
    if (evidence.experiment.empty() != evidence.subject.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--experiment and --subject go together: name both (subject reference or "
                    "candidate) or neither",
                    {{"field", evidence.experiment.empty() ? "experiment" : "subject"}});
    }
    if (!evidence.subject.empty() && evidence.subject != "reference" &&
        evidence.subject != "candidate") {
        throw Error(ErrorCode::invalid_argument,
                    "--subject is '" + evidence.subject + "'; use reference or candidate",
                    {{"field", "subject"}});
    }
    if (!evidence.experiment.empty()) {
        (void)load_experiment(store, evidence.experiment);  // not_found when it does not exist
    }
}

// The identity rule: bound to an experiment, a problem refuses unless --foreign; kept without
// one, a problem makes the record foreign. Returns {foreign, reasons}.
std::pair<bool, std::vector<std::string>> foreign_verdict(const ProfileEvidence& evidence,
                                                          const ProfileIdentity& identity) {
    if (!identity.problems.empty() && !evidence.experiment.empty() && !evidence.foreign) {
        throw identity_refusal(identity.problems);
    }
    std::vector<std::string> reasons;
    for (const auto& p : identity.problems) {
        reasons.push_back(p.what);
    }
    if (evidence.foreign && reasons.empty()) {
        reasons.emplace_back("kept as foreign evidence on request (--foreign)");
    }
    return {!reasons.empty(), reasons};
}

}  // namespace

KeptProfile keep_profile(const store::Store& store, const ProfileEvidence& evidence) {
    check_binding(store, evidence);
    require_free_text(evidence.question, "question");
    const store::TargetRecord target = store::read_target_record(store);
    ProfileIdentity identity = read_profile_identity(evidence.kind, evidence.document,
                                                     evidence.sources, evidence.collection);
    compare_with_target(identity, target, !evidence.collection.is_null());
    auto [foreign, reasons] = foreign_verdict(evidence, identity);
    const Json& environment = target.environment;
    Json content{
        {"kind", evidence.kind},
        {"sources", evidence.sources},
        {"document", evidence.document},
        {"experiment_id", evidence.experiment.empty() ? Json() : Json(evidence.experiment)},
        {"subject", evidence.subject.empty() ? Json() : Json(evidence.subject)},
        {"target", target.id},
        {"environment_sha256", sha256_hex(canonical_json(environment))},
        {"identity", identity.to_json(target_devices(target))},
        {"foreign", foreign}};
    if (foreign) {
        content["foreign_reasons"] = reasons;
    }
    if (!evidence.collection.is_null()) {
        content["collection"] = evidence.collection;
    }
    if (!evidence.question.empty()) {
        content["question"] = evidence.question;
    }
    const std::string id = content_id("profile", content);
    const std::string relative = store::layout::profile_record(id);
    KeptProfile kept{{}, foreign, reasons, identity.notes};
    if (store.exists(relative)) {
        kept.ref = store::RecordRef{id, sha256_file_hex(store.path_of(relative)), relative};
        return kept;
    }
    Json record = content;
    record["format_version"] = kProfileRecordFormat;
    record["id"] = id;
    record["created_unix_s"] = unix_seconds_now();
    kept.ref = store.write_record(relative, record);
    return kept;
}

store::RecordRef store_profile(const store::Store& store, const ProfileEvidence& evidence) {
    return keep_profile(store, evidence).ref;
}

void refuse_foreign_citation(const Json& profile, const std::string& field) {
    if (!profile.value("foreign", false)) {
        return;
    }
    std::vector<std::string> reasons;
    for (const auto& r : profile.value("foreign_reasons", Json::array())) {
        reasons.push_back(r.is_string() ? r.get<std::string>() : r.dump());
    }
    const std::string id = profile.value("id", "");
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} is foreign evidence ({}): no claim may cite it; cite a "
                            "profile of this Target's own devices and tested tools",
                            field, id, fmt::join(reasons, "; ")),
                {{"field", field}, {"id", id}, {"foreign_reasons", reasons}});
}

std::vector<Json> list_profiles(const store::Store& store) {
    std::vector<Json> out;
    const std::filesystem::path dir = store.root() / store::layout::kProfilesDir;
    if (!std::filesystem::is_directory(dir)) {
        return out;
    }
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
        const std::string name = f.path().filename().string();
        if (f.path().extension() != ".json" || name.front() == '.') {
            continue;
        }
        const Json r = store.read_record(store::layout::profile_record(f.path().stem().string()));
        Json sources = Json::array();
        for (const auto& s : r.value("sources", Json::array())) {
            sources.push_back(Json{{"path", s.value("path", "")},
                                   {"report_sha256", s.value("report_sha256", "")},
                                   {"tool", s.value("tool", "")}});
        }
        Json entry{{"id", r.value("id", "")},
                   {"kind", r.value("kind", "")},
                   {"created_unix_s", r.value("created_unix_s", std::int64_t{0})},
                   {"experiment_id", r.value("experiment_id", Json())},
                   {"subject", r.value("subject", Json())},
                   {"sources", sources},
                   {"foreign", r.value("foreign", false)}};
        if (r.value("question", Json()).is_string()) {
            entry["question"] = r["question"];
        }
        const Json collection = r.value("collection", Json());
        if (collection.is_object()) {
            entry["collection"] = Json{{"invocation_id", collection.value("invocation_id", "")},
                                       {"case_id", collection.value("case_id", "")},
                                       {"tool", collection.value("tool", "")},
                                       {"tool_version", collection.value("tool_version", "")}};
        }
        out.push_back(std::move(entry));
    }
    std::sort(out.begin(), out.end(), [](const Json& a, const Json& b) {
        return std::pair(a["created_unix_s"].get<std::int64_t>(), a["id"].get<std::string>()) <
               std::pair(b["created_unix_s"].get<std::int64_t>(), b["id"].get<std::string>());
    });
    return out;
}

Json load_profile(const store::Store& store, const std::string& id) {
    const std::string relative = store::layout::profile_record(id);
    if (id.rfind("profile-", 0) != 0 || id.find('/') != std::string::npos ||
        !store.exists(relative)) {
        throw Error(ErrorCode::not_found, "no stored profile '" + id + "' (see `cko history`)",
                    {{"field", "id"}, {"id", id}});
    }
    return store.read_record(relative);
}

}  // namespace cko::eval
