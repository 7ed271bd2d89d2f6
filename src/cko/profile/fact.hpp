// The one fact model every profiler importer (NCU, Nsight Systems, Kineto) feeds.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile {

// Base units. Every number a fact carries is in one of these; conversion happens once, at import,
// through the table in units.cpp.
#define CKO_BASE_UNITS(X)         \
    X(ns, "ns")                   \
    X(byte, "byte")               \
    X(byte_per_second, "byte/s")  \
    X(hertz, "Hz")                \
    X(percent, "%")               \
    X(count, "count")             \
    X(inst, "inst")               \
    X(flop, "flop")               \
    X(flop_per_second, "flop/s")  \
    X(flop_per_byte, "flop/byte") \
    X(ratio, "ratio")             \
    X(cycle, "cycle")             \
    X(inst_per_cycle, "inst/cycle")

enum class BaseUnit {
#define CKO_X(name, text) name,
    CKO_BASE_UNITS(CKO_X)
#undef CKO_X
};

[[nodiscard]] std::string_view base_unit_name(BaseUnit unit) noexcept;

// value_in_base = value * factor (plus offset, none so far).
struct UnitConversion {
    BaseUnit unit;
    double factor;
};

// Looks a unit spelling up in the one explicit table ("usecond", "msecond", "Kbyte",
// "Gbyte/second", "cycle/nsecond", "Ghz", "%", "byte", "inst", ...). Empty optional = unknown.
[[nodiscard]] std::optional<UnitConversion> lookup_unit(std::string_view text) noexcept;

// Where a fact applies. Empty/absent fields are unknown, never guessed.
struct Scope {
    std::string kernel;          // name as the tool printed it (usually demangled)
    std::string kernel_mangled;  // when the tool gives it
    std::optional<std::int64_t> launch_id;
    std::optional<std::int64_t> stream;
    std::optional<std::int64_t> context;
    std::optional<std::int64_t> device;
    std::optional<std::array<std::int64_t, 3>> grid;
    std::optional<std::array<std::int64_t, 3>> block;
};

// Which report a fact came from: bound to the tool and its version, never free-floating.
struct Source {
    std::string report_sha256;
    std::string tool;          // "ncu", "nsys", "kineto"
    std::string tool_version;  // empty when neither the file nor the caller said
    std::string dialect;       // e.g. "ncu-csv-raw", "ncu-csv-details", "nsys-sqlite-3.20"
    std::string parser_version;
};

struct Fact {
    std::string id;  // semantic id, e.g. "duration", "dram.bytes_read", "stall.long_scoreboard"
    double value = 0;
    BaseUnit unit = BaseUnit::count;
    Scope scope;
    std::string metric;  // the tool's own metric name it came from, for traceability
};

// Content that was read but is not modelled: kept for the reader, never computed with.
struct Unmodeled {
    std::string name;
    std::string unit;
    std::string value;
    Scope scope;
};

[[nodiscard]] nlohmann::json scope_to_json(const Scope& scope);
[[nodiscard]] nlohmann::json source_to_json(const Source& source);
[[nodiscard]] nlohmann::json fact_to_json(const Fact& fact);
[[nodiscard]] nlohmann::json unmodeled_to_json(const Unmodeled& item);

}  // namespace cko::profile
