// `cko sass FILE`: a SASS text dump, or a CUDA binary disassembled with cuobjdump when it exists.
#pragma once

#include "cko/compiler/sass_report.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace cko::compiler {

#define CKO_BINARY_KINDS(X) X(not_binary) X(elf) X(fatbin)
CKO_CLOSED_ENUM(BinaryKind, CKO_BINARY_KINDS, binary_kind_name, binary_kind_from_name)
#undef CKO_BINARY_KINDS

// ELF (a cubin or a host executable/library with an embedded fatbin) or a bare fatbin, by magic.
[[nodiscard]] BinaryKind sniff_binary(std::string_view first_bytes) noexcept;

struct SassInputOptions {
    // The disassembler: a path, or a name looked up in PATH, $CUDA_HOME/bin and
    // /usr/local/cuda/bin.
    std::string cuobjdump = "cuobjdump";
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
    std::uint64_t max_text_bytes = std::uint64_t{512} << 20;
};

// Where `name` would run from (empty when it is nowhere): the lookup SassInputOptions describes.
[[nodiscard]] std::string find_cuda_tool(const std::string& name);

// Reads `path`: text is parsed as it is; a binary goes through `cuobjdump --dump-sass` (tool_failed
// with the three ways out when the tool is missing or fails).
[[nodiscard]] SassReport load_sass(const std::filesystem::path& path,
                                   const SassInputOptions& options);

}  // namespace cko::compiler
