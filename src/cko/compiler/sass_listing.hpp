// SASS text of `cuobjdump --dump-sass` and `nvdisasm`: kernels, architectures, opcode counts.
#pragma once

#include "cko/util/closed_enum.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cko::compiler {

#define CKO_SASS_DIALECTS(X) X(cuobjdump) X(nvdisasm)
CKO_CLOSED_ENUM(SassDialect, CKO_SASS_DIALECTS, sass_dialect_name, sass_dialect_from_name)
#undef CKO_SASS_DIALECTS

// One instruction's opcode split at its dots: "LDG.E.128.CONSTANT" -> LDG + {E, 128, CONSTANT}.
struct SassOpcode {
    std::string base;
    std::vector<std::string> modifiers;
};

[[nodiscard]] SassOpcode split_opcode(std::string_view opcode);

struct SassKernel {
    std::string symbol;  // as the tool printed it (mangled)
    std::string name;    // demangled
    std::string arch;    // "sm_90a"; the suffix is kept, never dropped
    std::uint64_t instructions = 0;
    std::map<std::string, std::uint64_t> opcode_counts;    // base opcode -> count
    std::map<std::string, std::uint64_t> mnemonic_counts;  // opcode with modifiers -> count
};

struct SassListing {
    SassDialect dialect = SassDialect::cuobjdump;
    std::vector<SassKernel> kernels;
    std::vector<std::string> architectures;       // in order of appearance, distinct
    std::size_t unrecognized_lines = 0;           // kept out of every count; see first_unrecognized
    std::vector<std::string> first_unrecognized;  // up to 5, for the reader
};

// Parses either dialect (told apart by structure: `.section .text.` marks nvdisasm). Throws
// unsupported_format when the text holds no SASS instruction of any kernel, with the fix.
[[nodiscard]] SassListing parse_sass_text(std::string_view text, std::string_view source_name);

// Whether `arch` is an SM architecture spelling: sm_ + 2–3 digits + an optional suffix letter
// (sm_80, sm_90a, sm_100a, sm_100f, sm_120). Families are not listed: any such number passes.
[[nodiscard]] bool is_sm_arch(std::string_view arch) noexcept;

// The SM an ELF `.headerflags` line states ("EF_CUDA_SM80" → "sm_80"; with EF_CUDA_ACCELERATORS
// "EF_CUDA_SM90" → "sm_90a"), or "" when it states none.
[[nodiscard]] std::string arch_from_header_flags(std::string_view line);

}  // namespace cko::compiler
