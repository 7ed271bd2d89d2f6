// Choosing a launch's roofline inputs from its facts.
#include "cko/profile/ncu/ncu_roofline.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

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

namespace {

// The facts a roofline reads, each the first of its id (as NcuLaunch::find gives it), found in
// one pass over the launch's facts: a raw page's --json asks this of every launch.
struct RooflineFacts {
    const LaunchFact* duration = nullptr;
    std::array<const LaunchFact*, 4> flop{};  // by Precision
    const LaunchFact* bytes = nullptr;
    const LaunchFact* read = nullptr;
    const LaunchFact* write = nullptr;
    const LaunchFact* rate = nullptr;

    explicit RooflineFacts(const NcuLaunch& launch) {
        const auto first = [](const LaunchFact*& slot, const LaunchFact& f) {
            if (slot == nullptr) {
                slot = &f;
            }
        };
        for (const LaunchFact& f : launch.facts) {
            const std::string_view id = f.id();
            if (id.starts_with("flop.")) {
                if (const auto p = precision_from_name(id.substr(5))) {
                    first(flop[static_cast<std::size_t>(*p)], f);
                }
            } else if (id == "duration") {
                first(duration, f);
            } else if (id.starts_with("dram.")) {
                const std::string_view rest = id.substr(5);
                if (rest == "bytes") {
                    first(bytes, f);
                } else if (rest == "bytes_read") {
                    first(read, f);
                } else if (rest == "bytes_write") {
                    first(write, f);
                } else if (rest == "throughput") {
                    first(rate, f);
                }
            }
        }
    }
};

}  // namespace

std::optional<LaunchRooflineInput> roofline_input(const NcuLaunch& launch,
                                                  std::optional<Precision> precision) {
    const RooflineFacts facts(launch);
    const LaunchFact* duration = facts.duration;
    if (duration == nullptr || duration->value <= 0) {
        return std::nullopt;
    }
    LaunchRooflineInput out;
    out.input.duration_ns = duration->value;
    const auto flop = [&](Precision p) { return facts.flop[static_cast<std::size_t>(p)]; };
    if (precision) {
        out.input.precision = *precision;
        if (const LaunchFact* f = flop(*precision)) {
            out.input.flops = f->value;
        }
    } else {
        for (const Precision p :
             {Precision::fp32, Precision::fp64, Precision::fp16, Precision::bf16}) {
            const LaunchFact* f = flop(p);
            if (f != nullptr && (!out.input.flops || f->value > *out.input.flops)) {
                out.input.flops = f->value;
                out.input.precision = p;
            }
        }
    }
    if (facts.bytes != nullptr) {
        out.input.dram_bytes = facts.bytes->value;
        out.bytes_from = "dram.bytes";
    } else if (facts.read != nullptr && facts.write != nullptr) {
        out.input.dram_bytes = facts.read->value + facts.write->value;
        out.bytes_from = "dram.bytes_read + dram.bytes_write";
    } else if (facts.rate != nullptr) {
        out.input.dram_bytes = facts.rate->value * duration->value * 1e-9;
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
        in->bytes_from.empty() ? nlohmann::json() : nlohmann::json(std::string(in->bytes_from));
    roofline["facts"] = nlohmann::json::array();
    for (const Fact& f : roofline_facts(placement, launch.scope)) {
        roofline["facts"].push_back(
            {{"id", f.id}, {"value", f.value}, {"unit", base_unit_name(f.unit)}});
    }
    return roofline;
}

}  // namespace cko::profile::ncu
