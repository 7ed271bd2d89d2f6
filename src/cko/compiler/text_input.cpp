// Compiler output as text: the one place where outside bytes become valid UTF-8 lines.
#include "cko/compiler/text_input.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

namespace cko::compiler {

std::string valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::size_t n = bytes.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        std::size_t len = 0;
        std::uint32_t min = 0;
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            min = 0x10000;
        }
        bool ok = len != 0 && i + len <= n;
        std::uint32_t cp = len == 0 ? 0 : c & (0x7F >> len);
        for (std::size_t k = 1; ok && k < len; ++k) {
            ok = (p[i + k] & 0xC0) == 0x80;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        if (ok) {
            out.append(bytes.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

TextInput read_text_input(const std::filesystem::path& path, std::uint64_t max_bytes,
                          std::string_view what) {
    const std::string bytes = read_file_capped(path, max_bytes);
    if (bytes.empty()) {
        throw Error(ErrorCode::empty_input, fmt::format("{} '{}' is empty", what, path.string()),
                    Json{{"path", path.string()}});
    }
    if (bytes.find('\0') != std::string::npos) {
        throw Error(
            ErrorCode::binary_input,
            fmt::format("{} '{}' holds NUL bytes: it is not text output", what, path.string()),
            Json{{"path", path.string()}});
    }
    TextInput in;
    in.path = path.string();
    in.sha256 = sha256_hex(bytes);
    in.size_bytes = bytes.size();
    in.text = valid_utf8(bytes);
    return in;
}

void for_each_line(std::string_view text,
                   const std::function<void(std::string_view, std::size_t)>& line) {
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view l = text.substr(start, end - start);
        if (!l.empty() && l.back() == '\r') {
            l.remove_suffix(1);
        }
        line(l, ++number);
        start = end + 1;
    }
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

std::string demangle(const std::string& symbol) {
    if (!symbol.starts_with("_Z")) {
        return symbol;
    }
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> name(
        abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && name ? valid_utf8(name.get()) : symbol;
}

}  // namespace cko::compiler
