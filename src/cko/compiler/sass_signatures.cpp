// The signature table. Opcode names were checked against cuobjdump/nvdisasm 13.0 dumps of the
// kernels in tests/fixtures/compiler/ (sm_80, sm_89, sm_90, sm_90a, sm_100a, sm_120).
#include "cko/compiler/sass_signatures.hpp"

#include <algorithm>
#include <array>

namespace cko::compiler {
namespace {

using O = std::string_view;
constexpr std::array<O, 1> kHgmma{"HGMMA"};
constexpr std::array<O, 1> kQgmma{"QGMMA"};
constexpr std::array<O, 1> kIgmma{"IGMMA"};
constexpr std::array<O, 1> kHmma{"HMMA"};
constexpr std::array<O, 1> kImma{"IMMA"};
constexpr std::array<O, 1> kUtchmma{"UTCHMMA"};
// Blackwell's other tcgen05 MMA kinds (fp8/fp6/fp4, integer, block-scaled) are left out until a
// fixture of ours shows their spelling; UTCHMMA is tcgen05.mma kind::f16 (tcgen05.sm_100a.*).
constexpr std::array<O, 7> kTensor{"HMMA", "IMMA", "DMMA", "HGMMA", "QGMMA", "IGMMA", "UTCHMMA"};
constexpr std::array<O, 1> kUtmaldg{"UTMALDG"};
constexpr std::array<O, 1> kUtmastg{"UTMASTG"};
constexpr std::array<O, 1> kLdgsts{"LDGSTS"};
constexpr std::array<O, 1> kLdg{"LDG"};
constexpr std::array<O, 1> kStg{"STG"};
constexpr std::array<O, 2> kLocal{"LDL", "STL"};
constexpr std::array<O, 1> kMufu{"MUFU"};
constexpr std::array<O, 1> kBar{"BAR"};
constexpr std::array<O, 1> kSyncs{"SYNCS"};
constexpr std::array<O, 4> kGlobalAtomic{"ATOM", "ATOMG", "RED", "REDG"};
constexpr std::array<O, 1> kSharedAtomic{"ATOMS"};
constexpr std::array<O, 1> kShfl{"SHFL"};

constexpr std::array kSignatures = {
    SassSignature{"hgmma", kHgmma, "", "Hopper warpgroup MMA, fp16/bf16/tf32 (wgmma.mma_async)"},
    SassSignature{"qgmma", kQgmma, "", "Hopper warpgroup MMA, fp8"},
    SassSignature{"igmma", kIgmma, "", "Hopper warpgroup MMA, integer"},
    SassSignature{"hmma", kHmma, "", "warp-level MMA, fp16/bf16/tf32 (mma.sync, wmma)"},
    SassSignature{"imma", kImma, "", "warp-level MMA, integer"},
    SassSignature{"utchmma", kUtchmma, "",
                  "Blackwell tcgen05 MMA into tensor memory, kind::f16 (sm_100a)"},
    SassSignature{"tensor_core", kTensor, "", "any tensor-core MMA opcode of the table"},
    SassSignature{"utmaldg", kUtmaldg, "", "TMA tensor load (cp.async.bulk.tensor global->shared)"},
    SassSignature{"utmastg", kUtmastg, "", "TMA tensor store (shared->global)"},
    SassSignature{"ldgsts", kLdgsts, "", "async copy global->shared (cp.async)"},
    SassSignature{"ldg_128", kLdg, "128", "128-bit global load"},
    SassSignature{"stg_128", kStg, "128", "128-bit global store"},
    SassSignature{
        "local_memory", kLocal, "",
        "local-memory load/store: register spills or a local array (ptxas -v tells which)"},
    SassSignature{"mufu", kMufu, "", "special function unit (exp2, rcp, rsqrt, sin ...)"},
    SassSignature{"block_barrier", kBar, "", "CTA barrier (__syncthreads, named barriers)"},
    SassSignature{"mbarrier", kSyncs, "", "mbarrier operations (arrive, expect-tx, try-wait)"},
    SassSignature{"global_atomic", kGlobalAtomic, "", "global atomics and reductions"},
    SassSignature{"shared_atomic", kSharedAtomic, "", "shared-memory atomics"},
    SassSignature{"shuffle", kShfl, "", "warp shuffles"},
};

}  // namespace

std::span<const SassSignature> sass_signatures() noexcept {
    return kSignatures;
}

const SassSignature* find_signature(std::string_view name) noexcept {
    for (const SassSignature& s : kSignatures) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

bool signature_matches(const SassSignature& sig, const SassOpcode& op) noexcept {
    if (std::find(sig.opcodes.begin(), sig.opcodes.end(), op.base) == sig.opcodes.end()) {
        return false;
    }
    return sig.modifier.empty() ||
           std::find(op.modifiers.begin(), op.modifiers.end(), sig.modifier) != op.modifiers.end();
}

std::uint64_t signature_count(const SassSignature& sig, const SassKernel& kernel) {
    std::uint64_t n = 0;
    for (const auto& [mnemonic, count] : kernel.mnemonic_counts) {
        if (signature_matches(sig, split_opcode(mnemonic))) {
            n += count;
        }
    }
    return n;
}

}  // namespace cko::compiler
