// The roofline inputs of one NCU launch: FLOP of its dominant precision and its DRAM bytes.
#pragma once

#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/profile/roofline.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cko::profile::ncu {

struct LaunchRooflineInput {
    RooflineInput input;
    // The fact(s) the DRAM bytes came from, or how they were derived (a literal; empty: none).
    std::string_view bytes_from;
};

// FLOP: `precision` when given, else the precision with the most FLOP (fp32 when none counted).
// DRAM bytes: dram.bytes, else dram.bytes_read + dram.bytes_write, else dram.throughput ×
// duration (the details page gives only the rate). Empty optional without a duration.
[[nodiscard]] std::optional<LaunchRooflineInput> roofline_input(
    const NcuLaunch& launch, std::optional<Precision> precision = std::nullopt);

// How a report's roofline is asked for (`cko profile ncu --device --precision`): the device, a
// peak-table key or a name NCU prints (empty: the device the report names), and the precision
// word (empty: each launch's precision with the most FLOP).
struct RooflineOptions {
    std::string device;
    std::string precision;
};

// What a report's roofline is placed against: a device's peaks, or the note saying why there are
// none (the report names no device, or one the peak table lacks); and the precision asked for.
struct RooflineChoice {
    const DevicePeaks* device = nullptr;
    std::string note;
    std::optional<Precision> precision;
};

// Throws invalid_argument for a device asked for that is not in the peak table, then for a
// precision word that is not fp64, fp32, fp16 or bf16.
[[nodiscard]] RooflineChoice choose_roofline(const NcuReport& report,
                                             const RooflineOptions& options);

// The document's roofline part: its top `device` (the peaks, or null with `roofline_note`) and,
// with a device, each launch's placement in the precision asked for.
void add_roofline(ReportJsonExtras& extras, const RooflineChoice& choice);

// The launch's `roofline` member of the --json document as a DOM: placement_to_json, bytes_from
// and the roofline facts; null when the launch lacks the inputs. write_report_json writes the same
// bytes as it goes (ReportJsonExtras::roofline_device) without building this.
[[nodiscard]] nlohmann::json launch_roofline_to_json(const NcuLaunch& launch,
                                                     const DevicePeaks& device,
                                                     std::optional<Precision> precision);

}  // namespace cko::profile::ncu
