// collect: a fake ncu stands in for the real one (the GPU machine runs the real one).
#include "cko/profile/ncu/ncu_collect.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace cko::profile::ncu {
namespace {

namespace fs = std::filesystem;

class FakeNcu : public test::ScratchTest {
protected:
    // Writes the fake ncu: `--version` prints a banner; otherwise `body` runs.
    NcuCollectOptions fake(const std::string& body) {
        const fs::path script = dir_ / "ncu";
        (void)test::write_executable(
            script,
            "#!/bin/sh\n"
            "if [ \"$1\" = --version ]; then\n"
            "  echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
            "  echo 'Version 2025.3.1.0 (build 36398880) (public-release)'\n"
            "  exit 0\n"
            "fi\n"
            "echo \"$@\" > \"$(dirname \"$0\")/args.txt\"\n" +
                body + "\n");
        NcuCollectOptions options;
        options.ncu = script.string();
        options.command = {"./vec", "--n", "4"};
        options.work_dir = dir_;
        return options;
    }
};

TEST_F(FakeNcu, ParsesTheRawExportAndRecordsTheVersionAndCommand) {
    const std::string fixture = fs::absolute("tests/fixtures/ncu/ncu_raw.csv").string();
    const NcuCollectResult r = collect_ncu(fake("cat '" + fixture + "'"));
    EXPECT_EQ(r.report.launches.size(), 7u);
    EXPECT_EQ(r.report.source.tool_version, "2025.3.1.0");
    EXPECT_EQ(r.report.source.dialect, "ncu-csv-raw");
    EXPECT_EQ(r.argv[1], "--csv");
    EXPECT_EQ(r.argv.back(), "4");
    std::string args;
    std::getline(std::ifstream(dir_ / "args.txt"), args);
    EXPECT_EQ(args, "--csv --page raw --print-units base ./vec --n 4");
    EXPECT_TRUE(fs::exists(r.export_path));
}

TEST_F(FakeNcu, CountersNotPermittedIsAFactNotAnError) {
    const std::string fixture =
        fs::absolute("tests/fixtures/ncu/ncu_counters_not_permitted.txt").string();
    const NcuCollectResult r = collect_ncu(fake("cat '" + fixture + "'; exit 1"));
    EXPECT_FALSE(r.report.counters_permitted());
    EXPECT_EQ(r.report.report_facts[0].id, "collection.counters_not_permitted");
    EXPECT_FALSE(r.report.advice.empty());
    EXPECT_EQ(r.report.source.tool_version, "2025.3.1.0");
}

TEST_F(FakeNcu, PermissionErrorOnStderrCountsToo) {
    const NcuCollectResult r =
        collect_ncu(fake("echo '==ERROR== ERR_NVGPUCTRPERM - no permission' >&2; exit 0"));
    EXPECT_FALSE(r.report.counters_permitted());
}

TEST_F(FakeNcu, FailingNcuIsToolFailedWithItsStderr) {
    EXPECT_CKO_ERROR(
        (void)collect_ncu(fake("echo '==ERROR== The application returned an error' >&2; exit 9")),
        ErrorCode::tool_failed, "exit status 9", "application returned an error");
}

TEST_F(FakeNcu, HangingNcuIsKilledAtTheTimeout) {
    NcuCollectOptions options = fake("exec sleep 30");
    options.timeout = std::chrono::milliseconds(300);
    EXPECT_CKO_ERROR((void)collect_ncu(options), ErrorCode::timed_out);
}

TEST_F(FakeNcu, MissingNcuIsSpawnFailed) {
    NcuCollectOptions options = fake("true");
    options.ncu = (dir_ / "no-such-ncu").string();
    EXPECT_CKO_ERROR((void)collect_ncu(options), ErrorCode::spawn_failed);
}

TEST_F(FakeNcu, NoCommandIsInvalidArgument) {
    NcuCollectOptions options = fake("true");
    options.command.clear();
    EXPECT_THROW((void)collect_ncu(options), Error);
}

}  // namespace
}  // namespace cko::profile::ncu
