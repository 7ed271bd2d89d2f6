// The monitor thread: one reading per interval, appended to monitor.jsonl as it is taken.
#include "cko/env/monitor.hpp"

#include "cko/env/host.hpp"
#include "cko/env/host_cpu.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace cko::env {
namespace {

std::int64_t unix_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// strerror is not thread safe; the monitor writes from its own thread.
std::string errno_text() {
    return std::error_code(errno, std::generic_category()).message();
}

void add_note(std::vector<std::string>& notes, std::string note) {
    // Readings repeat the same trouble every interval; keep each note once and a bounded list.
    if (notes.size() < 32 && std::find(notes.begin(), notes.end(), note) == notes.end()) {
        notes.push_back(std::move(note));
    }
}

}  // namespace

Monitor::Monitor(std::vector<std::string> gpu_uuids, std::filesystem::path jsonl,
                 std::chrono::milliseconds interval, std::function<bool(pid_t)> is_ours,
                 MonitorRule rule, MonitorOptions options)
    : gpu_uuids_(std::move(gpu_uuids)),
      jsonl_(std::move(jsonl)),
      interval_(interval),
      is_ours_(std::move(is_ours)),
      rule_(rule),
      options_(options) {
    if (!is_ours_) {
        is_ours_ = [self = ::getpid()](pid_t pid) { return pid == self; };
    }
}

Monitor::~Monitor() {
    if (started_ && !stopped_) {
        try {
            (void)stop();
        } catch (...) {  // a destructor must not throw; stop() only fails on I/O
        }
    }
}

void Monitor::start() {
    if (started_) {
        throw Error(ErrorCode::invalid_argument, "Monitor::start called twice");
    }
    if (interval_ < std::chrono::milliseconds(10) || interval_ > std::chrono::seconds(10)) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("monitor interval {} ms is outside 10 ms .. 10 s (formal "
                                "measurements use 100-500 ms)",
                                interval_.count()));
    }
    fd_ = ::open(jsonl_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot open {}: {}", jsonl_.string(), errno_text()),
                    Json{{"path", jsonl_.string()}});
    }
    if (gpu_uuids_.empty()) {
        add_note(notes_, "no target GPU: host-only samples, GPU state not verified");
    } else {
        std::vector<std::string> why;
        reader_ = open_gpu_reader(options_.reader, why);
        for (auto& w : why) {
            add_note(notes_, std::move(w));
        }
        if (!reader_) {
            add_note(notes_, "no GPU reader: host-only samples, GPU state not verified");
        }
    }
    summary_.source = reader_ ? std::string(reader_->source()) : std::string("none");
    started_ = true;
    thread_ = std::thread([this] { run(); });
}

void Monitor::run() {
    take_sample();
    auto next = std::chrono::steady_clock::now() + interval_;
    std::unique_lock lock(mutex_);
    while (!wake_.wait_until(lock, next, [this] { return stop_requested_; })) {
        lock.unlock();
        take_sample();
        lock.lock();
        // A slow reading (nvidia-smi) pushes the schedule instead of bunching samples up.
        next = std::max(next + interval_, std::chrono::steady_clock::now());
    }
}

MonitorGpuSample Monitor::gpu_sample(const std::string& uuid, const GpuReading& reading) const {
    MonitorGpuSample out;
    out.uuid = uuid;
    const auto it = std::find_if(reading.gpus.begin(), reading.gpus.end(),
                                 [&](const GpuInfo& g) { return g.uuid == uuid; });
    if (it == reading.gpus.end()) {
        out.seen = false;
        return out;
    }
    out.sm_clock_mhz = it->sm_clock_mhz;
    out.sm_clock_max_mhz = it->sm_clock_max_mhz;
    out.utilization_pct = it->utilization_pct;
    out.temperature_c = it->temperature_c;
    out.power_w = it->power_w;
    out.clock_event_reasons = it->clock_event_reasons;
    for (const auto& p : it->processes) {
        bool ours = false;
        try {
            ours = is_ours_(p.pid);
        } catch (...) {  // a failing callback cannot vouch for the process
        }
        out.processes.push_back({p.pid, p.used_memory_bytes, ours});
    }
    return out;
}

void Monitor::take_sample() {
    MonitorSample sample;
    sample.unix_ns = unix_now_ns();
    sample.host = read_host_cpu();
    sample.load_1m = sample.host.load_1m;
    if (sample.host.times && prev_times_ && sample.host.times->total > prev_times_->total) {
        const auto& now = *sample.host.times;
        const double ticks = static_cast<double>(now.total - prev_times_->total);
        const auto delta = [](std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : 0; };
        sample.busy_pct =
            100.0 * (ticks - static_cast<double>(delta(now.idle, prev_times_->idle))) / ticks;
        sample.steal_pct =
            100.0 * static_cast<double>(delta(now.steal, prev_times_->steal)) / ticks;
    }
    if (sample.host.times) {
        prev_times_ = sample.host.times;
    }
    GpuReading reading;
    if (reader_) {
        reading = reader_->read(GpuDetail::sample);
        for (auto& note : reading.notes) {
            add_note(notes_, std::move(note));
        }
    }
    for (const auto& uuid : gpu_uuids_) {
        sample.gpus.push_back(gpu_sample(uuid, reading));
    }
    const std::string line = canonical_json(sample.to_json()) + "\n";
    if (fd_ >= 0) {
        std::size_t written = 0;
        while (written < line.size()) {
            const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                add_note(notes_, fmt::format("writing {} failed: {}; later samples are kept in "
                                             "memory only",
                                             jsonl_.string(), errno_text()));
                ::close(fd_);
                fd_ = -1;
                break;
            }
            written += static_cast<std::size_t>(n);
        }
    }
    const std::lock_guard lock(mutex_);
    samples_.push_back(std::move(sample));
}

MonitorSummary Monitor::stop() {
    if (!started_) {
        MonitorSummary never;
        never.source = "none";
        never.notes.emplace_back("the monitor was never started");
        return never;
    }
    if (stopped_) {
        return summary_;
    }
    {
        const std::lock_guard lock(mutex_);
        stop_requested_ = true;
    }
    wake_.notify_all();
    thread_.join();
    take_sample();  // the state at the end of the window
    stopped_ = true;
    if (fd_ >= 0) {
        // Not fsynced: monitor.jsonl is a log for inspection that no record cites (the window's
        // summary is what the result keeps); an fsync per call cost a driver call ~1 ms ([21]).
        ::close(fd_);
        fd_ = -1;
    }
    reader_.reset();  // nvmlShutdown
    const std::string source = summary_.source;
    summary_ = summarize_samples(samples_, rule_);
    summary_.source = source;
    if (source == "none") {
        summary_.gpu_verified = false;
    }
    summary_.notes.insert(summary_.notes.begin(), notes_.begin(), notes_.end());
    return summary_;
}

std::vector<MonitorSample> Monitor::samples() const {
    const std::lock_guard lock(mutex_);
    return samples_;
}

}  // namespace cko::env
