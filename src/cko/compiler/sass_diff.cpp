// SASS diff: kernels matched by symbol and architecture; counts compared, never interpreted.
#include "cko/compiler/sass_diff.hpp"

#include "cko/compiler/sass_signatures.hpp"

#include <set>

namespace cko::compiler {
namespace {

const SassKernel* find_kernel(const SassListing& l, const std::string& symbol,
                              const std::string& arch) {
    for (const SassKernel& k : l.kernels) {
        if (k.symbol == symbol && k.arch == arch) {
            return &k;
        }
    }
    return nullptr;
}

Json changes_json(const std::vector<CountChange>& changes) {
    Json out = Json::array();
    for (const CountChange& c : changes) {
        out.push_back(
            Json{{"name", c.name},
                 {"a", c.a},
                 {"b", c.b},
                 {"delta", static_cast<std::int64_t>(c.b) - static_cast<std::int64_t>(c.a)}});
    }
    return out;
}

Json side_json(const std::vector<std::pair<std::string, std::string>>& side) {
    Json out = Json::array();
    for (const auto& [symbol, arch] : side) {
        out.push_back(Json{{"symbol", symbol}, {"arch", arch}});
    }
    return out;
}

}  // namespace

SassDiff diff_sass(const SassReport& a, const SassReport& b) {
    SassDiff diff;
    for (const SassKernel& ka : a.listing.kernels) {
        const SassKernel* kb = find_kernel(b.listing, ka.symbol, ka.arch);
        if (kb == nullptr) {
            diff.only_in_a.emplace_back(ka.symbol, ka.arch);
            continue;
        }
        SassKernelDiff d;
        d.symbol = ka.symbol;
        d.name = ka.name;
        d.arch = ka.arch;
        d.instructions_a = ka.instructions;
        d.instructions_b = kb->instructions;
        for (const SassSignature& sig : sass_signatures()) {
            const std::uint64_t ca = signature_count(sig, ka);
            const std::uint64_t cb = signature_count(sig, *kb);
            if (ca != cb) {
                d.signatures.push_back({std::string(sig.name), ca, cb});
            }
        }
        std::set<std::string> opcodes;
        for (const auto& [op, n] : ka.opcode_counts) {
            opcodes.insert(op);
        }
        for (const auto& [op, n] : kb->opcode_counts) {
            opcodes.insert(op);
        }
        for (const std::string& op : opcodes) {
            const auto ia = ka.opcode_counts.find(op);
            const auto ib = kb->opcode_counts.find(op);
            const std::uint64_t ca = ia == ka.opcode_counts.end() ? 0 : ia->second;
            const std::uint64_t cb = ib == kb->opcode_counts.end() ? 0 : ib->second;
            if (ca != cb) {
                d.opcodes.push_back({op, ca, cb});
            }
        }
        diff.kernels.push_back(std::move(d));
    }
    for (const SassKernel& kb : b.listing.kernels) {
        if (find_kernel(a.listing, kb.symbol, kb.arch) == nullptr) {
            diff.only_in_b.emplace_back(kb.symbol, kb.arch);
        }
    }
    return diff;
}

Json sass_diff_to_json(const SassDiff& diff, const SassReport& a, const SassReport& b) {
    Json kernels = Json::array();
    for (const SassKernelDiff& d : diff.kernels) {
        kernels.push_back(Json{{"symbol", d.symbol},
                               {"name", d.name},
                               {"arch", d.arch},
                               {"instructions", {{"a", d.instructions_a}, {"b", d.instructions_b}}},
                               {"signatures", changes_json(d.signatures)},
                               {"opcodes", changes_json(d.opcodes)}});
    }
    return Json{{"format_version", "cko/sass-diff-v1"},   {"a", profile::source_to_json(a.source)},
                {"b", profile::source_to_json(b.source)}, {"kernels", kernels},
                {"only_in_a", side_json(diff.only_in_a)}, {"only_in_b", side_json(diff.only_in_b)}};
}

}  // namespace cko::compiler
