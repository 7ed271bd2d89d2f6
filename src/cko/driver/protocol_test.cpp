// Result validation: every way a driver can get the contract wrong has its own error code and path.
#include "cko/driver/protocol.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::driver {
namespace {

Request paired_request() {
    Request r;
    r.mode = Mode::paired;
    r.case_id = "main";
    r.subjects = {{"reference", "original", "/r", std::string(64, 'a')},
                  {"candidate", "exp-1", "/c", std::string(64, 'b')}};
    r.order = {"candidate", "reference"};
    r.samples = 3;
    r.primary = {"latency_us", "us"};
    r.constraints = {{"peak_mem_bytes", "byte"}};
    r.correctness_metrics = {"max_rel_err"};
    return r;
}

Json subject(const std::string& role) {
    return Json{
        {"role", role},
        {"correctness", {{"status", "passed"}, {"metrics", {{"max_rel_err", 0.0}}}}},
        {"measurements",
         {{"primary", {{"name", "latency_us"}, {"unit", "us"}, {"samples", {745.1, 744.9, 745.3}}}},
          {"constraints",
           Json::array(
               {{{"name", "peak_mem_bytes"}, {"unit", "byte"}, {"samples", {1, 1, 1}}}})}}}};
}

Json good_result() {
    return Json{{"format_version", "cko/driver-result-v1"},
                {"subjects", {subject("reference"), subject("candidate")}},
                {"environment", {{"gpu_uuids", {"GPU-x"}}}},
                {"artifacts", {"trace.json"}}};
}

Error error_of(const Json& result, std::vector<std::string> files = {"result.json", "trace.json"}) {
    SCOPED_TRACE(result.dump());
    return *EXPECT_ANY_CKO_ERROR((void)validate_result(paired_request(), result, files));
}

// What each call is given is added to the request, and nothing else changes.
TEST(DriverRequest, ACallsRequestAddsItsOutputDirectoryResultPathAndDeadline) {
    const Json j = call_request_json(paired_request(), "/art/invocations/inv-1/driver/0001/out",
                                     1'700'000'000'250'000'000);
    EXPECT_EQ(j["output_dir"], "/art/invocations/inv-1/driver/0001/out");
    EXPECT_EQ(j["result_path"], "/art/invocations/inv-1/driver/0001/out/result.json");
    EXPECT_DOUBLE_EQ(j["deadline_unix_s"].get<double>(), 1'700'000'000.25);
    Json rest = j;
    for (const char* key : {"output_dir", "result_path", "deadline_unix_s"}) {
        rest.erase(key);
    }
    EXPECT_EQ(rest, paired_request().to_json());
    EXPECT_FALSE(paired_request().to_json().contains("output_dir"));
}

TEST(DriverRequest, ADriverProcessIsToldItsRequestFileAfterItsOwnArguments) {
    EXPECT_EQ(call_argv({"python3", "driver.py"}, "/art/driver/0001/request.json"),
              (std::vector<std::string>{"python3", "driver.py", "--request",
                                        "/art/driver/0001/request.json"}));
}

TEST(DriverResult, AValidPairedResultIsRead) {
    const Result r =
        validate_result(paired_request(), good_result(), {"result.json", "trace.json"});
    ASSERT_EQ(r.subjects.size(), 2u);
    EXPECT_EQ(r.subject("candidate").primary[2], 745.3);
    EXPECT_EQ(r.subject("reference").constraints.at("peak_mem_bytes").size(), 3u);
    EXPECT_EQ(r.subject("reference").status, CorrectnessStatus::passed);
}

// v2: each subject says which snapshot its samples were measured on.
Json v2_result() {
    Json j = good_result();
    j["format_version"] = "cko/driver-result-v2";
    j["subjects"][0]["loaded_digest"] = std::string(64, 'a');
    j["subjects"][1]["loaded_digest"] = std::string(64, 'b');
    return j;
}

TEST(DriverResult, AV2ResultWithEachSubjectsDigestIsRead) {
    const Result r = validate_result(paired_request(), v2_result(), {"result.json", "trace.json"});
    EXPECT_EQ(r.subject("reference").loaded_digest, std::string(64, 'a'));
    EXPECT_EQ(r.subject("candidate").loaded_digest, std::string(64, 'b'));
}

TEST(DriverResult, SwappedRolesAreRefused) {
    // The driver loaded both subjects but reported the reference's samples as the candidate's
    // (and the other way round): each entry carries the digest of the subject it measured.
    Json j = v2_result();
    std::swap(j["subjects"][0]["role"], j["subjects"][1]["role"]);
    Error e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::role_mismatch);
    EXPECT_EQ(e.details()["role"], "reference");
    EXPECT_NE(std::string(e.what()).find("measured on the candidate (exp-1)"), std::string::npos)
        << e.what();
    // The same subject reported twice (the candidate's entry holds the reference's samples).
    j = v2_result();
    j["subjects"][1]["loaded_digest"] = std::string(64, 'a');
    e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::role_mismatch);
    EXPECT_EQ(e.details()["path"], "$.subjects[1].loaded_digest");
    // A v1 result that names a digest is checked too; a digest of no subject is refused.
    j = good_result();
    j["subjects"][0]["loaded_digest"] = std::string(64, 'c');
    e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::role_mismatch);
    EXPECT_NE(std::string(e.what()).find("no subject of the request"), std::string::npos);
}

