// `cko driver run`'s rules: the options become a driver, a request and limits, or the first wrong
// option is refused with its field named.
#include "cko/driver/call_builder.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::driver {
namespace {

CallOptions smoke_options() {
    CallOptions o;
    o.argv = {"python3", "driver.py"};
    o.capabilities = {"single_subject"};
    o.case_file = "case.json";
    o.reference = "kernel.cu";
    return o;
}

// The field an invalid option is refused for; "" if it was accepted.
std::string refused_field(const CallOptions& o) {
    const test::CaughtError e = test::error_thrown_by([&] { (void)build_call(o); });
    if (!e) {
        return "";
    }
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument) << e->what();
    return e->details().value("field", std::string("?"));
}

TEST(DriverCallBuilder, ASmokeCallMeasuresTheReferenceAlone) {
    CallOptions o = smoke_options();
    o.env_allow = {"MY_VAR"};
    o.constraints = {"peak_mem:byte"};
    o.correctness_metrics = {"max_abs_err"};
    o.command_timeout_s = 1.5;
    const BuiltCall call = build_call(o);
    EXPECT_EQ(call.driver.argv, o.argv);
    EXPECT_TRUE(call.driver.can("single_subject"));
    EXPECT_EQ(call.driver.env_allow.front(), "PATH");  // the defaults stay, the extra is added
    EXPECT_EQ(call.driver.env_allow.back(), "MY_VAR");
    const Request& r = call.request;
    EXPECT_EQ(r.mode, Mode::smoke);
    EXPECT_EQ(r.case_id, "main");
    EXPECT_EQ(r.case_path, "case.json");
    ASSERT_EQ(r.subjects.size(), 1u);
    EXPECT_EQ(r.subjects[0].role, "reference");
    EXPECT_EQ(r.subjects[0].label, "original");
    EXPECT_EQ(r.subjects[0].path, "kernel.cu");
    EXPECT_EQ(r.order, std::vector<std::string>{"reference"});
    EXPECT_EQ(r.samples, 5);
    EXPECT_EQ(r.to_json()["samples"], 2);  // smoke always asks for 2
    EXPECT_EQ(r.primary.name, "latency_us");
    EXPECT_EQ(r.primary.unit, "us");
    ASSERT_EQ(r.constraints.size(), 1u);
    EXPECT_EQ(r.constraints[0].name, "peak_mem");
    EXPECT_EQ(r.constraints[0].unit, "byte");
    EXPECT_EQ(r.correctness_metrics, std::vector<std::string>{"max_abs_err"});
    EXPECT_EQ(call.limits.command, std::chrono::milliseconds(1500));
    EXPECT_EQ(call.limits.operation, std::chrono::hours(1));
    EXPECT_EQ(call.limits.resource_wait, std::chrono::minutes(2));
    EXPECT_EQ(call.limits.cleanup, std::chrono::seconds(10));
}

// Paired: both subjects, in the order the seed's parity picks.
TEST(DriverCallBuilder, APairedCallOrdersItsSubjectsByTheSeedsParity) {
    CallOptions o = smoke_options();
    o.mode = "paired";
    o.candidate = "candidate.cu";
    o.capabilities = {"paired_in_process"};
    o.seed = 4;
    const BuiltCall even = build_call(o);
    ASSERT_EQ(even.request.subjects.size(), 2u);
    EXPECT_EQ(even.request.subjects[1].role, "candidate");
    EXPECT_EQ(even.request.subjects[1].label, "candidate");
    EXPECT_EQ(even.request.subjects[1].path, "candidate.cu");
    EXPECT_EQ(even.request.order, (std::vector<std::string>{"reference", "candidate"}));
    EXPECT_EQ(even.request.seed, 4u);
    o.seed = 7;
    EXPECT_EQ(build_call(o).request.order, (std::vector<std::string>{"candidate", "reference"}));
}

TEST(DriverCallBuilder, APairedCallNeedsACandidateAndADriverThatPairs) {
    CallOptions o = smoke_options();
    o.mode = "paired";
    o.capabilities = {"paired_in_process"};
    EXPECT_EQ(refused_field(o), "candidate");
    o.candidate = "candidate.cu";
    o.capabilities = {"single_subject"};
    EXPECT_EQ(refused_field(o), "capability");
    o.mode = "single";
    EXPECT_EQ(refused_field(o), "candidate");  // only paired takes one
}

TEST(DriverCallBuilder, EachWrongOptionIsRefusedWithItsField) {
    const auto with = [](auto change) {
        CallOptions o = smoke_options();
        change(o);
        return refused_field(o);
    };
    EXPECT_EQ(with([](CallOptions&) {}), "");
    EXPECT_EQ(with([](CallOptions& o) { o.argv.clear(); }), "argv");
    EXPECT_EQ(with([](CallOptions& o) { o.mode = "double"; }), "mode");
    EXPECT_EQ(with([](CallOptions& o) { o.case_file.clear(); }), "case_file");
    EXPECT_EQ(with([](CallOptions& o) { o.reference.clear(); }), "reference");
    EXPECT_EQ(with([](CallOptions& o) { o.samples = 0; }), "samples");
    EXPECT_EQ(with([](CallOptions& o) { o.samples = 100001; }), "samples");
    EXPECT_EQ(with([](CallOptions& o) { o.samples = 100000; }), "");
    EXPECT_EQ(with([](CallOptions& o) { o.primary = "latency_us"; }), "--primary");
    EXPECT_EQ(with([](CallOptions& o) { o.primary = ":us"; }), "--primary");
    EXPECT_EQ(with([](CallOptions& o) { o.constraints = {"mem:"}; }), "--constraint");
    EXPECT_EQ(with([](CallOptions& o) { o.command_timeout_s = 0; }), "--command-timeout");
    EXPECT_EQ(with([](CallOptions& o) { o.operation_timeout_s = -1; }), "--operation-timeout");
    EXPECT_EQ(with([](CallOptions& o) { o.resource_wait_s = 0; }), "--resource-wait");
    EXPECT_EQ(with([](CallOptions& o) { o.cleanup_timeout_s = 0; }), "--cleanup-timeout");
    // The first wrong option is the one named: the argv before the mode, the mode before the rest.
    EXPECT_EQ(with([](CallOptions& o) {
                  o.argv.clear();
                  o.mode = "double";
              }),
              "argv");
    EXPECT_EQ(with([](CallOptions& o) {
                  o.mode = "double";
                  o.samples = 0;
              }),
              "mode");
}

TEST(DriverCallBuilder, AnUnsafeCaseIdIsRefused) {
    CallOptions o = smoke_options();
    o.case_id = "..";
    if (const auto e = EXPECT_CKO_ERROR((void)build_call(o), ErrorCode::unsafe_path)) {
        EXPECT_EQ(e->details()["field"], "--case");
    }
}

}  // namespace
}  // namespace cko::driver
