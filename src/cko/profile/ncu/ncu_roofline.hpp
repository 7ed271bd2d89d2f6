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

}  // namespace cko::profile::ncu