TEST(DriverResult, AV2ResultMustNameEachSubjectsDigest) {
    Json j = v2_result();
    j["subjects"][1].erase("loaded_digest");
    const Error e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::invalid_driver_result);
    EXPECT_EQ(e.details()["path"], "$.subjects[1].loaded_digest");
    // v1 without digests is still read (older drivers; PROTOCOL.md).
    EXPECT_NO_THROW(
        (void)validate_result(paired_request(), good_result(), {"result.json", "trace.json"}));
}

// A v1 result without loaded_digest is read (PROTOCOL.md promises v1), but nothing ties its samples
// to the roles whose digests the request named: those roles are listed for the note the call and
// the comparison record. (Before: believed with no word, whatever the roles.)
TEST(DriverResult, AV1ResultWithoutDigestsIsReadWithItsRolesUnchecked) {
    Json j = good_result();
    std::swap(j["subjects"][0]["role"], j["subjects"][1]["role"]);  // a swap v1 cannot show
    const Result r = validate_result(paired_request(), j, {"result.json", "trace.json"});
    EXPECT_EQ(r.unchecked_roles, (std::vector<std::string>{"reference", "candidate"}));
    const std::string note = roles_unchecked_note(r.unchecked_roles);
    EXPECT_TRUE(note.starts_with("roles unchecked: the driver reported no loaded digest")) << note;
    EXPECT_NE(note.find("cko/driver-result-v2"), std::string::npos) << note;
    // A v1 result that names one digest leaves only the other role unchecked.
    j = good_result();
    j["subjects"][1]["loaded_digest"] = std::string(64, 'b');
    EXPECT_EQ(validate_result(paired_request(), j, {"result.json", "trace.json"}).unchecked_roles,
              (std::vector<std::string>{"reference"}));
    // v2, or a request that names no digest (nothing to check against): nothing unchecked to say.
    EXPECT_TRUE(validate_result(paired_request(), v2_result(), {"result.json", "trace.json"})
                    .unchecked_roles.empty());
    Request no_digests = paired_request();
    for (auto& s : no_digests.subjects) {
        s.digest.clear();
    }
    EXPECT_TRUE(validate_result(no_digests, good_result(), {"result.json", "trace.json"})
                    .unchecked_roles.empty());
}

TEST(DriverResult, TheRequestNamesEachSubjectsDigest) {
    const Json j = paired_request().to_json();
    EXPECT_EQ(j["subjects"][0]["digest"], std::string(64, 'a'));
    EXPECT_EQ(j["subjects"][1]["digest"], std::string(64, 'b'));
}

TEST(DriverResult, WrongSampleCount) {
    Json j = good_result();
    j["subjects"][1]["measurements"]["primary"]["samples"].push_back(1.0);
    const Error e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::sample_count_mismatch);
    EXPECT_EQ(e.details()["path"], "$.subjects[1].measurements.primary.samples");
}

TEST(DriverResult, WrongMetricNameAndUnit) {
    Json j = good_result();
    j["subjects"][0]["measurements"]["primary"]["name"] = "latency";
    EXPECT_EQ(error_of(j).code(), ErrorCode::metric_name_mismatch);
    j = good_result();
    j["subjects"][0]["measurements"]["primary"]["unit"] = "ms";
    EXPECT_EQ(error_of(j).code(), ErrorCode::unit_mismatch);
}

TEST(DriverResult, NonPositiveSample) {
    Json j = good_result();
    j["subjects"][0]["measurements"]["primary"]["samples"][1] = 0;
    const Error e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::non_positive_sample);
    EXPECT_EQ(e.details()["path"], "$.subjects[0].measurements.primary.samples[1]");
}

TEST(DriverResult, BooleanIsNotANumber) {
    Json j = good_result();
    j["subjects"][0]["measurements"]["primary"]["samples"][0] = true;
    EXPECT_EQ(error_of(j).code(), ErrorCode::invalid_driver_result);
}

TEST(DriverResult, ConstraintSetMustMatch) {
    Json j = good_result();
    j["subjects"][0]["measurements"]["constraints"] = Json::array();
    EXPECT_EQ(error_of(j).code(), ErrorCode::constraint_set_mismatch);
    j = good_result();
    j["subjects"][0]["measurements"]["constraints"].push_back(
        Json{{"name", "power_w"}, {"unit", "W"}, {"samples", {1, 1, 1}}});
    EXPECT_EQ(error_of(j).code(), ErrorCode::constraint_set_mismatch);
}

TEST(DriverResult, SubjectsMustMatchTheRequest) {
    Json j = good_result();
    j["subjects"].erase(1);
    EXPECT_EQ(error_of(j).code(), ErrorCode::subject_mismatch);
    j = good_result();
    j["subjects"][1]["role"] = "reference";
    EXPECT_EQ(error_of(j).code(), ErrorCode::subject_mismatch);
}

