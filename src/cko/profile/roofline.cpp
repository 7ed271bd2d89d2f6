// The device peak table and the roofline arithmetic.
#include "cko/profile/roofline.hpp"

#include <algorithm>
#include <array>

namespace cko::profile {
namespace {

constexpr double T = 1e12;

constexpr std::array<std::string_view, 2> kH100Names = {"NVIDIA H100 80GB HBM3", "NVIDIA H100"};
constexpr std::array<std::string_view, 1> kH200Names = {"NVIDIA H200"};
constexpr std::array<std::string_view, 2> kA100Names = {"NVIDIA A100-SXM4-80GB",
                                                        "NVIDIA A100 80GB SXM"};
constexpr std::array<std::string_view, 1> kL40SNames = {"NVIDIA L40S"};
constexpr std::array<std::string_view, 1> kRtx4090Names = {"NVIDIA GeForce RTX 4090"};
constexpr std::array<std::string_view, 1> kB200Names = {"NVIDIA B200"};

const std::array kDevices = {
    DevicePeaks{"h100-sxm", "NVIDIA H100 SXM5 80GB", kH100Names, 3.35 * T, 34 * T, 67 * T,
                989.4 * T, 989.4 * T,
                "NVIDIA H100 Tensor Core GPU datasheet (SXM column): FP64 34 TFLOPS, FP32 67 "
                "TFLOPS, FP16/BF16 Tensor 1,979 TFLOPS with sparsity, GPU memory bandwidth "
                "3.35 TB/s"},
    DevicePeaks{"h200-sxm", "NVIDIA H200 SXM 141GB", kH200Names, 4.8 * T, 34 * T, 67 * T, 989.4 * T,
                989.4 * T,
                "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column): FP64 34 TFLOPS, FP32 67 "
                "TFLOPS, FP16/BF16 Tensor 1,979 TFLOPS with sparsity, GPU memory bandwidth "
                "4.8 TB/s"},
    DevicePeaks{"a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB", kA100Names, 2.039 * T, 9.7 * T, 19.5 * T,
                312 * T, 312 * T,
                "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column): FP64 9.7 TFLOPS, FP32 "
                "19.5 TFLOPS, FP16/BF16 Tensor 312 TFLOPS (624 with sparsity), GPU memory "
                "bandwidth 2,039 GB/s"},
    DevicePeaks{"l40s", "NVIDIA L40S", kL40SNames, 0.864 * T, std::nullopt, 91.6 * T, 362.05 * T,
                362.05 * T,
                "NVIDIA L40S GPU datasheet: FP32 91.6 TFLOPS, FP16/BF16 Tensor 733 TFLOPS with "
                "sparsity, GPU memory bandwidth 864 GB/s; FP64 not stated"},
    DevicePeaks{"rtx-4090", "NVIDIA GeForce RTX 4090", kRtx4090Names, 1.008 * T, 1.29 * T, 82.6 * T,
                165.2 * T, 165.2 * T,
                "NVIDIA Ada GPU Architecture whitepaper, appendix table (GeForce RTX 4090): FP32 "
                "82.6 TFLOPS, FP64 1,290 GFLOPS, FP16/BF16 Tensor with FP32 accumulate 165.2 "
                "TFLOPS dense, memory bandwidth 1,008 GB/s"},
    DevicePeaks{"b200", "NVIDIA B200 (HGX B200, per GPU)", kB200Names, 8 * T, 37 * T, std::nullopt,
                2250 * T, 2250 * T,
                "NVIDIA HGX B200 datasheet (8 GPUs) divided by 8: FP64 296 TFLOPS, FP16/BF16 "
                "Tensor 36 PFLOPS with sparsity, memory bandwidth 64 TB/s; FP32 (non-tensor) not "
                "stated"},
};

void add(std::vector<Fact>& out, const char* id, const std::optional<double>& v, BaseUnit unit,
         const Scope& scope) {
    if (v) {
        out.push_back(Fact{id, *v, unit, scope, "roofline"});
    }
}

nlohmann::json opt(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

std::string_view precision_name(Precision p) noexcept {
    switch (p) {
    case Precision::fp64:
        return "fp64";
    case Precision::fp32:
        return "fp32";
    case Precision::fp16:
        return "fp16";
    case Precision::bf16:
        return "bf16";
    }
    return "fp32";
}

std::optional<Precision> precision_from_name(std::string_view name) noexcept {
    for (const Precision p : {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16}) {
        if (precision_name(p) == name) {
            return p;
        }
    }
    return std::nullopt;
}

std::span<const DevicePeaks> device_peak_table() noexcept {
    return kDevices;
}

const DevicePeaks* find_device_peaks(std::string_view name) noexcept {
    for (const DevicePeaks& d : kDevices) {
        if (d.key == name ||
            std::find(d.aliases.begin(), d.aliases.end(), name) != d.aliases.end()) {
            return &d;
        }
    }
    return nullptr;
}

std::optional<double> peak_flops(const DevicePeaks& device, Precision p) noexcept {
    switch (p) {
    case Precision::fp64:
        return device.fp64_flops;
    case Precision::fp32:
        return device.fp32_flops;
    case Precision::fp16:
        return device.fp16_tensor_flops;
    case Precision::bf16:
        return device.bf16_tensor_flops;
    }
    return std::nullopt;
}

RooflinePlacement place_on_roofline(const RooflineInput& input, const DevicePeaks& device) {
    RooflinePlacement p;
    p.precision = input.precision;
    p.peak_bytes_per_second = device.dram_bytes_per_second;
    p.peak_flops_per_second = peak_flops(device, input.precision);
    if (p.peak_flops_per_second) {
        p.ridge_point = *p.peak_flops_per_second / device.dram_bytes_per_second;
    }
    const double seconds = input.duration_ns * 1e-9;
    if (input.dram_bytes && seconds > 0) {
        p.achieved_bytes_per_second = *input.dram_bytes / seconds;
        p.bandwidth_pct_of_peak = *p.achieved_bytes_per_second / device.dram_bytes_per_second * 100;
    }
    if (input.flops && seconds > 0) {
        p.achieved_flops_per_second = *input.flops / seconds;
        if (p.peak_flops_per_second) {
            p.compute_pct_of_peak = *p.achieved_flops_per_second / *p.peak_flops_per_second * 100;
        }
    }
    if (input.flops && input.dram_bytes && *input.dram_bytes > 0) {
        p.arithmetic_intensity = *input.flops / *input.dram_bytes;
        if (p.ridge_point) {
            p.region = *p.arithmetic_intensity < *p.ridge_point ? "memory" : "compute";
            const double roof = std::min(*p.peak_flops_per_second,
                                         *p.arithmetic_intensity * device.dram_bytes_per_second);
            if (roof > 0 && p.achieved_flops_per_second) {
                p.pct_of_roof = *p.achieved_flops_per_second / roof * 100;
            }
        }
    }
    return p;
}

std::vector<Fact> roofline_facts(const RooflinePlacement& p, const Scope& scope) {
    std::vector<Fact> out;
    add(out, "roofline.achieved_bytes", p.achieved_bytes_per_second, BaseUnit::byte_per_second,
        scope);
    add(out, "roofline.achieved_flops", p.achieved_flops_per_second, BaseUnit::flop_per_second,
        scope);
    add(out, "roofline.arithmetic_intensity", p.arithmetic_intensity, BaseUnit::flop_per_byte,
        scope);
    add(out, "roofline.bandwidth_pct_of_peak", p.bandwidth_pct_of_peak, BaseUnit::percent, scope);
    add(out, "roofline.compute_pct_of_peak", p.compute_pct_of_peak, BaseUnit::percent, scope);
    add(out, "roofline.pct_of_roof", p.pct_of_roof, BaseUnit::percent, scope);
    add(out, "roofline.ridge_point", p.ridge_point, BaseUnit::flop_per_byte, scope);
    return out;
}

nlohmann::json device_peaks_to_json(const DevicePeaks& d) {
    return {{"key", d.key},
            {"name", d.name},
            {"dram_bytes_per_second", d.dram_bytes_per_second},
            {"fp64_flops", opt(d.fp64_flops)},
            {"fp32_flops", opt(d.fp32_flops)},
            {"fp16_tensor_flops", opt(d.fp16_tensor_flops)},
            {"bf16_tensor_flops", opt(d.bf16_tensor_flops)},
            {"source", d.source}};
}

nlohmann::json placement_to_json(const RooflinePlacement& p, const DevicePeaks& device) {
    return {{"device", device.key},
            {"precision", precision_name(p.precision)},
            {"arithmetic_intensity", opt(p.arithmetic_intensity)},
            {"achieved_flops_per_second", opt(p.achieved_flops_per_second)},
            {"achieved_bytes_per_second", opt(p.achieved_bytes_per_second)},
            {"peak_flops_per_second", opt(p.peak_flops_per_second)},
            {"peak_bytes_per_second", p.peak_bytes_per_second},
            {"ridge_point", opt(p.ridge_point)},
            {"bandwidth_pct_of_peak", opt(p.bandwidth_pct_of_peak)},
            {"compute_pct_of_peak", opt(p.compute_pct_of_peak)},
            {"pct_of_roof", opt(p.pct_of_roof)},
            {"region", p.region.empty() ? nlohmann::json() : nlohmann::json(p.region)}};
}

}  // namespace cko::profile
