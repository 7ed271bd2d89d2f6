// nvidia-smi CSV queries → GpuInfo; every cell checked, "[N/A]"-style cells left absent.
#include "cko/env/smi_reader.hpp"

#include "cko/env/host.hpp"
#include "cko/env/tools.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace cko::env {
namespace {

std::vector<std::string> split_csv_row(const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) {
        cells.push_back(trim(cell));
    }
    if (!line.empty() && line.back() == ',') {
        cells.emplace_back();
    }
    return cells;
}

bool absent(const std::string& cell) {
    return cell.empty() || cell.front() == '[' || cell == "N/A";
}

std::optional<double> number(const std::string& cell) {
    if (absent(cell)) {
        return std::nullopt;
    }
    try {
        std::size_t used = 0;
        const double value = std::stod(cell, &used);
        return used == cell.size() ? std::optional<double>(value) : std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<unsigned> whole(const std::string& cell) {
    const auto value = number(cell);
    if (!value || *value < 0) {
        return std::nullopt;
    }
    return static_cast<unsigned>(std::lround(*value));
}

std::optional<bool> enabled(const std::string& cell) {
    if (cell == "Enabled") {
        return true;
    }
    if (cell == "Disabled") {
        return false;
    }
    return std::nullopt;
}

constexpr std::uint64_t kMiB = std::uint64_t{1024} * 1024;

// Sets the GpuInfo field that `field` names from `cell`; false when the field is unknown.
bool assign(GpuInfo& gpu, const std::string& field, const std::string& cell) {
    if (field == "index") {
        gpu.index = whole(cell).value_or(0);
    } else if (field == "uuid") {
        gpu.uuid = absent(cell) ? "" : cell;
    } else if (field == "name") {
        gpu.name = absent(cell) ? "" : cell;
    } else if (field == "compute_cap") {
        gpu.compute_capability = absent(cell) ? "" : cell;
    } else if (field == "memory.total") {
        gpu.memory_total_bytes = static_cast<std::uint64_t>(number(cell).value_or(0)) * kMiB;
    } else if (field == "memory.free") {
        gpu.memory_free_bytes = static_cast<std::uint64_t>(number(cell).value_or(0)) * kMiB;
    } else if (field == "driver_version") {
        gpu.driver_version = absent(cell) ? "" : cell;
    } else if (field == "mig.mode.current") {
        gpu.mig_enabled = enabled(cell);
    } else if (field == "ecc.mode.current") {
        gpu.ecc_enabled = enabled(cell);
    } else if (field == "persistence_mode") {
        gpu.persistence_enabled = enabled(cell);
    } else if (field == "clocks.sm") {
        gpu.sm_clock_mhz = whole(cell);
    } else if (field == "clocks.max.sm") {
        gpu.sm_clock_max_mhz = whole(cell);
    } else if (field == "clocks.mem") {
        gpu.mem_clock_mhz = whole(cell);
    } else if (field == "clocks.max.mem") {
        gpu.mem_clock_max_mhz = whole(cell);
    } else if (field == "power.draw") {
        gpu.power_w = number(cell);
    } else if (field == "power.limit") {
        gpu.power_limit_w = number(cell);
    } else if (field == "temperature.gpu") {
        gpu.temperature_c = whole(cell);
    } else if (field == "utilization.gpu") {
        gpu.utilization_pct = whole(cell);
    } else {
        return false;
    }
    return true;
}

std::string join(const std::vector<std::string>& fields) {
    std::string out;
    for (const auto& f : fields) {
        out += (out.empty() ? "" : ",") + f;
    }
    return out;
}

class SmiReader final : public GpuReader {
public:
    SmiReader(std::string path, std::chrono::milliseconds timeout, bool compute_cap)
        : path_(std::move(path)), timeout_(timeout), compute_cap_(compute_cap) {}

    std::string_view source() const override { return "nvidia-smi"; }

    GpuReading read(GpuDetail detail) override {
        GpuReading reading;
        const auto fields = smi_gpu_fields(detail, compute_cap_);
        const CapturedRun gpus = query({"--query-gpu=" + join(fields)}, reading.notes);
        if (!gpus.error.empty()) {
            return reading;
        }
        reading.gpus = parse_smi_gpus(gpus.output, fields, reading.notes);
        const CapturedRun apps =
            query({"--query-compute-apps=gpu_uuid,pid,used_memory"}, reading.notes);
        if (apps.error.empty()) {
            attach_smi_processes(apps.output, reading.gpus, reading.notes);
        }
        return reading;
    }

    // A run that did not exit 0 gets `error` set (and a note).
    CapturedRun query(std::vector<std::string> args, std::vector<std::string>& notes) const {
        std::vector<std::string> argv = {path_};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.emplace_back("--format=csv,noheader,nounits");
        CapturedRun run = run_captured(argv, timeout_);
        if (run.error.empty() &&
            (run.result.timed_out || !run.result.exited || run.result.exit_code != 0)) {
            run.error = run.result.timed_out
                            ? fmt::format("timed out after {} ms", timeout_.count())
                            : fmt::format("exit {}: {}", run.result.exit_code,
                                          trim(run.output.substr(0, 200)));
        }
        if (!run.error.empty()) {
            notes.push_back(fmt::format("nvidia-smi {}: {}", args.front(), run.error));
        }
        return run;
    }

private:
    std::string path_;
    std::chrono::milliseconds timeout_;
    bool compute_cap_;
};

}  // namespace

std::string nvidia_smi_path() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only, no setenv in cko
    if (const char* env = std::getenv("CKO_NVIDIA_SMI"); env != nullptr && *env != '\0') {
        return env;
    }
    return find_program("nvidia-smi", tool_search_dirs()).string();
}

