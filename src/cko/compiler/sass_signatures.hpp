// SASS signatures: named instruction classes matched on exact base opcodes and modifiers.
#pragma once

#include "cko/compiler/sass_listing.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace cko::compiler {

// A signature matches an instruction when its base opcode is one of `opcodes` (exactly: HMMA is
// not HFMA2.MMA, RED is not REDUX, STS is not LDGSTS) and, when `modifier` is set, the opcode
// carries that modifier exactly (LDG.E.128 has "128"; LDG.E.64 does not).
struct SassSignature {
    std::string_view name;  // the fact ids are sass.has.<name> and sass.count.<name>
    std::span<const std::string_view> opcodes;
    std::string_view modifier;  // empty = any
    std::string_view meaning;
};

[[nodiscard]] std::span<const SassSignature> sass_signatures() noexcept;

// The signature of that name, or nullptr.
[[nodiscard]] const SassSignature* find_signature(std::string_view name) noexcept;

[[nodiscard]] bool signature_matches(const SassSignature& sig, const SassOpcode& op) noexcept;

// Instructions of `kernel` that match `sig` (from its mnemonic counts).
[[nodiscard]] std::uint64_t signature_count(const SassSignature& sig, const SassKernel& kernel);

}  // namespace cko::compiler
