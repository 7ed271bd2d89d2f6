// The shared step that keeps a verb's parsed document in the store.
#include "cko/verbs/evidence.hpp"

#include "cko/eval/profile_evidence.hpp"
#include "cko/profile/tested_versions.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::verbs {

std::vector<Param> evidence_params() {
    return {
        string_param("root", "Keep the parsed document in this artifact root (profiles/<id>.json)"),
        string_param("experiment", "With --root: the experiment the profile is evidence for"),
        string_param("subject", "With --experiment: reference or candidate"), foreign_param(),
        question_param()};
}

Param question_param() {
    return string_param("question",
                        "The one question this profile is meant to answer (kept in the record; "
                        "history and show print it)");
}

Param foreign_param() {
    return flag_param("foreign",
                      "With --root: keep it although its device or tool version does not match "
                      "the Target (foreign evidence: recorded with the reasons, never citable)");
}

std::vector<Param> with_evidence_params(std::vector<Param> params) {
    for (Param& p : evidence_params()) {
        params.push_back(std::move(p));
    }
    return params;
}

void store_if_asked(const Request& request, const std::string& kind, const Json& sources,
                    Outcome& outcome) {
    const std::string root = request.text("root");
    if (root.empty()) {
        if (!request.text("experiment").empty() || !request.text("subject").empty() ||
            request.flag("foreign") || !request.text("question").empty()) {
            throw Error(ErrorCode::invalid_argument,
                        "--experiment, --subject, --foreign and --question need --root (the store "
                        "the profile goes to)",
                        {{"field", "root"}});
        }
        return;
    }
    const store::Store store = store::Store::open(root);
    eval::ProfileEvidence evidence{
        kind,  outcome.document, sources, request.text("experiment"), request.text("subject"),
        Json()};
    evidence.foreign = request.flag("foreign");
    evidence.question = request.text("question");
    const eval::KeptProfile kept = eval::keep_profile(store, evidence);
    const store::RecordRef& ref = kept.ref;
    outcome.document["stored"] = Json{{"id", ref.id}, {"path", ref.path}, {"sha256", ref.sha256}};
    for (const std::string& note : kept.notes) {
        outcome.text += "note: " + note + "\n";
    }
    if (kept.foreign) {
        outcome.document["stored"]["foreign"] = true;
        outcome.document["stored"]["foreign_reasons"] = kept.foreign_reasons;
        outcome.text += fmt::format("kept as foreign evidence (no claim may cite it): {}\n",
                                    fmt::join(kept.foreign_reasons, "; "));
    }
    outcome.text += "stored as " + ref.id + " (" + ref.path + ")\n";
    if (!evidence.question.empty()) {
        outcome.document["stored"]["question"] = evidence.question;
        outcome.text += "  answering: " + evidence.question + "\n";
    }
}

void add_version_notes(std::vector<std::string>& notes, const profile::Source& source) {
    for (std::string& note : profile::version_notes(source)) {
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
            notes.push_back(std::move(note));
        }
    }
}

void take_stated_version(profile::Source& source, const std::string& given,
                         const std::string& path) {
    if (given.empty() || given == source.tool_version) {
        return;
    }
    if (!source.tool_version.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--tool-version {}: {} states {} {}; drop --tool-version", given,
                                path, profile::tool_display_name(source.tool), source.tool_version),
                    {{"field", "tool_version"}, {"stated", source.tool_version}});
    }
    source.tool_version = given;
}

Json source_with_path(const profile::Source& source, const std::string& path) {
    Json s = profile::source_to_json(source);
    s["path"] = path;
    return s;
}

std::vector<Param> collect_params() {
    return {string_param("experiment", "The experiment whose subject is profiled"),
            string_param("subject", "reference (the experiment's base) or candidate"),
            string_param("case", "The case of the one driver call (default: the Target's first)"),
            override_failure_param(),
            override_falsified_param(),
            question_param()};
}

Outcome collect_into_store(const Request& request, Context& context, eval::ProfileTool profiler,
                           const eval::ProfileImport& importer) {
    const std::string tool(eval::profile_tool_name(profiler));
    const store::Store store = store::Store::open(request.text("root"));
    const eval::Target target = eval::Target::open(store);
    eval::ProfileCollectOptions o;
    o.tool = profiler;
    o.experiment_id = request.text("experiment");
    o.subject = eval::parse_profile_subject(request.text("subject"));
    o.case_id = request.text("case");
    o.override_failure = request.text("override_failure");
    o.override_falsified = request.text("override_falsified");
    o.question = request.text("question");
    if (profiler != eval::ProfileTool::torch) {
        o.program = request.text(tool);
        o.tool_args = request.list(tool + "_arg");
    }
    o.cancel = context.cancel;
    o.progress = [&context](const Progress& step) { context.report_progress(step); };
    const eval::ProfileCollectOutcome c = eval::collect_profile(
        target, o, importer,
        [&context](const std::string& id) { context.announce_invocation(id); });
    context.report_progress("");
    const Json& k = c.collection;
    Outcome out{
        fmt::format("collected {} {} of {} ({}) on case {}: invocation {} call {}\n", tool,
                    k.value("tool_version", "").empty() ? std::string("(version not stated)")
                                                        : k.value("tool_version", ""),
                    eval::profile_subject_name(o.subject), k.value("subject_label", ""),
                    k.value("case_id", ""), c.invocation_id, k.value("call", 0)),
        c.imported.document,
        0,
        {}};
    if (context.want_text) {
        out.text += c.imported.text;
        if (!out.text.empty() && out.text.back() != '\n') {
            out.text += '\n';
        }
        for (const auto& note : k.value("contamination", Json::array())) {
            out.text +=
                "note: the GPU was not ours alone during the call: " + note.get<std::string>() +
                "\n";
        }
        if (!k.value("subject_correct", false)) {
            out.text += "note: the subject did not pass its correctness rule in this call\n";
        }
        out.text += "stored as " + c.stored.id + " (" + c.stored.path + ")\n";
        if (!o.question.empty()) {
            out.text += "  answering: " + o.question + "\n";
        }
    }
    out.document["stored"] = Json{{"id", c.stored.id},
                                  {"path", c.stored.path},
                                  {"sha256", c.stored.sha256},
                                  {"collection", c.collection}};
    if (!o.question.empty()) {
        out.document["stored"]["question"] = o.question;
    }
    return out;
}

}  // namespace cko::verbs