// cost.workload_s: what the SDK measured of the workload; optional, closed, finite seconds >= 0.
TEST(DriverResult, TheWorkloadsCostIsReadWhenGivenAndCheckedStrictly) {
    Json j = v2_result();
    EXPECT_FALSE(validate_result(paired_request(), j, {"result.json", "trace.json"}).workload_s);
    j["cost"] = Json{{"workload_s", 0.0125}};
    EXPECT_EQ(validate_result(paired_request(), j, {"result.json", "trace.json"}).workload_s,
              0.0125);
    j["cost"] = Json{{"workload_s", -1.0}};
    EXPECT_EQ(error_of(j).details()["path"], "$.cost.workload_s");
    j["cost"] = Json{{"workload_s", "1"}};
    EXPECT_EQ(error_of(j).details()["path"], "$.cost.workload_s");
    j["cost"] = Json{{"workload_s", 1.0}, {"sdk_s", 1.0}};
    EXPECT_EQ(error_of(j).details()["path"], "$.cost.sdk_s");
    j["cost"] = Json::object();
    EXPECT_EQ(error_of(j).details()["path"], "$.cost.workload_s");
}

TEST(DriverResult, ClosedObjectsRejectUnknownKeys) {
    Json j = good_result();
    j["subjects"][0]["note"] = "hi";
    const Error e = error_of(j);
    EXPECT_EQ(e.code(), ErrorCode::invalid_driver_result);
    EXPECT_EQ(e.details()["path"], "$.subjects[0].note");
}

TEST(DriverResult, CorrectnessMetricRequiredUnlessStatusIsError) {
    Json j = good_result();
    j["subjects"][0]["correctness"]["metrics"] = Json::object();
    EXPECT_EQ(error_of(j).details()["path"], "$.subjects[0].correctness.metrics.max_rel_err");
    j["subjects"][0]["correctness"]["status"] = "error";
    EXPECT_NO_THROW((void)validate_result(paired_request(), j, {"result.json", "trace.json"}));
    j["subjects"][0]["correctness"]["status"] = "ok";
    EXPECT_EQ(error_of(j).code(), ErrorCode::invalid_driver_result);
}

TEST(DriverResult, UndeclaredOutputFileAndMissingArtifact) {
    const Error extra = error_of(good_result(), {"result.json", "trace.json", "core.1234"});
    EXPECT_EQ(extra.code(), ErrorCode::undeclared_output);
    EXPECT_EQ(extra.details()["file"], "core.1234");
    EXPECT_EQ(error_of(good_result(), {"result.json"}).code(), ErrorCode::invalid_driver_result);
}

TEST(DriverResult, WrongFormatVersion) {
    Json j = good_result();
    j["format_version"] = "cuda-kernel-optimizer/driver-result-v2";
    EXPECT_EQ(error_of(j).details()["path"], "$.format_version");
}

TEST(DriverRequest, SmokeAlwaysAsksForTwoSamples) {
    Request r = paired_request();
    r.mode = Mode::smoke;
    r.samples = 50;
    const Json j = r.to_json();
    EXPECT_EQ(j["samples"], 2);
    EXPECT_EQ(j["mode"], "smoke");
    EXPECT_EQ(j["format_version"], "cko/driver-request-v1");
    EXPECT_EQ(j["objective"]["constraints"][0]["unit"], "byte");
}

}  // namespace
}  // namespace cko::driver

namespace cko::driver {
namespace {

TEST(DriverResult, AnErroredSubjectMayHaveEmptySeriesButNotAPartialOne) {
    Json j = good_result();
    j["subjects"][1]["correctness"] = Json{{"status", "error"}, {"metrics", Json::object()}};
    j["subjects"][1]["measurements"]["primary"]["samples"] = Json::array();
    j["subjects"][1]["measurements"]["constraints"][0]["samples"] = Json::array();
    const Result r = validate_result(paired_request(), j, {"result.json", "trace.json"});
    EXPECT_EQ(r.subject("candidate").status, CorrectnessStatus::error);
    EXPECT_TRUE(r.subject("candidate").primary.empty());
    j["subjects"][1]["measurements"]["primary"]["samples"] = Json::array({1.0});
    EXPECT_EQ(error_of(j).code(), ErrorCode::sample_count_mismatch);
    // A subject that passed must still have every sample.
    j = good_result();
    j["subjects"][0]["measurements"]["primary"]["samples"] = Json::array();
    EXPECT_EQ(error_of(j).code(), ErrorCode::sample_count_mismatch);
}

TEST(DriverResult, ArtifactsMayLieInSubfoldersButNotOutside) {
    Json j = good_result();
    j["artifacts"] = {"traces/t.json"};
    EXPECT_NO_THROW((void)validate_result(paired_request(), j, {"result.json", "traces/t.json"}));
    j["artifacts"] = {"../t.json"};
    EXPECT_EQ(error_of(j, {"result.json"}).details()["path"], "$.artifacts[0]");
}

}  // namespace
}  // namespace cko::driver
