// Choosing a launch's roofline inputs from its facts.
#include "cko/profile/ncu/ncu_roofline.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

namespace cko::profile::ncu {
namespace {

std::vector<std::string> device_keys() {
    std::vector<std::string> keys;
    for (const DevicePeaks& d : device_peak_table()) {
        keys.emplace_back(d.key);
    }
    return keys;
}

std::optional<Precision> precision_option(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    const auto p = precision_from_name(text);
    if (!p) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--precision '{}': expected fp64, fp32, fp16 or bf16", text));
    }
    return p;
}

}  // namespace

RooflineChoice choose_roofline(const NcuReport& report, const RooflineOptions& options) {
    const std::string device_name = options.device.empty() ? report.device_name : options.device;
    RooflineChoice out;
    out.device = find_device_peaks(device_name);
    if (out.device == nullptr && !options.device.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--device '{}' is not in the peak table; known: {}", options.device,
                                fmt::join(device_keys(), ", ")),
                    {{"known", device_keys()}});
    }
    if (out.device == nullptr) {
        out.note = device_name.empty()
                       ? fmt::format(
                             "no roofline: the report does not name its device; pass --device "
                             "(one of {})",
                             fmt::join(device_keys(), ", "))
                       : fmt::format(
                             "no roofline: the device '{}' is not in the peak table; pass "
                             "--device (one of {})",
                             device_name, fmt::join(device_keys(), ", "));
    }
    out.precision = precision_option(options.precision);
    return out;
}

void add_roofline(ReportJsonExtras& extras, const RooflineChoice& choice) {
    if (choice.device == nullptr) {
        extras.top["device"] = nullptr;
        extras.top["roofline_note"] = choice.note;
    } else {
        extras.top["device"] = device_peaks_to_json(*choice.device);
        extras.roofline_device = choice.device;
        extras.roofline_precision = choice.precision;
    }
}

std::optional<LaunchRooflineInput> roofline_input(const NcuLaunch& launch,
                                                  std::optional<Precision> precision) {
    const LaunchFact* duration = launch.find("duration");
    if (duration == nullptr || duration->value <= 0) {
        return std::nullopt;
    }
    LaunchRooflineInput out;
    out.input.duration_ns = duration->value;
    if (precision) {
        out.input.precision = *precision;
        if (const LaunchFact* f = launch.find("flop." + std::string(precision_name(*precision)))) {
            out.input.flops = f->value;
        }
    } else {
        for (const Precision p :
             {Precision::fp32, Precision::fp64, Precision::fp16, Precision::bf16}) {
            const LaunchFact* f = launch.find("flop." + std::string(precision_name(p)));
            if (f != nullptr && (!out.input.flops || f->value > *out.input.flops)) {
                out.input.flops = f->value;
                out.input.precision = p;
            }
        }
    }
    const LaunchFact* bytes = launch.find("dram.bytes");
    const LaunchFact* read = launch.find("dram.bytes_read");
    const LaunchFact* write = launch.find("dram.bytes_write");
    const LaunchFact* rate = launch.find("dram.throughput");
    if (bytes != nullptr) {
        out.input.dram_bytes = bytes->value;
        out.bytes_from = "dram.bytes";
    } else if (read != nullptr && write != nullptr) {
        out.input.dram_bytes = read->value + write->value;
        out.bytes_from = "dram.bytes_read + dram.bytes_write";
    } else if (rate != nullptr) {
        out.input.dram_bytes = rate->value * duration->value * 1e-9;
        out.bytes_from = "dram.throughput × duration";
    }
    return out;
}

nlohmann::json launch_roofline_to_json(const NcuLaunch& launch, const DevicePeaks& device,
                                       std::optional<Precision> precision) {
    const auto in = roofline_input(launch, precision);
    if (!in) {
        return nlohmann::json();
    }
    const RooflinePlacement placement = place_on_roofline(in->input, device);
    nlohmann::json roofline = placement_to_json(placement, device);
    roofline["bytes_from"] =
        in->bytes_from.empty() ? nlohmann::json() : nlohmann::json(in->bytes_from);
    roofline["facts"] = nlohmann::json::array();
    for (const Fact& f : roofline_facts(placement, launch.scope)) {
        roofline["facts"].push_back(
            {{"id", f.id}, {"value", f.value}, {"unit", base_unit_name(f.unit)}});
    }
    return roofline;
}

}  // namespace cko::profile::ncu
