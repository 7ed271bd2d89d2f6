// The Slurm launcher's pure parts: the allow-list, time limits, job names and the srun/sbatch argv.
#include "cko/run/slurm_launcher.hpp"
#include "cko/run/shared_fs.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cko::run {
namespace {
namespace fs = std::filesystem;

bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(SlurmLauncher, ExtraArgsOutsideTheAllowListAreRefusedNamingTheList) {
    EXPECT_FALSE(slurm_extra_arg_problem("--exclusive"));
    EXPECT_FALSE(slurm_extra_arg_problem("--nodelist=node17"));
    for (const char* bad : {"--output=/tmp/x", "--export=ALL", "--time=5", "--job-name=x",
                            "--signal=KILL", "-w", "x"}) {
        const auto problem = slurm_extra_arg_problem(bad);
        ASSERT_TRUE(problem) << bad;
        EXPECT_NE(problem->find("--nodelist"), std::string::npos) << *problem;
    }
}

TEST(SlurmLauncher, TimeLimitsAreSlurmsFormats) {
    for (const char* ok : {"30", "30:00", "01:00:00", "1-00", "2-12:00", "2-12:00:00"}) {
        EXPECT_FALSE(slurm_time_limit_problem(ok)) << ok;
    }
    for (const char* bad : {"", "1h", "-5", "1:2:3:4", "a-01", "10 "}) {
        EXPECT_TRUE(slurm_time_limit_problem(bad)) << bad;
    }
}

TEST(SlurmLauncher, SrunWrapsTheDriverArgvAfterCkosOptionsAndScancelsBeforeTheKill) {
    SlurmOptions o;
    o.partition = "debug";
    o.gpus_per_call = 2;
    o.extra_args = {"--exclusive"};
    o.cko_path = "/shared/cko";
    ProcessSpec ps;
    ps.argv = {"python3", "driver.py", "--request", "/r.json"};
    ps.timeout = std::chrono::seconds(90);
    wrap_in_slurm_job(o, slurm_job_name("inv-abc", 3), "/store/call", std::chrono::seconds(30), ps);
    EXPECT_EQ(ps.argv.front(), "srun");
    EXPECT_TRUE(has(ps.argv, "--job-name=cko-inv-abc-0003"));
    EXPECT_TRUE(has(ps.argv, "--partition=debug"));
    EXPECT_TRUE(has(ps.argv, "--gpus=2"));
    EXPECT_TRUE(has(ps.argv, "--time=3"));  // 90 s rounded up to 2 minutes, plus one
    EXPECT_TRUE(has(ps.argv, "--exclusive"));
    // The driver's argv comes last and whole, after the wrapper's own three arguments.
    const std::vector<std::string> tail(ps.argv.end() - 7, ps.argv.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"/store/call/slurm-step.txt",
                                              "/store/call/node-doctor.json", "/shared/cko",
                                              "python3", "driver.py", "--request", "/r.json"}));
    EXPECT_EQ(ps.timeout, std::chrono::seconds(120));  // the queue wait is added
    EXPECT_TRUE(static_cast<bool>(ps.before_kill));
}

TEST(SlurmLauncher, SbatchWaitsAndWritesItsScriptAndTheJobsOutputFiles) {
    const test::TempDir scratch("cko-slurm-test");
    const fs::path& dir = scratch.path();
    SlurmOptions o;
    o.submit = "sbatch";
    ProcessSpec ps;
    ps.argv = {"/bin/true", "--request", "/r.json"};
    ps.timeout = std::chrono::seconds(10);
    wrap_in_slurm_job(o, "cko-x-0001", dir, std::chrono::seconds(0), ps);
    EXPECT_EQ(ps.argv.front(), "sbatch");
    EXPECT_TRUE(has(ps.argv, "--wait"));
    EXPECT_TRUE(has(ps.argv, "--parsable"));
    EXPECT_TRUE(has(ps.argv, "--output=" + (dir / "stdout.txt").string()));
    EXPECT_TRUE(has(ps.argv, (dir / "job.sh").string()));
    EXPECT_EQ(ps.stdout_path, dir / "submit-stdout.txt");
    std::ifstream script(dir / "job.sh");
    std::string first;
    std::getline(script, first);
    EXPECT_EQ(first, "#!/bin/sh");
    EXPECT_TRUE(fs::exists(dir / "stderr.txt"));
}

TEST(SlurmLauncher, OptionsRoundTripThroughTheirFrozenForm) {
    SlurmOptions o;
    o.submit = "sbatch";
    o.account = "proj";
    o.constraint = "h100";
    o.time_limit = "10";
    o.gpus_per_call = 1;
    o.extra_args = {"--qos=high"};
    const SlurmOptions back = SlurmOptions::from_json(o.to_json());
    EXPECT_EQ(back.to_json(), o.to_json());
}

TEST(SharedFs, FlockIsCoherentOnNfsUnlessLocalAndOnLustreOnlyWithFlock) {
    EXPECT_EQ(judge_lock_coherence("nfs", "rw,vers=4.2,local_lock=none").coherent,
              std::optional<bool>(true));
    EXPECT_EQ(judge_lock_coherence("nfs", "rw,vers=3,local_lock=flock").coherent,
              std::optional<bool>(false));
    EXPECT_EQ(judge_lock_coherence("nfs", "rw,nolock").coherent, std::optional<bool>(false));
    EXPECT_EQ(judge_lock_coherence("lustre", "rw,flock").coherent, std::optional<bool>(true));
    EXPECT_EQ(judge_lock_coherence("lustre", "rw,localflock").coherent, std::optional<bool>(false));
    EXPECT_EQ(judge_lock_coherence("lustre", "rw").coherent, std::optional<bool>(false));
    EXPECT_EQ(judge_lock_coherence("fuse", "rw").coherent, std::optional<bool>(false));
    EXPECT_EQ(judge_lock_coherence("gpfs", "rw").coherent, std::nullopt);
    EXPECT_NE(judge_lock_coherence("lustre", "rw").reason.find("-o flock"), std::string::npos);
}

TEST(SharedFs, ReadsTheMountHoldingAPath) {
    const LockCoherence c = lock_coherence(fs::temp_directory_path());
    EXPECT_FALSE(c.fs_type.empty());
    EXPECT_FALSE(c.mount_point.empty());
    EXPECT_FALSE(c.reason.empty());
}

}  // namespace
}  // namespace cko::run
