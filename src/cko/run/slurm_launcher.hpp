// The Slurm launcher: one driver call as one Slurm job (srun, or sbatch --wait), cancelled through
// scancel.
#pragma once

#include "cko/util/json.hpp"
#include "cko/util/process.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::run {

// The [slurm] table of a Target spec (docs/slurm.md).
struct SlurmOptions {
    std::string submit =
        "srun";  // "srun" (foreground) or "sbatch" (sbatch --wait: the job survives a lost login)
    std::string partition;  // empty = the cluster's default partition
    std::string account;
    std::string constraint;  // --constraint (node features)
    std::string time_limit;  // --time; empty = the command timeout, rounded up to minutes, plus one
    int gpus_per_call = 0;   // --gpus
    std::vector<std::string> extra_args;  // each one of slurm_allowed_options()
    std::string cko_path;  // cko on the compute nodes; empty = this binary's own path

    [[nodiscard]] Json to_json() const;
    [[nodiscard]] static SlurmOptions from_json(const Json& j);
};

// The srun/sbatch options a spec may add in extra_args: resource and placement options only. Job
// name, output files, working directory, environment export, time, signals and dependencies stay
// cko's, because the evidence rules depend on them.
[[nodiscard]] const std::vector<std::string>& slurm_allowed_options();
// Why `arg` may not be an extra argument (naming the allow-list), or nullopt when it may.
[[nodiscard]] std::optional<std::string> slurm_extra_arg_problem(const std::string& arg);
// Why `text` is not a Slurm time limit ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM",
// "D-HH:MM:SS").
[[nodiscard]] std::optional<std::string> slurm_time_limit_problem(const std::string& text);

// The job name of call `number` of invocation `invocation_id`: unique, so that scancel --name and
// squeue --name find exactly this call's job even before its id is known.
[[nodiscard]] std::string slurm_job_name(const std::string& invocation_id, int number);

// Rewrites `ps` (whose argv is the driver's argv with --request FILE) so that it runs as one Slurm
// job named `job_name`. Inside the job, before the driver, a fixed /bin/sh wrapper writes the
// job's facts to <call_dir>/slurm-step.txt and runs `cko doctor --json` into
// <call_dir>/node-doctor.json. The call's deadline is extended by `queue_wait` (time pending in the
// queue), and a timeout or cancel first runs scancel on the job.
void wrap_in_slurm_job(const SlurmOptions& options, const std::string& job_name,
                       const std::filesystem::path& call_dir, std::chrono::milliseconds queue_wait,
                       ProcessSpec& ps);

// After run_process returned: scancels the job if cko ended it or it is still queued/running, waits
// (at most `grace` + 10 s) until squeue lists it no more, and reads what the job reported. Returns
// the cko/slurm-call-v1 record: job_name, job_id, node, gpu ids, job_state, scancelled,
// left_in_queue, node_identity (the identity of `cko doctor --json` on the node, or null), and lost
// (a reason when Slurm, not the driver, ended the job: NODE_FAIL, PREEMPTED, ...; else null).
[[nodiscard]] Json settle_slurm_job(const SlurmOptions& options, const std::string& job_name,
                                    const std::filesystem::path& call_dir,
                                    const ProcessResult& process, std::chrono::milliseconds grace);

// scancel for every job still queued or running under `job_name` (a dead owner's leftovers).
// Returns how many were found.
int cancel_slurm_jobs_named(const std::string& job_name);

// The ids of jobs squeue lists under `job_name` (empty when none, or when squeue cannot be run).
[[nodiscard]] std::vector<std::string> slurm_jobs_named(const std::string& job_name);

}  // namespace cko::run
