// A profile or map a falsify record cites must be about the claim's experiment: of its candidate's
// or its base's code (whichever experiment it was stored for), of this Target, on one of its cases;
// a profile carries the question it answers into the record that cites it.
#include "cko/eval/cited_evidence.hpp"

#include "cko/eval/decision.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

class CitedEvidenceTest : public testing::FrozenTargetTest {
protected:
    Json falsify_evidence(const std::string& exp, const std::string& profile) const {
        return resolve_evidence(*target_, profile, load_experiment(*store_, exp));
    }
    // A copy of a stored profile record under a new id, edited by `edit` (a hand-made record: a
    // collected profile of another case, another Target's).
    std::string planted_copy(const std::string& id, const std::string& new_id,
                             const std::function<void(Json&)>& edit) const {
        Json record = load_profile(*store_, id);
        record["id"] = new_id;
        edit(record);
        (void)store_->write_record(store::layout::profile_record(new_id), record);
        return new_id;
    }
};

TEST_F(CitedEvidenceTest, AProfileOfTheExperimentsCandidateOrBaseIsCitedWithItsQuestion) {
    const std::string exp = experiment("kernel v1\n");
    const std::string other = experiment("kernel v2\n");
    const std::string candidate =
        testing::stored_map(*store_, exp, "candidate", "is gemm still exposed?");
    Json cited = falsify_evidence(exp, candidate);
    EXPECT_EQ(cited.at("kind"), "map");
    EXPECT_EQ(cited.at("question"), "is gemm still exposed?");
    EXPECT_EQ(load_profile(*store_, candidate).at("question"), "is gemm still exposed?");
    // Stored for another experiment, a profile of the same base (the original) is of this claim's
    // base too.
    cited = falsify_evidence(exp, testing::stored_map(*store_, other, "reference"));
    EXPECT_FALSE(cited.contains("question"));
}

TEST_F(CitedEvidenceTest, AProfileOfAnotherSubjectCaseOrTargetOrOfNoRecordedCodeIsRefused) {
    const std::string exp = experiment("kernel v1\n");
    const std::string other = experiment("kernel v2\n");
    const std::string theirs = testing::stored_map(*store_, other, "candidate");
    const std::string ours = testing::stored_map(*store_, exp, "candidate");
    const std::vector<std::pair<std::string, std::string>> refused{
        {theirs, "measured neither side of this claim"},
        {testing::stored_map(*store_, "", ""), "bound to no experiment"},
        {planted_copy(
             ours, "profile-00000000000000c1",
             [&](Json& r) {
                 r["collection"] = Json{{"case_id", "other"}, {"subject_digest", digest_of(exp)}};
             }),
         "of case 'other', which is not one of the Target's cases [c]"},
        {planted_copy(ours, "profile-00000000000000c2",
                      [](Json& r) { r["target"] = "tgt-0000000000000000"; }),
         "of Target tgt-0000000000000000"}};
    for (const auto& row : refused) {
        const std::string& id = row.first;
        const std::string& says = row.second;
        std::string message;
        EXPECT_EQ(code_of([&] { (void)falsify_evidence(exp, id); }, &message),
                  ErrorCode::invalid_argument)
            << id;
        EXPECT_NE(message.find("evidence: cites"), std::string::npos) << message;
        EXPECT_NE(message.find(says), std::string::npos) << message;
    }
    // The refusal names what the cited profile measured and what the claim compares.
    std::string message;
    (void)code_of([&] { (void)falsify_evidence(exp, theirs); }, &message);
    EXPECT_NE(message.find(other + "'s candidate"), std::string::npos) << message;
    EXPECT_NE(message.find("--experiment " + exp), std::string::npos) << message;
    // Nothing was recorded: the refusal comes before the falsify invocation.
    const std::size_t invocations = run::list_invocations(*store_).size();
    EXPECT_EQ(code_of([&] {
                  (void)record_falsify(*target_, {exp, "falsified", theirs, ""}, nullptr);
              }),
              ErrorCode::invalid_argument);
    EXPECT_EQ(run::list_invocations(*store_).size(), invocations);
}

}  // namespace
}  // namespace cko::eval
