// The semantic table (NCU metric → fact id) and NCU's number spelling.
#include "cko/profile/ncu/ncu_metrics.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace cko::profile::ncu {
namespace {

constexpr std::string_view kSol = "GPU Speed Of Light Throughput";
// NCU 2019.5-2020.1 named the section without "Throughput" and its rows "SOL FB" (frame buffer:
// DRAM), "SM [%]", "Memory [%]", "SOL L2", "SOL TEX" (L1/TEX), "Memory Frequency".
constexpr std::string_view kSolOld = "GPU Speed Of Light";
constexpr std::string_view kMem = "Memory Workload Analysis";
constexpr std::string_view kCompute = "Compute Workload Analysis";
constexpr std::string_view kOcc = "Occupancy";
constexpr std::string_view kLaunch = "Launch Statistics";
constexpr std::string_view kSched = "Scheduler Statistics";
constexpr std::string_view kWarp = "Warp State Statistics";
constexpr std::string_view kInst = "Instruction Statistics";
constexpr std::string_view kSource = "Source Counters";

using U = BaseUnit;
using S = SemanticSource;

// Raw names are those of `ncu --query-metrics` (NCU 2025.3, sm_90); display names are those the
// details page prints for the same quantity (checked against tests/fixtures/ncu/ncu_details.csv).
constexpr std::array kSources = {
    S{"duration", U::ns, "", "gpu__time_duration.sum"},
    S{"duration", U::ns, kSol, "Duration"},
    S{"duration", U::ns, kSolOld, "Duration"},
    S{"cycles.elapsed", U::cycle, "", "gpc__cycles_elapsed.max"},
    S{"cycles.elapsed", U::cycle, kSol, "Elapsed Cycles"},
    S{"cycles.elapsed", U::cycle, kSolOld, "Elapsed Cycles"},
    S{"cycles.sm_active", U::cycle, "", "sm__cycles_active.avg"},
    S{"cycles.sm_active", U::cycle, kSol, "SM Active Cycles"},
    S{"cycles.sm_active", U::cycle, kSolOld, "SM Active Cycles"},
    S{"clock.sm", U::hertz, "", "gpc__cycles_elapsed.avg.per_second"},
    S{"clock.sm", U::hertz, kSol, "SM Frequency"},
    S{"clock.sm", U::hertz, kSolOld, "SM Frequency"},
    S{"clock.dram", U::hertz, "", "dram__cycles_elapsed.avg.per_second"},
    S{"clock.dram", U::hertz, kSol, "DRAM Frequency"},
    S{"clock.dram", U::hertz, kSolOld, "Memory Frequency"},
    S{"dram.bytes", U::byte, "", "dram__bytes.sum"},
    S{"dram.bytes_read", U::byte, "", "dram__bytes_read.sum"},
    S{"dram.bytes_write", U::byte, "", "dram__bytes_write.sum"},
    S{"dram.throughput", U::byte_per_second, "", "dram__bytes.sum.per_second"},
    S{"dram.throughput", U::byte_per_second, kMem, "Memory Throughput"},
    S{"dram.throughput_pct", U::percent, "",
      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    S{"dram.throughput_pct", U::percent, "", "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
    S{"dram.throughput_pct", U::percent, kSol, "DRAM Throughput"},
    S{"dram.throughput_pct", U::percent, kSolOld, "SOL FB"},
    S{"memory.throughput_pct", U::percent, "",
      "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
    S{"memory.throughput_pct", U::percent, kSol, "Memory Throughput"},
    S{"memory.throughput_pct", U::percent, kSolOld, "Memory [%]"},
    S{"sm.throughput_pct", U::percent, "", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
    S{"sm.throughput_pct", U::percent, kSol, "Compute (SM) Throughput"},
    S{"sm.throughput_pct", U::percent, kSolOld, "SM [%]"},
    S{"l1.throughput_pct", U::percent, "", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
    S{"l1.throughput_pct", U::percent, kSol, "L1/TEX Cache Throughput"},
    S{"l1.throughput_pct", U::percent, kSolOld, "SOL TEX"},
    S{"l2.throughput_pct", U::percent, "", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
    S{"l2.throughput_pct", U::percent, kSol, "L2 Cache Throughput"},
    S{"l2.throughput_pct", U::percent, kSolOld, "SOL L2"},
    S{"l1.hit_rate_pct", U::percent, "", "l1tex__t_sector_hit_rate.pct"},
    S{"l1.hit_rate_pct", U::percent, kMem, "L1/TEX Hit Rate"},
    S{"l2.hit_rate_pct", U::percent, "", "lts__t_sector_hit_rate.pct"},
    S{"l2.hit_rate_pct", U::percent, kMem, "L2 Hit Rate"},
    S{"occupancy.achieved_pct", U::percent, "",
      "sm__warps_active.avg.pct_of_peak_sustained_active"},
    S{"occupancy.achieved_pct", U::percent, kOcc, "Achieved Occupancy"},
    S{"occupancy.theoretical_pct", U::percent, "", "sm__maximum_warps_per_active_cycle_pct"},
    S{"occupancy.theoretical_pct", U::percent, kOcc, "Theoretical Occupancy"},
    S{"occupancy.achieved_warps_per_sm", U::count, "", "sm__warps_active.avg.per_cycle_active"},
    S{"occupancy.achieved_warps_per_sm", U::count, kOcc, "Achieved Active Warps Per SM"},
    S{"occupancy.limit_registers", U::count, "", "launch__occupancy_limit_registers"},
    S{"occupancy.limit_registers", U::count, kOcc, "Block Limit Registers"},
    S{"occupancy.limit_shared_mem", U::count, "", "launch__occupancy_limit_shared_mem"},
    S{"occupancy.limit_shared_mem", U::count, kOcc, "Block Limit Shared Mem"},
    S{"occupancy.limit_warps", U::count, "", "launch__occupancy_limit_warps"},
    S{"occupancy.limit_warps", U::count, kOcc, "Block Limit Warps"},
    S{"occupancy.limit_blocks", U::count, "", "launch__occupancy_limit_blocks"},
    S{"occupancy.limit_blocks", U::count, kOcc, "Block Limit SM"},
    S{"occupancy.limit_barriers", U::count, "", "launch__occupancy_limit_barriers"},
    S{"occupancy.limit_barriers", U::count, kOcc, "Block Limit Barriers"},
    S{"launch.registers_per_thread", U::count, "", "launch__registers_per_thread"},
    S{"launch.registers_per_thread", U::count, kLaunch, "Registers Per Thread"},
    S{"launch.shared_mem_static_per_block", U::byte, "", "launch__shared_mem_per_block_static"},
    S{"launch.shared_mem_static_per_block", U::byte, kLaunch, "Static Shared Memory Per Block"},
    S{"launch.shared_mem_dynamic_per_block", U::byte, "", "launch__shared_mem_per_block_dynamic"},
    S{"launch.shared_mem_dynamic_per_block", U::byte, kLaunch, "Dynamic Shared Memory Per Block"},
    S{"launch.shared_mem_driver_per_block", U::byte, "", "launch__shared_mem_per_block_driver"},
    S{"launch.shared_mem_driver_per_block", U::byte, kLaunch, "Driver Shared Memory Per Block"},
    S{"launch.shared_mem_config", U::byte, "", "launch__shared_mem_config_size"},
    S{"launch.shared_mem_config", U::byte, kLaunch, "Shared Memory Configuration Size"},
    S{"launch.block_size", U::count, "", "launch__block_size"},
    S{"launch.block_size", U::count, kLaunch, "Block Size"},
    S{"launch.grid_size", U::count, "", "launch__grid_size"},
    S{"launch.grid_size", U::count, kLaunch, "Grid Size"},
    S{"launch.threads", U::count, "", "launch__thread_count"},
    S{"launch.threads", U::count, kLaunch, "Threads"},
    S{"launch.waves_per_sm", U::count, "", "launch__waves_per_multiprocessor"},
    S{"launch.waves_per_sm", U::count, kLaunch, "Waves Per SM"},
    S{"launch.sm_count", U::count, "", "launch__sm_count"},
    S{"launch.sm_count", U::count, kLaunch, "# SMs"},
    S{"tensor.pipe_pct", U::percent, "",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"},
    S{"tensor.pipe_pct", U::percent, "",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"},
    S{"tensor.pipe_pct", U::percent, "",
      "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active"},
    S{"issue.slots_busy_pct", U::percent, "", "sm__inst_issued.avg.pct_of_peak_sustained_active"},
    S{"issue.slots_busy_pct", U::percent, kCompute, "Issue Slots Busy"},
    S{"issue.active_pct", U::percent, "", "sm__issue_active.avg.pct_of_peak_sustained_elapsed"},
    S{"sm.busy_pct", U::percent, "", "sm__instruction_throughput.avg.pct_of_peak_sustained_active"},
    S{"sm.busy_pct", U::percent, kCompute, "SM Busy"},
    S{"ipc.executed", U::inst_per_cycle, "", "sm__inst_executed.avg.per_cycle_active"},
    S{"ipc.executed", U::inst_per_cycle, kCompute, "Executed Ipc Active"},
    S{"ipc.issued", U::inst_per_cycle, "", "sm__inst_issued.avg.per_cycle_active"},
    S{"ipc.issued", U::inst_per_cycle, kCompute, "Issued Ipc Active"},
    S{"inst.executed", U::inst, "", "smsp__inst_executed.sum"},
    S{"inst.executed", U::inst, kInst, "Executed Instructions"},
    S{"inst.issued", U::inst, "", "smsp__inst_issued.sum"},
    S{"inst.issued", U::inst, kInst, "Issued Instructions"},
    S{"scheduler.issue_active_pct", U::percent, "",
      "smsp__issue_active.avg.pct_of_peak_sustained_active"},
    S{"scheduler.issue_active_pct", U::percent, kSched, "One or More Eligible"},
    S{"scheduler.no_eligible_pct", U::percent, "",
      "smsp__issue_inst0.avg.pct_of_peak_sustained_active"},
    S{"scheduler.no_eligible_pct", U::percent, kSched, "No Eligible"},
    S{"scheduler.active_warps", U::count, "", "smsp__warps_active.avg.per_cycle_active"},
    S{"scheduler.active_warps", U::count, kSched, "Active Warps Per Scheduler"},
    S{"scheduler.eligible_warps", U::count, "", "smsp__warps_eligible.avg.per_cycle_active"},
    S{"scheduler.eligible_warps", U::count, kSched, "Eligible Warps Per Scheduler"},
    S{"warp.cycles_per_issued_inst", U::cycle, "",
      "smsp__average_warp_latency_per_inst_issued.ratio"},
    S{"warp.cycles_per_issued_inst", U::cycle, kWarp, "Warp Cycles Per Issued Instruction"},
    S{"branch.efficiency_pct", U::percent, "",
      "smsp__sass_average_branch_targets_threads_uniform.pct"},
    S{"branch.efficiency_pct", U::percent, kSource, "Branch Efficiency"},
};

constexpr std::string_view kStallPrefix = "smsp__warp_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_warp_active.pct";

struct FlopOp {
    std::string_view op;
    std::string_view precision;
    double weight;
};

// FLOP per thread instruction as NCU's own roofline sections count them (an FMA is two).
constexpr std::array kFlopOps = {
    FlopOp{"hadd", "fp16", 1},     FlopOp{"hmul", "fp16", 1},     FlopOp{"hfma", "fp16", 2},
    FlopOp{"fadd", "fp32", 1},     FlopOp{"fmul", "fp32", 1},     FlopOp{"ffma", "fp32", 2},
    FlopOp{"dadd", "fp64", 1},     FlopOp{"dmul", "fp64", 1},     FlopOp{"dfma", "fp64", 2},
    FlopOp{"bf16_add", "bf16", 1}, FlopOp{"bf16_mul", "bf16", 1}, FlopOp{"bf16_fma", "bf16", 2},
};

MetricMeaning classify_family(std::string_view metric) {
    MetricMeaning m;
    if (metric.starts_with(kStallPrefix) && metric.ends_with(kStallSuffix) &&
        metric.size() > kStallPrefix.size() + kStallSuffix.size()) {
        const std::string_view reason = metric.substr(
            kStallPrefix.size(), metric.size() - kStallPrefix.size() - kStallSuffix.size());
        m.kind = MetricMeaning::Kind::stall;
        m.fact_id = "stall." + std::string(reason) + "_pct";
        m.unit = BaseUnit::percent;
        return m;
    }
    std::string_view rest = metric;
    if (rest.starts_with("smsp__")) {
        rest.remove_prefix(6);
    } else if (rest.starts_with("sm__")) {
        rest.remove_prefix(4);
    } else {
        return m;
    }
    constexpr std::string_view kOpPrefix = "sass_thread_inst_executed_op_";
    constexpr std::string_view kOpSuffix = "_pred_on.sum";
    if (!rest.starts_with(kOpPrefix) || !rest.ends_with(kOpSuffix)) {
        return m;
    }
    const std::string_view op =
        rest.substr(kOpPrefix.size(), rest.size() - kOpPrefix.size() - kOpSuffix.size());
    for (const FlopOp& f : kFlopOps) {
        if (f.op == op) {
            m.kind = MetricMeaning::Kind::flop;
            m.fact_id = "flop." + std::string(f.precision);
            m.unit = BaseUnit::inst;  // the metric counts instructions; the fact is in flop
            m.flop_weight = f.weight;
            m.flop_op = std::string(f.op);
            return m;
        }
    }
    return m;
}

}  // namespace

std::span<const SemanticSource> semantic_sources() noexcept {
    return kSources;
}

MetricMeaning classify_metric(std::string_view section, std::string_view metric) {
    // A details row first by its display name, then by its name as a raw metric (details pages
    // printed with --print-metric-name name, or the --metrics section).
    for (int pass = 0; pass < 2; ++pass) {
        const std::string_view want_section = pass == 0 ? section : std::string_view();
        if (pass == 0 && section.empty()) {
            continue;
        }
        for (std::size_t i = 0; i < kSources.size(); ++i) {
            if (kSources[i].section == want_section && kSources[i].metric == metric) {
                MetricMeaning m;
                m.kind = MetricMeaning::Kind::direct;
                m.source = i;
                m.fact_id = std::string(kSources[i].fact_id);
                m.unit = kSources[i].unit;
                return m;
            }
        }
    }
    return classify_family(metric);
}

bool is_not_available(std::string_view text) noexcept {
    return text == "n/a" || text == "N/A";
}

namespace {

// Plain decimals with at most 15 significant digits ("1,978,863,004.21", "-0.5", "128"), the
// bulk of every export: the digits form an integer below 2^53 and 10^k (k <= 15) is exact, so one
// IEEE division gives the correctly rounded value, the same double from_chars gives (Clinger's
// fast path). Anything else (exponents, more digits, odd separators) returns nullopt and takes
// the general path. A benchmark showed from_chars at a third of the raw-page import time.
std::optional<double> plain_decimal(std::string_view text) noexcept {
    static constexpr std::array<double, 16> kPow10 = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    std::size_t i = 0;
    const bool negative = text[0] == '-';
    if (negative || text[0] == '+') {
        ++i;
    }
    std::uint64_t mantissa = 0;
    int digits = 0;
    int fraction = 0;
    int run = 0;  // digits since the last separator, in the integer part
    bool seen_separator = false;
    bool in_fraction = false;
    const std::size_t start = i;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c >= '0' && c <= '9') {
            mantissa = mantissa * 10 + static_cast<std::uint64_t>(c - '0');
            if (mantissa != 0 || digits != 0) {
                ++digits;
            }
            if (in_fraction) {
                if (++fraction > 15) {
                    return std::nullopt;
                }
            } else {
                ++run;
            }
            if (digits > 15) {
                return std::nullopt;
            }
        } else if (c == ',' && !in_fraction) {
            if (run == 0 || run > 3 || (seen_separator && run != 3)) {
                return std::nullopt;
            }
            seen_separator = true;
            run = 0;
        } else if (c == '.' && !in_fraction) {
            if (seen_separator && run != 3) {
                return std::nullopt;
            }
            in_fraction = true;
            if (i + 1 == text.size()) {
                return std::nullopt;  // "1." : let the general path decide
            }
        } else {
            return std::nullopt;
        }
    }
    if (i == start || (!in_fraction && seen_separator && run != 3) ||
        (in_fraction && fraction == 0)) {
        return std::nullopt;
    }
    if (start < text.size() && text[start] == '.') {
        return std::nullopt;  // ".5": general path
    }
    const double value = static_cast<double>(mantissa) / kPow10[static_cast<std::size_t>(fraction)];
    return negative ? -value : value;
}

// The shape plain_decimal accepts, without its limit of 15 significant digits (a longer number
// goes to from_chars, which takes it too): optional sign, digits in groups of three after the
// first when separated, an optional fraction. Nothing is computed: most metrics only need to be
// known to be numbers (an unmodeled text value is counted), and this is most of a raw page.
bool plain_decimal_shape(std::string_view text) noexcept {
    const char* p = text.data();
    const char* const end = p + text.size();
    if (p != end && (*p == '-' || *p == '+')) {
        ++p;
    }
    int run = 0;  // digits since the last separator
    bool separated = false;
    for (; p != end; ++p) {
        if (static_cast<unsigned>(static_cast<unsigned char>(*p) - '0') < 10) {
            ++run;
            continue;
        }
        if (*p != ',') {
            break;
        }
        if (run == 0 || run > 3 || (separated && run != 3)) {
            return false;
        }
        separated = true;
        run = 0;
    }
    if (run == 0 || (separated && run != 3)) {
        return false;
    }
    if (p == end) {
        return true;
    }
    if (*p != '.' || ++p == end) {
        return false;
    }
    for (; p != end; ++p) {
        if (static_cast<unsigned>(static_cast<unsigned char>(*p) - '0') >= 10) {
            return false;
        }
    }
    return true;
}

// High bit of each byte of `w` equal to `c`, exact for every byte.
std::uint64_t bytes_equal_exact(std::uint64_t w, unsigned char c) noexcept {
    constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
    const std::uint64_t x = w ^ (0x0101010101010101ULL * c);
    return ~(((x & kLow7) + kLow7) | x) & ~kLow7;
}

// plain_decimal_shape for n <= 8 bytes held in the low bytes of w: true only when the shape is
// certain (digits; digits with separators; one fraction), false meaning "ask the scalar check".
bool plain_decimal_word(std::uint64_t w, std::size_t n) noexcept {
    constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    const std::uint64_t high =
        ~kLow7 & (n == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1);
    const std::uint64_t x = w ^ (kOnes * '0');  // digits become 0..9
    const std::uint64_t non_digit = (((x & kLow7) + kOnes * (0x80 - 10)) | x) & high;
    if (non_digit == 0) {
        return true;  // "0", "384", "1980000"
    }
    const std::uint64_t comma = bytes_equal_exact(w, ',') & high;
    const std::uint64_t dot = bytes_equal_exact(w, '.') & high;
    if ((non_digit & ~(comma | dot)) != 0 || (dot & (dot - 1)) != 0) {
        return false;  // a sign, an exponent, a letter, two dots
    }
    const std::size_t integer = dot == 0 ? n : static_cast<std::size_t>(std::countr_zero(dot)) / 8;
    if (integer == 0 || (dot != 0 && integer + 1 == n)) {
        return false;  // ".5", "1."
    }
    if (comma == 0) {
        return true;  // "52.88"
    }
    // The one separator a value of at most 8 bytes can hold sits 3 digits before the integer end.
    return integer >= 5 && comma == std::uint64_t{0x80} << (8 * (integer - 4));
}

}  // namespace

bool is_ncu_number_padded(std::string_view text) noexcept {
    if (text.size() - 1 < 8) {  // 1..8 bytes
        std::uint64_t w = 0;
        std::memcpy(&w, text.data(), 8);
        if constexpr (std::endian::native == std::endian::big) {
            w = __builtin_bswap64(w);
        }
        if (plain_decimal_word(w, text.size())) {
            return true;
        }
    }
    return is_ncu_number(text);
}

bool is_ncu_number(std::string_view text) noexcept {
    if (text.empty() || text.size() > 64) {
        return false;
    }
    return plain_decimal_shape(text) || parse_ncu_number(text).has_value();
}

std::optional<double> parse_ncu_number(std::string_view text) noexcept {
    if (text.empty() || text.size() > 64) {
        return std::nullopt;
    }
    if (const auto fast = plain_decimal(text)) {
        return fast;
    }
    // Text ("No-CC", "n/a", a device name): from_chars would take no digit, or only inf or nan,
    // which are refused below anyway. A raw page has a few such cells per row.
    const std::size_t plus = text[0] == '+' ? 1 : 0;
    const std::size_t minus = plus < text.size() && text[plus] == '-' ? 1 : 0;
    const std::size_t lead = plus + minus;
    if (lead == text.size() || (text[lead] != '.' && (text[lead] < '0' || text[lead] > '9'))) {
        return std::nullopt;
    }
    // Copy without thousands separators; a separator must sit between digits of the integer part.
    std::array<char, 64> buf{};
    std::size_t n = 0;
    bool in_integer_part = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ',') {
            const auto digit = [&](std::size_t k) {
                return k < text.size() && text[k] >= '0' && text[k] <= '9';
            };
            const bool grouped = i > 0 && digit(i - 1) && digit(i + 1) && digit(i + 2) &&
                                 digit(i + 3) && !digit(i + 4);
            if (!in_integer_part || !grouped) {
                return std::nullopt;
            }
            continue;
        }
        if (c == '.' || c == 'e' || c == 'E') {
            in_integer_part = false;
        }
        buf[n++] = c;
    }
    const char* first = buf.data();
    const char* last = buf.data() + n;
    if (*first == '+') {
        ++first;
    }
    double value = 0;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

}  // namespace cko::profile::ncu
