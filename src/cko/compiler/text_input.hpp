// Reading compiler output files as text: size cap, binary refusal, valid UTF-8, one line at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace cko::compiler {

struct TextInput {
    std::string path;    // as given, for messages
    std::string text;    // valid UTF-8 (ill-formed bytes replaced by U+FFFD)
    std::string sha256;  // of the bytes as read
    std::uint64_t size_bytes = 0;
};

// Reads `path` (≤ max_bytes); throws not_found, file_too_large, empty_input, or binary_input (a
// NUL byte: the caller may have meant the binary path, and the message says so).
[[nodiscard]] TextInput read_text_input(const std::filesystem::path& path, std::uint64_t max_bytes,
                                        std::string_view what);

// `bytes` with every ill-formed UTF-8 sequence replaced by U+FFFD.
[[nodiscard]] std::string valid_utf8(std::string_view bytes);

// Calls `line` for each line (without '\n' or a trailing '\r'), with its 1-based number.
void for_each_line(std::string_view text,
                   const std::function<void(std::string_view, std::size_t)>& line);

// Leading and trailing spaces and tabs removed.
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;

// Demangled C++ name of a kernel symbol, or the symbol itself when it is not a mangled name.
[[nodiscard]] std::string demangle(const std::string& symbol);

}  // namespace cko::compiler
