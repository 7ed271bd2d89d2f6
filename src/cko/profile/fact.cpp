// The unit table and JSON forms of the fact model.
#include "cko/profile/fact.hpp"

#include <array>
#include <utility>

namespace cko::profile {
namespace {

constexpr std::array kBaseUnitNames = {
#define CKO_X(name, text) std::string_view(text),
    CKO_BASE_UNITS(CKO_X)
#undef CKO_X
};

struct UnitRow {
    std::string_view text;
    BaseUnit unit;
    double factor;
};

// The one explicit table. Spellings are those Nsight Compute/Systems and Kineto print.
constexpr std::array kUnits = {
    UnitRow{"ns", BaseUnit::ns, 1.0},
    UnitRow{"nsecond", BaseUnit::ns, 1.0},
    UnitRow{"usecond", BaseUnit::ns, 1e3},
    UnitRow{"us", BaseUnit::ns, 1e3},
    UnitRow{"msecond", BaseUnit::ns, 1e6},
    UnitRow{"ms", BaseUnit::ns, 1e6},
    UnitRow{"second", BaseUnit::ns, 1e9},
    UnitRow{"s", BaseUnit::ns, 1e9},
    UnitRow{"byte", BaseUnit::byte, 1.0},
    UnitRow{"Kbyte", BaseUnit::byte, 1e3},
    UnitRow{"Mbyte", BaseUnit::byte, 1e6},
    UnitRow{"Gbyte", BaseUnit::byte, 1e9},
    UnitRow{"Tbyte", BaseUnit::byte, 1e12},
    UnitRow{"KiB", BaseUnit::byte, 1024.0},
    UnitRow{"MiB", BaseUnit::byte, 1048576.0},
    UnitRow{"GiB", BaseUnit::byte, 1073741824.0},
    UnitRow{"byte/second", BaseUnit::byte_per_second, 1.0},
    UnitRow{"Kbyte/second", BaseUnit::byte_per_second, 1e3},
    UnitRow{"Mbyte/second", BaseUnit::byte_per_second, 1e6},
    UnitRow{"Gbyte/second", BaseUnit::byte_per_second, 1e9},
    UnitRow{"Tbyte/second", BaseUnit::byte_per_second, 1e12},
    UnitRow{"byte/s", BaseUnit::byte_per_second, 1.0},  // NCU details page spellings
    UnitRow{"Kbyte/s", BaseUnit::byte_per_second, 1e3},
    UnitRow{"Mbyte/s", BaseUnit::byte_per_second, 1e6},
    UnitRow{"Gbyte/s", BaseUnit::byte_per_second, 1e9},
    UnitRow{"Tbyte/s", BaseUnit::byte_per_second, 1e12},
    UnitRow{"byte/block", BaseUnit::byte, 1.0},  // shared memory per block (NCU)
    UnitRow{"Kbyte/block", BaseUnit::byte, 1e3},
    UnitRow{"Mbyte/block", BaseUnit::byte, 1e6},
    UnitRow{"hz", BaseUnit::hertz, 1.0},
    UnitRow{"Hz", BaseUnit::hertz, 1.0},
    UnitRow{"Khz", BaseUnit::hertz, 1e3},
    UnitRow{"Mhz", BaseUnit::hertz, 1e6},
    UnitRow{"Ghz", BaseUnit::hertz, 1e9},
    UnitRow{"cycle/second", BaseUnit::hertz, 1.0},
    UnitRow{"cycle/usecond", BaseUnit::hertz, 1e6},
    UnitRow{"cycle/nsecond", BaseUnit::hertz, 1e9},
    UnitRow{"%", BaseUnit::percent, 1.0},
    UnitRow{"cycle", BaseUnit::cycle, 1.0},
    UnitRow{"Kcycle", BaseUnit::cycle, 1e3},
    UnitRow{"Mcycle", BaseUnit::cycle, 1e6},
    UnitRow{"inst", BaseUnit::inst, 1.0},
    UnitRow{"Kinst", BaseUnit::inst, 1e3},
    UnitRow{"Minst", BaseUnit::inst, 1e6},
    UnitRow{"Ginst", BaseUnit::inst, 1e9},
    UnitRow{"inst/cycle", BaseUnit::inst_per_cycle, 1.0},
    UnitRow{"flop", BaseUnit::flop, 1.0},
    UnitRow{"flop/byte", BaseUnit::flop_per_byte, 1.0},
    UnitRow{"flop/second", BaseUnit::flop_per_second, 1.0},
    UnitRow{"count", BaseUnit::count, 1.0},
    UnitRow{"", BaseUnit::count, 1.0},
    UnitRow{"block", BaseUnit::count, 1.0},
    UnitRow{"warp", BaseUnit::count, 1.0},
    UnitRow{"thread", BaseUnit::count, 1.0},
    UnitRow{"register/thread", BaseUnit::count, 1.0},
    UnitRow{"sector", BaseUnit::count, 1.0},
    UnitRow{"request", BaseUnit::count, 1.0},
    UnitRow{"SM", BaseUnit::count, 1.0},
    UnitRow{"cluster", BaseUnit::count, 1.0},  // NCU launch/occupancy counts
    UnitRow{"branches", BaseUnit::count, 1.0},
    UnitRow{"pass", BaseUnit::count, 1.0},
};

}  // namespace

std::string_view base_unit_name(BaseUnit unit) noexcept {
    return kBaseUnitNames[static_cast<std::size_t>(unit)];
}

std::optional<UnitConversion> lookup_unit(std::string_view text) noexcept {
    for (const UnitRow& row : kUnits) {
        if (row.text == text) {
            return UnitConversion{row.unit, row.factor};
        }
    }
    return std::nullopt;
}

nlohmann::json scope_to_json(const Scope& scope) {
    nlohmann::json out = nlohmann::json::object();
    if (!scope.kernel.empty()) {
        out["kernel"] = scope.kernel;
    }
    if (!scope.kernel_mangled.empty()) {
        out["kernel_mangled"] = scope.kernel_mangled;
    }
    const auto put = [&](const char* key, const std::optional<std::int64_t>& v) {
        if (v) {
            out[key] = *v;
        }
    };
    put("launch_id", scope.launch_id);
    put("stream", scope.stream);
    put("context", scope.context);
    put("device", scope.device);
    if (scope.grid) {
        out["grid"] = *scope.grid;
    }
    if (scope.block) {
        out["block"] = *scope.block;
    }
    return out;
}

nlohmann::json source_to_json(const Source& source) {
    return nlohmann::json{{"report_sha256", source.report_sha256},
                          {"tool", source.tool},
                          {"tool_version", source.tool_version},
                          {"dialect", source.dialect},
                          {"parser_version", source.parser_version}};
}

nlohmann::json fact_to_json(const Fact& fact) {
    nlohmann::json out{{"id", fact.id},
                       {"value", fact.value},
                       {"unit", std::string(base_unit_name(fact.unit))},
                       {"scope", scope_to_json(fact.scope)}};
    if (!fact.metric.empty()) {
        out["metric"] = fact.metric;
    }
    return out;
}

nlohmann::json unmodeled_to_json(const Unmodeled& item) {
    return nlohmann::json{{"name", item.name},
                          {"unit", item.unit},
                          {"value", item.value},
                          {"scope", scope_to_json(item.scope)}};
}

}  // namespace cko::profile
