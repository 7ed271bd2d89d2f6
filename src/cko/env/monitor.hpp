// A low-rate sampling thread around formal measurements: GPU state to monitor.jsonl, then the
// contamination verdict of the window.
#pragma once

#include "cko/env/contamination.hpp"
#include "cko/env/gpu_reader.hpp"

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cko::env {

struct MonitorOptions {
    GpuReaderOptions reader;  // which GPU sources may be used
};

class Monitor {
public:
    // gpu_uuids: the target GPUs (empty: host-only samples, said in the summary's notes).
    // jsonl: appended to, one canonical JSON line per sample. interval: 100-500 ms in formal use
    // (anything from 10 ms to 10 s is accepted). is_ours: whether a pid seen on a target GPU
    // belongs to this measurement (see process_group_matcher); empty = only our own pid.
    Monitor(std::vector<std::string> gpu_uuids, std::filesystem::path jsonl,
            std::chrono::milliseconds interval, std::function<bool(pid_t)> is_ours,
            MonitorRule rule = {}, MonitorOptions options = {});
    ~Monitor();  // stops a running monitor
    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;

    // Opens the GPU reader and the file, takes a first sample at once, then one per interval.
    // Throws cko::Error: io_error (jsonl cannot be opened), invalid_argument (interval out of
    // range, started twice).
    void start();
    // Takes a last sample, stops the thread, syncs the file and applies the rule. Calling it
    // again returns the same summary.
    MonitorSummary stop();

    // Samples so far (a copy), for progress display and tests.
    [[nodiscard]] std::vector<MonitorSample> samples() const;

private:
    void run();
    void take_sample();
    MonitorGpuSample gpu_sample(const std::string& uuid, const GpuReading& reading) const;

    std::vector<std::string> gpu_uuids_;
    std::filesystem::path jsonl_;
    std::chrono::milliseconds interval_;
    std::function<bool(pid_t)> is_ours_;
    MonitorRule rule_;
    MonitorOptions options_;

    std::unique_ptr<GpuReader> reader_;
    std::vector<std::string> notes_;
    std::optional<CpuTimes> prev_times_;  // the host's CPU counters at the previous reading
    int fd_ = -1;
    bool started_ = false;
    bool stopped_ = false;
    MonitorSummary summary_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_requested_ = false;
    std::vector<MonitorSample> samples_;
    std::thread thread_;
};

}  // namespace cko::env
