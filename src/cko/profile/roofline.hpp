// Roofline placement of one kernel launch against a device peak table (values with sources).
#pragma once

#include "cko/profile/fact.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile {

enum class Precision { fp64, fp32, fp16, bf16 };
[[nodiscard]] std::string_view precision_name(Precision p) noexcept;  // "fp64", ...
[[nodiscard]] std::optional<Precision> precision_from_name(std::string_view name) noexcept;

// Datasheet peaks of one GPU. Tensor peaks are dense (the "with sparsity" figures halved).
// Absent = the cited source does not state it; never guessed.
struct DevicePeaks {
    std::string_view key;                       // "h200-sxm"
    std::string_view name;                      // "NVIDIA H200 SXM"
    std::span<const std::string_view> aliases;  // names NCU prints (device__attribute_display_name)
    double dram_bytes_per_second = 0;
    std::optional<double> fp64_flops;  // per second, CUDA cores (non-tensor)
    std::optional<double> fp32_flops;
    std::optional<double> fp16_tensor_flops;
    std::optional<double> bf16_tensor_flops;
    std::string_view source;
};

[[nodiscard]] std::span<const DevicePeaks> device_peak_table() noexcept;
// By key ("h200-sxm") or by a name NCU prints ("NVIDIA H200"); exact match, nullptr if unknown.
[[nodiscard]] const DevicePeaks* find_device_peaks(std::string_view name) noexcept;

// The compute roof a precision is placed against: the CUDA-core peak for fp64/fp32, the dense
// tensor-core peak for fp16/bf16 (an upper roof for non-tensor half-precision work).
[[nodiscard]] std::optional<double> peak_flops(const DevicePeaks& device, Precision p) noexcept;

struct RooflineInput {
    std::optional<double> flops;       // FLOP of the launch in `precision`
    std::optional<double> dram_bytes;  // bytes moved to and from DRAM
    double duration_ns = 0;
    Precision precision = Precision::fp32;
};

struct RooflinePlacement {
    Precision precision = Precision::fp32;
    std::optional<double> arithmetic_intensity;  // flop/byte
    std::optional<double> achieved_flops_per_second;
    std::optional<double> achieved_bytes_per_second;
    std::optional<double> peak_flops_per_second;
    double peak_bytes_per_second = 0;
    std::optional<double> ridge_point;  // flop/byte where the two roofs meet
    std::optional<double> bandwidth_pct_of_peak;
    std::optional<double> compute_pct_of_peak;
    std::optional<double> pct_of_roof;  // achieved FLOP/s over the roof at this intensity
    std::string region;                 // "memory" (left of the ridge), "compute", "" unknown
};

[[nodiscard]] RooflinePlacement place_on_roofline(const RooflineInput& input,
                                                  const DevicePeaks& device);

// roofline.arithmetic_intensity, roofline.achieved_flops, roofline.achieved_bytes,
// roofline.ridge_point, roofline.bandwidth_pct_of_peak, roofline.compute_pct_of_peak,
// roofline.pct_of_roof: those that are known.
[[nodiscard]] std::vector<Fact> roofline_facts(const RooflinePlacement& placement,
                                               const Scope& scope);

[[nodiscard]] nlohmann::json placement_to_json(const RooflinePlacement& placement,
                                               const DevicePeaks& device);
[[nodiscard]] nlohmann::json device_peaks_to_json(const DevicePeaks& device);

}  // namespace cko::profile
