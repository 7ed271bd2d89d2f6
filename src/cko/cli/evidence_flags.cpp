// The shared glue that keeps a verb's parsed document in the store.
#include "cko/cli/evidence_flags.hpp"

#include "cko/eval/profile_evidence.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"

namespace cko::cli {

void add_evidence_flags(CLI::App* verb, EvidenceFlags& flags) {
    verb->add_option("--root", flags.root,
                     "Keep the parsed document in this artifact root (profiles/<id>.json)");
    verb->add_option("--experiment", flags.experiment,
                     "With --root: the experiment the profile is evidence for");
    verb->add_option("--subject", flags.subject, "With --experiment: reference or candidate");
}

void store_if_asked(const EvidenceFlags& flags, const std::string& kind, const Json& sources,
                    CommandResult& result) {
    if (flags.root.empty()) {
        if (!flags.experiment.empty() || !flags.subject.empty()) {
            throw Error(ErrorCode::invalid_argument,
                        "--experiment and --subject need --root (the store the profile goes to)",
                        {{"field", "root"}});
        }
        return;
    }
    const store::Store store = store::Store::open(flags.root);
    const store::RecordRef ref = eval::store_profile(
        store, eval::ProfileEvidence{kind, result.json, sources, flags.experiment, flags.subject});
    result.json["stored"] = Json{{"id", ref.id}, {"path", ref.path}, {"sha256", ref.sha256}};
    result.text += "stored as " + ref.id + " (" + ref.path + ")\n";
}

}  // namespace cko::cli
