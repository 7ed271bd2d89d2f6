// The shared step that keeps a verb's parsed document in the store.
#include "cko/verbs/evidence.hpp"

#include "cko/eval/profile_evidence.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"

namespace cko::verbs {

std::vector<Param> evidence_params() {
    return {
        string_param("root", "Keep the parsed document in this artifact root (profiles/<id>.json)"),
        string_param("experiment", "With --root: the experiment the profile is evidence for"),
        string_param("subject", "With --experiment: reference or candidate")};
}

void store_if_asked(const Request& request, const std::string& kind, const Json& sources,
                    Outcome& outcome) {
    const std::string root = request.text("root");
    if (root.empty()) {
        if (!request.text("experiment").empty() || !request.text("subject").empty()) {
            throw Error(ErrorCode::invalid_argument,
                        "--experiment and --subject need --root (the store the profile goes to)",
                        {{"field", "root"}});
        }
        return;
    }
    const store::Store store = store::Store::open(root);
    const store::RecordRef ref = eval::store_profile(
        store, eval::ProfileEvidence{kind, outcome.document, sources, request.text("experiment"),
                                     request.text("subject")});
    outcome.document["stored"] = Json{{"id", ref.id}, {"path", ref.path}, {"sha256", ref.sha256}};
    outcome.text += "stored as " + ref.id + " (" + ref.path + ")\n";
}

}  // namespace cko::verbs
