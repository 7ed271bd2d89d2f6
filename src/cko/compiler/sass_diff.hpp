// `cko sass diff A B`: per kernel (symbol + architecture), what changed in the instruction mix.
#pragma once

#include "cko/compiler/sass_report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cko::compiler {

struct CountChange {
    std::string name;  // an opcode or a signature
    std::uint64_t a = 0;
    std::uint64_t b = 0;
};

struct SassKernelDiff {
    std::string symbol;
    std::string name;
    std::string arch;
    std::uint64_t instructions_a = 0;
    std::uint64_t instructions_b = 0;
    std::vector<CountChange> signatures;  // only those whose count changed
    std::vector<CountChange> opcodes;     // only those whose count changed
};

struct SassDiff {
    std::vector<SassKernelDiff> kernels;
    std::vector<std::pair<std::string, std::string>> only_in_a;  // (symbol, arch)
    std::vector<std::pair<std::string, std::string>> only_in_b;
};

[[nodiscard]] SassDiff diff_sass(const SassReport& a, const SassReport& b);

[[nodiscard]] Json sass_diff_to_json(const SassDiff& diff, const SassReport& a,
                                     const SassReport& b);

}  // namespace cko::compiler
