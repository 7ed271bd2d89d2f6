// The roofline inputs of one NCU launch: FLOP of its dominant precision and its DRAM bytes.
#pragma once

#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/profile/roofline.hpp"

#include <optional>
#include <string>

namespace cko::profile::ncu {

struct LaunchRooflineInput {
    RooflineInput input;
    std::string bytes_from;  // the fact(s) the DRAM bytes came from, or how they were derived
};

// FLOP: `precision` when given, else the precision with the most FLOP (fp32 when none counted).
// DRAM bytes: dram.bytes, else dram.bytes_read + dram.bytes_write, else dram.throughput ×
// duration (the details page gives only the rate). Empty optional without a duration.
[[nodiscard]] std::optional<LaunchRooflineInput> roofline_input(
    const NcuLaunch& launch, std::optional<Precision> precision = std::nullopt);

// The launch's `roofline` member of the --json document as a DOM: placement_to_json, bytes_from
// and the roofline facts; null when the launch lacks the inputs. write_report_json writes the same
// bytes as it goes (ReportJsonExtras::roofline_device) without building this.
[[nodiscard]] nlohmann::json launch_roofline_to_json(const NcuLaunch& launch,
                                                     const DevicePeaks& device,
                                                     std::optional<Precision> precision);

}  // namespace cko::profile::ncu