std::vector<std::string> smi_gpu_fields(GpuDetail detail, bool with_compute_cap) {
    if (detail == GpuDetail::sample) {
        return {"index",           "uuid",           "clocks.sm", "clocks.max.sm", "power.draw",
                "temperature.gpu", "utilization.gpu"};
    }
    std::vector<std::string> fields = {"index", "uuid", "name"};
    if (with_compute_cap) {
        fields.emplace_back("compute_cap");  // nvidia-smi of drivers before 510 lacks it
    }
    for (const char* f :
         {"memory.total", "memory.free", "driver_version", "mig.mode.current", "ecc.mode.current",
          "persistence_mode", "clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem",
          "power.draw", "power.limit", "temperature.gpu", "utilization.gpu"}) {
        fields.emplace_back(f);
    }
    return fields;
}

std::vector<GpuInfo> parse_smi_gpus(std::string_view csv, const std::vector<std::string>& fields,
                                    std::vector<std::string>& notes) {
    std::vector<GpuInfo> gpus;
    std::istringstream in{std::string(csv)};
    std::string line;
    while (std::getline(in, line)) {
        if (trim(line).empty()) {
            continue;
        }
        const auto cells = split_csv_row(line);
        if (cells.size() != fields.size()) {
            notes.push_back(fmt::format("nvidia-smi row with {} cells, expected {}: {}",
                                        cells.size(), fields.size(), line.substr(0, 200)));
            continue;
        }
        GpuInfo gpu;
        for (std::size_t i = 0; i < fields.size(); ++i) {
            assign(gpu, fields[i], cells[i]);
        }
        if (gpu.uuid.empty()) {
            notes.push_back("nvidia-smi row without a GPU UUID: " + line.substr(0, 200));
            continue;
        }
        gpus.push_back(std::move(gpu));
    }
    return gpus;
}

void attach_smi_processes(std::string_view csv, std::vector<GpuInfo>& gpus,
                          std::vector<std::string>& notes) {
    std::istringstream in{std::string(csv)};
    std::string line;
    while (std::getline(in, line)) {
        if (trim(line).empty()) {
            continue;
        }
        const auto cells = split_csv_row(line);
        const auto pid = cells.size() == 3 ? number(cells[1]) : std::nullopt;
        if (!pid) {
            notes.push_back("nvidia-smi compute-apps row not understood: " + line.substr(0, 200));
            continue;
        }
        GpuProcess process;
        process.pid = static_cast<pid_t>(*pid);
        if (const auto mib = number(cells[2])) {
            process.used_memory_bytes = static_cast<std::uint64_t>(*mib) * kMiB;
        }
        for (auto& gpu : gpus) {
            if (gpu.uuid == cells[0]) {
                gpu.processes.push_back(process);
            }
        }
    }
}

std::unique_ptr<GpuReader> open_smi_reader(std::chrono::milliseconds timeout,
                                           std::string& why_not) {
    const std::string path = nvidia_smi_path();
    if (path.empty()) {
        why_not = "nvidia-smi not found in PATH or /usr/local/cuda/bin";
        return nullptr;
    }
    std::vector<std::string> notes;
    auto reader = std::make_unique<SmiReader>(path, timeout, true);
    CapturedRun probe = reader->query({"--query-gpu=uuid,compute_cap"}, notes);
    if (!probe.error.empty() && probe.output.find("compute_cap") != std::string::npos) {
        notes.clear();
        reader = std::make_unique<SmiReader>(path, timeout, false);
        probe = reader->query({"--query-gpu=uuid"}, notes);
    }
    if (!probe.error.empty()) {
        why_not = notes.empty() ? probe.error : notes.front();
        return nullptr;
    }
    if (trim(probe.output).empty()) {
        why_not = path + " lists no GPU";
        return nullptr;
    }
    return reader;
}

}  // namespace cko::env
