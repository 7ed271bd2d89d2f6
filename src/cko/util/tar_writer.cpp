// The ustar writer: fixed metadata so the same files in the same order give the same bytes, and a
// pax `path` record for a path a ustar header cannot hold.
#include "cko/util/tar.hpp"

#include "cko/util/json.hpp"
#include "cko/util/tar_format.hpp"

#include <fmt/format.h>

#include <cstring>

namespace cko {
namespace {
using namespace tar_format;

constexpr std::uint64_t kMaxOctal11 = (std::uint64_t{1} << 33) - 1;  // 11 octal digits

void put_text(Block& b, Field f, std::string_view text) {
    std::memcpy(b.data() + f.at, text.data(), std::min(text.size(), f.size));
}

// `value` as f.size - 1 octal digits and a NUL.
void put_octal(Block& b, Field f, std::uint64_t value) {
    put_text(b, f, fmt::format("{:0{}o}", value, f.size - 1));
}

Block header(std::string_view name, std::string_view prefix, std::uint64_t size, char type) {
    Block b{};
    put_text(b, kName, name);
    put_text(b, kPrefix, prefix);
    put_octal(b, kMode, 0644);
    put_octal(b, kUid, 0);
    put_octal(b, kGid, 0);
    put_octal(b, kSize, size);
    put_octal(b, kMtime, 0);
    put_octal(b, kDevMajor, 0);
    put_octal(b, kDevMinor, 0);
    b[kTypeAt] = type;
    put_text(b, kMagic, std::string_view("ustar\0", 6));
    put_text(b, kVersion, "00");
    // Six octal digits, a NUL and a space, as POSIX writes it.
    put_text(b, kChecksum, fmt::format("{:06o}", header_sum(b)));
    b[kChecksum.at + 6] = '\0';
    b[kChecksum.at + 7] = ' ';
    return b;
}

// A pax record "<len> path=<value>\n", whose length counts its own digits.
std::string pax_path_record(std::string_view path) {
    const std::size_t rest = std::string_view(" path=\n").size() + path.size();
    std::size_t length = rest + 1;
    while (std::to_string(length).size() + rest != length) {
        length = std::to_string(length).size() + rest;
    }
    return fmt::format("{} path={}\n", length, path);
}

// Splits `path` into a ustar prefix and name, if it fits ("" prefix when the name alone holds it).
std::optional<std::pair<std::string, std::string>> ustar_split(std::string_view path) {
    if (path.size() <= kName.size) {
        return std::pair{std::string(), std::string(path)};
    }
    for (std::size_t slash = path.find('/'); slash != std::string_view::npos;
         slash = path.find('/', slash + 1)) {
        if (slash <= kPrefix.size && path.size() - slash - 1 <= kName.size &&
            slash + 1 < path.size()) {
            return std::pair{std::string(path.substr(0, slash)),
                             std::string(path.substr(slash + 1))};
        }
    }
    return std::nullopt;
}

}  // namespace

void TarWriter::emit(std::string_view bytes) {
    written_ += bytes.size();
    sink_(bytes);
}

void TarWriter::begin_file(std::string_view path, std::uint64_t size) {
    if (in_file_) {
        throw Error(ErrorCode::internal, "tar: a file begun before the previous one ended");
    }
    if (const auto problem = tar_path_problem(path); problem || path.back() == '/') {
        throw Error(ErrorCode::unsafe_path,
                    fmt::format("cannot archive \"{}\": the path {}", path,
                                problem.value_or("ends with '/'")),
                    Json{{"path", std::string(path)}});
    }
    if (size > kMaxOctal11) {
        throw Error(ErrorCode::file_too_large,
                    fmt::format("cannot archive {}: {} bytes, more than a ustar entry holds ({})",
                                path, size, kMaxOctal11),
                    Json{{"path", std::string(path)}, {"size", size}});
    }
    const auto split = ustar_split(path);
    if (!split) {
        const std::string record = pax_path_record(path);
        const Block pax = header(kPaxName, "", record.size(), 'x');
        emit(std::string_view(pax.data(), pax.size()));
        emit(record);
        emit(std::string((kBlock - record.size() % kBlock) % kBlock, '\0'));
    }
    const Block b = split ? header(split->second, split->first, size, '0')
                          : header(path.substr(0, kName.size), "", size, '0');
    emit(std::string_view(b.data(), b.size()));
    in_file_ = true;
    body_left_ = size;
    body_size_ = size;
}

void TarWriter::write(std::string_view bytes) {
    if (!in_file_ || bytes.size() > body_left_) {
        throw Error(ErrorCode::internal, "tar: more bytes written than the file's size");
    }
    body_left_ -= bytes.size();
    emit(bytes);
}

void TarWriter::end_file() {
    if (!in_file_ || body_left_ != 0) {
        throw Error(ErrorCode::internal,
                    fmt::format("tar: a file ended {} bytes short of its size", body_left_));
    }
    emit(std::string((kBlock - body_size_ % kBlock) % kBlock, '\0'));
    in_file_ = false;
}

void TarWriter::add_file(std::string_view path, std::string_view bytes) {
    begin_file(path, bytes.size());
    write(bytes);
    end_file();
}

void TarWriter::finish() {
    if (in_file_) {
        throw Error(ErrorCode::internal, "tar: finished inside a file");
    }
    emit(std::string(2 * kBlock, '\0'));
}

}  // namespace cko
