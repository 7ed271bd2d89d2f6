// The fact-id vocabulary table: every id a parser emits that knowledge triggers may name.
#include "cko/fact/fact_id.hpp"

#include <array>
#include <string>

namespace cko::fact {
namespace {

using P = Producer;

// NCU ids are those of profile/ncu/ncu_metrics.cpp with the "ncu." prefix; SASS signature ids are
// those of compiler/sass_signatures.cpp (a test there checks that each one is listed here).
constexpr std::array kVocabulary = {
    FactIdSpec{"ncu.duration", P::ncu, "ns", "kernel duration (gpu__time_duration.sum)"},
    FactIdSpec{"ncu.cycles.elapsed", P::ncu, "cycle", "elapsed GPC cycles"},
    FactIdSpec{"ncu.cycles.sm_active", P::ncu, "cycle", "cycles with an SM active"},
    FactIdSpec{"ncu.clock.sm", P::ncu, "Hz", "SM clock during the launch"},
    FactIdSpec{"ncu.clock.dram", P::ncu, "Hz", "DRAM clock during the launch"},
    FactIdSpec{"ncu.dram.bytes", P::ncu, "byte", "DRAM bytes moved"},
    FactIdSpec{"ncu.dram.bytes_read", P::ncu, "byte", "DRAM bytes read"},
    FactIdSpec{"ncu.dram.bytes_write", P::ncu, "byte", "DRAM bytes written"},
    FactIdSpec{"ncu.dram.throughput", P::ncu, "byte/s", "DRAM bandwidth achieved"},
    FactIdSpec{"ncu.dram.throughput_pct", P::ncu, "%", "DRAM throughput, % of peak"},
    FactIdSpec{"ncu.memory.throughput_pct", P::ncu, "%", "memory-system throughput, % of peak"},
    FactIdSpec{"ncu.sm.throughput_pct", P::ncu, "%", "SM throughput, % of peak"},
    FactIdSpec{"ncu.sm.busy_pct", P::ncu, "%", "SM busy, %"},
    FactIdSpec{"ncu.l1.throughput_pct", P::ncu, "%", "L1/TEX throughput, % of peak"},
    FactIdSpec{"ncu.l2.throughput_pct", P::ncu, "%", "L2 throughput, % of peak"},
    FactIdSpec{"ncu.l1.hit_rate_pct", P::ncu, "%", "L1/TEX sector hit rate"},
    FactIdSpec{"ncu.l2.hit_rate_pct", P::ncu, "%", "L2 sector hit rate"},
    FactIdSpec{"ncu.occupancy.achieved_pct", P::ncu, "%", "achieved occupancy"},
    FactIdSpec{"ncu.occupancy.theoretical_pct", P::ncu, "%", "theoretical occupancy"},
    FactIdSpec{"ncu.occupancy.achieved_warps_per_sm", P::ncu, "count", "active warps per SM"},
    FactIdSpec{"ncu.occupancy.limit_registers", P::ncu, "count", "block limit from registers"},
    FactIdSpec{"ncu.occupancy.limit_shared_mem", P::ncu, "count", "block limit from shared memory"},
    FactIdSpec{"ncu.occupancy.limit_warps", P::ncu, "count", "block limit from warps"},
    FactIdSpec{"ncu.occupancy.limit_blocks", P::ncu, "count", "block limit of the SM"},
    FactIdSpec{"ncu.occupancy.limit_barriers", P::ncu, "count", "block limit from barriers"},
    FactIdSpec{"ncu.launch.registers_per_thread", P::ncu, "count", "registers per thread"},
    FactIdSpec{"ncu.launch.shared_mem_static_per_block", P::ncu, "byte", "static shared memory"},
    FactIdSpec{"ncu.launch.shared_mem_dynamic_per_block", P::ncu, "byte", "dynamic shared memory"},
    FactIdSpec{"ncu.launch.shared_mem_driver_per_block", P::ncu, "byte",
               "driver-reserved shared memory"},
    FactIdSpec{"ncu.launch.shared_mem_config", P::ncu, "byte", "shared memory carve-out"},
    FactIdSpec{"ncu.launch.block_size", P::ncu, "count", "threads per block"},
    FactIdSpec{"ncu.launch.grid_size", P::ncu, "count", "blocks per grid"},
    FactIdSpec{"ncu.launch.threads", P::ncu, "count", "threads launched"},
    FactIdSpec{"ncu.launch.sm_count", P::ncu, "count", "SMs on the device"},
    FactIdSpec{"ncu.launch.waves_per_sm", P::ncu, "count", "waves of blocks per SM"},
    FactIdSpec{"ncu.inst.executed", P::ncu, "inst", "warp instructions executed"},
    FactIdSpec{"ncu.inst.issued", P::ncu, "inst", "warp instructions issued"},
    FactIdSpec{"ncu.ipc.executed", P::ncu, "inst/cycle", "executed IPC"},
    FactIdSpec{"ncu.ipc.issued", P::ncu, "inst/cycle", "issued IPC"},
    FactIdSpec{"ncu.issue.active_pct", P::ncu, "%", "issue active"},
    FactIdSpec{"ncu.issue.slots_busy_pct", P::ncu, "%", "issue slots busy"},
    FactIdSpec{"ncu.scheduler.active_warps", P::ncu, "count", "active warps per scheduler"},
    FactIdSpec{"ncu.scheduler.eligible_warps", P::ncu, "count", "eligible warps per scheduler"},
    FactIdSpec{"ncu.scheduler.issue_active_pct", P::ncu, "%", "cycles a scheduler issued"},
    FactIdSpec{"ncu.scheduler.no_eligible_pct", P::ncu, "%", "cycles with no eligible warp"},
    FactIdSpec{"ncu.warp.cycles_per_issued_inst", P::ncu, "cycle",
               "warp cycles per issued instruction"},
    FactIdSpec{"ncu.branch.efficiency_pct", P::ncu, "%", "branch efficiency"},
    FactIdSpec{"ncu.tensor.pipe_pct", P::ncu, "%", "tensor pipe utilisation"},
    FactIdSpec{"ncu.flop.*", P::ncu, "flop", "FLOP by precision (fp16, fp32, fp64, bf16)"},
    FactIdSpec{"ncu.stall.*_pct", P::ncu, "%", "warp stall reason, % of active warp cycles"},
    FactIdSpec{"ncu.rule.*.estimated_speedup_pct", P::ncu, "%", "an NCU rule's estimated speedup"},
    FactIdSpec{"ncu.roofline.*", P::ncu, "ratio", "roofline placement values"},

    FactIdSpec{"sass.instructions", P::sass, "count", "instructions of the kernel"},
    FactIdSpec{"sass.opcode.*", P::sass, "count", "instructions with this base opcode"},
    FactIdSpec{"sass.has.hgmma", P::sass, "count",
               "1 when HGMMA (Hopper warpgroup MMA) is present"},
    FactIdSpec{"sass.has.qgmma", P::sass, "count",
               "1 when QGMMA (Hopper FP8 warpgroup MMA) is present"},
    FactIdSpec{"sass.has.igmma", P::sass, "count",
               "1 when IGMMA (Hopper integer warpgroup MMA) is present"},
    FactIdSpec{"sass.has.hmma", P::sass, "count", "1 when HMMA (warp-level MMA) is present"},
    FactIdSpec{"sass.has.imma", P::sass, "count",
               "1 when IMMA (integer warp-level MMA) is present"},
    FactIdSpec{"sass.has.utchmma", P::sass, "count",
               "1 when UTCHMMA (Blackwell tcgen05 MMA, f16 kinds) is present"},
    FactIdSpec{"sass.has.tensor_core", P::sass, "count",
               "1 when any tensor-core MMA opcode is present"},
    FactIdSpec{"sass.has.utmaldg", P::sass, "count", "1 when a TMA tensor load is present"},
    FactIdSpec{"sass.has.utmastg", P::sass, "count", "1 when a TMA tensor store is present"},
    FactIdSpec{"sass.has.ldgsts", P::sass, "count",
               "1 when an async global-to-shared copy is present"},
    FactIdSpec{"sass.has.ldg_128", P::sass, "count", "1 when a 128-bit global load is present"},
    FactIdSpec{"sass.has.stg_128", P::sass, "count", "1 when a 128-bit global store is present"},
    FactIdSpec{"sass.has.local_memory", P::sass, "count",
               "1 when LDL or STL (local memory) is present"},
    FactIdSpec{"sass.has.mufu", P::sass, "count", "1 when MUFU (special function unit) is present"},
    FactIdSpec{"sass.has.block_barrier", P::sass, "count", "1 when a BAR barrier is present"},
    FactIdSpec{"sass.has.mbarrier", P::sass, "count",
               "1 when SYNCS (mbarrier) operations are present"},
    FactIdSpec{"sass.has.global_atomic", P::sass, "count", "1 when ATOM/ATOMG/RED is present"},
    FactIdSpec{"sass.has.shared_atomic", P::sass, "count", "1 when ATOMS is present"},
    FactIdSpec{"sass.has.shuffle", P::sass, "count", "1 when SHFL is present"},
    FactIdSpec{"sass.count.*", P::sass, "count",
               "instructions matching a signature (names of sass.has.*)"},

    FactIdSpec{"ptxas.registers", P::ptxas, "count", "registers per thread"},
    FactIdSpec{"ptxas.barriers", P::ptxas, "count", "named barriers used"},
    FactIdSpec{"ptxas.stack_frame_bytes", P::ptxas, "byte", "stack frame per thread"},
    FactIdSpec{"ptxas.spill_stores_bytes", P::ptxas, "byte", "bytes of spill stores"},
    FactIdSpec{"ptxas.spill_loads_bytes", P::ptxas, "byte", "bytes of spill loads"},
    FactIdSpec{"ptxas.cumulative_stack_bytes", P::ptxas, "byte", "stack including callees"},
    FactIdSpec{"ptxas.shared_bytes", P::ptxas, "byte", "static shared memory"},
    FactIdSpec{"ptxas.constant_bytes", P::ptxas, "byte", "constant memory, all banks"},
    FactIdSpec{"ptxas.local_bytes", P::ptxas, "byte", "local memory (lmem) per thread"},

    FactIdSpec{"triton.num_warps", P::triton, "count", "warps per program"},
    FactIdSpec{"triton.num_stages", P::triton, "count", "software pipelining stages"},
    FactIdSpec{"triton.num_ctas", P::triton, "count", "CTAs per cluster"},
    FactIdSpec{"triton.shared_bytes", P::triton, "byte", "shared memory the kernel needs"},

    FactIdSpec{"map.gpu_idle_share", P::map, "ratio", "share of the window with no GPU work"},
    FactIdSpec{"map.gpu_busy_share", P::map, "ratio", "share of the window with GPU work"},
    FactIdSpec{"map.copy_share", P::map, "ratio", "share of GPU time in memcpy/memset"},
    FactIdSpec{"map.copy_overlap_share", P::map, "ratio",
               "share of copy time overlapped by kernels"},
    FactIdSpec{"map.comm_share", P::map, "ratio", "share of GPU time in communication kernels"},
    FactIdSpec{"map.comm_overlap_share", P::map, "ratio",
               "share of communication overlapped by compute"},
    FactIdSpec{"map.sync_share", P::map, "ratio", "share of CPU time in synchronising calls"},
    FactIdSpec{"map.kernel_count", P::map, "count", "kernels in the window"},
    FactIdSpec{"map.median_kernel_ns", P::map, "ns", "median kernel duration"},
};

bool is_wild_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::span<const FactIdSpec> fact_vocabulary() noexcept {
    return kVocabulary;
}

bool fact_id_matches(std::string_view pattern, std::string_view id) noexcept {
    const std::size_t star = pattern.find('*');
    if (star == std::string_view::npos) {
        return pattern == id;
    }
    const std::string_view head = pattern.substr(0, star);
    const std::string_view tail = pattern.substr(star + 1);
    if (id.size() <= head.size() + tail.size() || !id.starts_with(head) || !id.ends_with(tail)) {
        return false;
    }
    const std::string_view middle = id.substr(head.size(), id.size() - head.size() - tail.size());
    for (char c : middle) {
        if (!is_wild_char(c)) {
            return false;
        }
    }
    return true;
}

const FactIdSpec* lookup_fact_id(std::string_view id) noexcept {
    for (const FactIdSpec& spec : kVocabulary) {
        if (fact_id_matches(spec.pattern, id)) {
            return &spec;
        }
    }
    return nullptr;
}

std::string qualified_fact_id(Producer producer, std::string_view id) {
    const std::string prefix = std::string(producer_name(producer)) + ".";
    if (id.starts_with(prefix)) {
        return std::string(id);
    }
    return prefix + std::string(id);
}

}  // namespace cko::fact
