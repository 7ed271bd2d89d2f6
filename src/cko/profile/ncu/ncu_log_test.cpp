// NCU output that profiled no kernel says so in NCU's words; Latin-1 names are repaired and noted.
#include "cko/profile/ncu/ncu_csv.hpp"

#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::profile::ncu {
namespace {

Error log_error_of(std::string_view text) {
    return *EXPECT_ANY_CKO_ERROR((void)parse_ncu_csv(text));
}

TEST(NcuLog, ALogWithoutKernelsQuotesTheNcuError) {
    const Error e = log_error_of(
        read_file_capped("tests/fixtures/ncu/ncu_no_kernels.txt", std::uint64_t{1} << 20));
    EXPECT_EQ(e.code(), ErrorCode::empty_input);
    const std::string message = e.what();
    EXPECT_NE(message.find("no profiled kernel"), std::string::npos) << message;
    EXPECT_NE(
        message.find("NCU said: \"==ERROR== Failed to profile \"gemm_kernel\" in process 5151\""),
        std::string::npos)
        << message;
    EXPECT_EQ(message.find("--page"), std::string::npos) << "suggests a re-export: " << message;
    EXPECT_EQ(e.details()["ncu_warning"], "==WARNING== No kernels were profiled.");
}

TEST(NcuLog, OnlyProfLinesSayNothingWasProfiled) {
    const Error e = log_error_of(
        "==PROF== Connected to process 7 (/bin/app)\n"
        "==PROF== Disconnected from process 7\n");
    EXPECT_EQ(e.code(), ErrorCode::empty_input);
    EXPECT_NE(std::string(e.what()).find("--kernel-name"), std::string::npos) << e.what();
}

TEST(NcuLog, ProgramOutputWithoutCsvStillAsksForACsvExport) {
    EXPECT_EQ(log_error_of("==PROF== Connected to process 1\nhello\n").code(),
              ErrorCode::unsupported_format);
}

TEST(NcuLog, Latin1NamesAreRepairedAndNoted) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_details_latin1.csv");
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0].scope.kernel,
              "scale_\xEF\xBF\xBDnaive(const float *, float *, float, int)");
    EXPECT_EQ(r.launches[0].process_name,
              "v\xEF\xBF\xBD"
              "c");
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("invalid UTF-8"), std::string::npos);
    EXPECT_NE(r.launches[0].find("duration"), nullptr);
    std::string text;
    ASSERT_NO_THROW(text = report_to_json(r).dump());
    EXPECT_TRUE(is_valid_utf8(text));
}

}  // namespace
}  // namespace cko::profile::ncu
