// The ustar reader (IEEE Std 1003.1, "pax" format's ustar headers): every header checked before
// anything of its entry is read on or written; and extraction under a directory.
#include "cko/util/tar.hpp"

#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/tar_format.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace cko {
namespace fs = std::filesystem;
namespace {
using namespace tar_format;

constexpr std::uint64_t kMaxPaxHeader = 64 * 1024;
constexpr std::uint64_t kMaxTrailingZeros = 1024 * 1024;

std::string_view kind_of_type(char type) {
    switch (type) {
    case '1':
        return "a hard link";
    case '2':
        return "a symbolic link";
    case '3':
        return "a character device";
    case '4':
        return "a block device";
    case '6':
        return "a FIFO";
    default:
        return "";
    }
}

}  // namespace

std::optional<std::string> tar_path_problem(std::string_view path) {
    if (path.empty()) {
        return "is empty";
    }
    if (path.front() == '/') {
        return "is absolute";
    }
    if (path.size() > 4096) {
        return "is longer than 4096 bytes";
    }
    if (path.back() == '/') {
        path.remove_suffix(1);
    }
    std::size_t begin = 0;
    while (begin <= path.size()) {
        const std::size_t slash = std::min(path.find('/', begin), path.size());
        const std::string_view part = path.substr(begin, slash - begin);
        if (part.empty()) {
            return "has an empty component";
        }
        if (part == "." || part == "..") {
            return fmt::format("has a \"{}\" component", part);
        }
        if (part.size() > 255) {
            return "has a component longer than 255 bytes";
        }
        if (std::any_of(part.begin(), part.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
            return "holds a control character";
        }
        begin = slash + 1;
    }
    return std::nullopt;
}

TarReader::TarReader(ByteSource source, std::string name, TarLimits limits)
    : source_(std::move(source)), name_(std::move(name)), limits_(limits) {}

void TarReader::refuse(ErrorCode code, const std::string& entry_path,
                       const std::string& problem) const {
    throw Error(code,
                fmt::format("{}: entry {} \"{}\" {}; refused before anything of it was written",
                            name_, entries_, entry_path, problem),
                Json{{"file", name_}, {"entry", entry_path}, {"index", entries_}});
}

void TarReader::read_exact(char* buffer, std::size_t size, std::string_view what) {
    std::size_t done = 0;
    while (done < size) {
        const std::size_t got = source_(buffer + done, size - done);
        if (got == 0) {
            throw Error(
                ErrorCode::truncated_input,
                fmt::format("{}: the archive ends inside {} (a file cut short)", name_, what),
                Json{{"file", name_}});
        }
        done += got;
    }
}

// False at the end of the input exactly on a block boundary.
bool TarReader::read_block(char* block) {
    const std::size_t got = source_(block, kBlock);
    if (got == 0) {
        return false;
    }
    if (got < kBlock) {
        read_exact(block + got, kBlock - got, "a header");
    }
    return true;
}

void TarReader::skip_body() {
    std::array<char, 16 * 1024> buffer{};
    while (body_left_ + padding_left_ > 0) {
        const std::size_t n = static_cast<std::size_t>(
            std::min<std::uint64_t>(body_left_ + padding_left_, buffer.size()));
        read_exact(buffer.data(), n, "an entry's body");
        const std::uint64_t from_body = std::min<std::uint64_t>(n, body_left_);
        body_left_ -= from_body;
        padding_left_ -= n - from_body;
    }
}

void TarReader::read_body(const ByteSink& sink) {
    std::array<char, 64 * 1024> buffer{};
    while (body_left_ > 0) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, buffer.size()));
        read_exact(buffer.data(), n, "an entry's body");
        body_left_ -= n;
        sink(std::string_view(buffer.data(), n));
    }
    skip_body();  // the padding
}

// After the first zero block only zeros may follow (the second block, a record's padding).
void TarReader::check_end() {
    std::array<char, kBlock> buffer{};
    std::uint64_t seen = 0;
    for (std::size_t got = source_(buffer.data(), buffer.size()); got > 0;
         got = source_(buffer.data(), buffer.size())) {
        seen += got;
        if (seen > kMaxTrailingZeros ||
            std::any_of(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(got),
                        [](char c) { return c != '\0'; })) {
            throw Error(ErrorCode::malformed_input,
                        fmt::format("{}: data after the end-of-archive blocks (something was "
                                    "appended to the archive)",
                                    name_),
                        Json{{"file", name_}});
        }
    }
}

std::string TarReader::read_pax_path(std::uint64_t size) {
    if (size > kMaxPaxHeader) {
        refuse(ErrorCode::file_too_large, std::string(kPaxName),
               fmt::format("is a pax header of {} bytes (at most {})", size, kMaxPaxHeader));
    }
    body_left_ = size;
    padding_left_ = (kBlock - size % kBlock) % kBlock;
    std::string text;
    read_body([&](std::string_view piece) { text.append(piece); });
    std::optional<std::string> path;
    std::string_view rest(text);
    while (!rest.empty()) {
        const std::size_t space = std::min(rest.find(' '), std::size_t{8});
        std::size_t length = 0;
        bool digits = space > 0 && space < rest.size() && rest[space] == ' ';
        for (std::size_t i = 0; digits && i < space; ++i) {
            digits = rest[i] >= '0' && rest[i] <= '9';
            length = length * 10 + static_cast<std::size_t>(rest[i] - '0');
        }
        if (!digits || length <= space + 1 || length > rest.size() || rest[length - 1] != '\n') {
            refuse(ErrorCode::malformed_input, std::string(kPaxName), "holds a malformed record");
        }
        const std::string_view record = rest.substr(space + 1, length - space - 2);
        if (!record.starts_with("path=") || path) {
            refuse(ErrorCode::unsupported_format, std::string(kPaxName),
                   fmt::format("holds the record \"{}\" (only one `path` is read)",
                               record.substr(0, std::min<std::size_t>(record.find('='), 64))));
        }
        path = std::string(record.substr(5));
        rest.remove_prefix(length);
    }
    if (!path) {
        refuse(ErrorCode::unsupported_format, std::string(kPaxName), "holds no path record");
    }
    return *path;
}

void TarReader::check_names(const TarEntry& entry) {
    for (std::size_t slash = entry.path.find('/'); slash != std::string::npos;
         slash = entry.path.find('/', slash + 1)) {
        const std::string folder = entry.path.substr(0, slash);
        if (files_.contains(folder)) {
            refuse(ErrorCode::malformed_input, entry.path,
                   fmt::format("lies in \"{}\", a file earlier in the archive", folder));
        }
        directories_.insert(folder);
    }
    const bool is_file = entry.kind == TarEntryKind::file;
    if (files_.contains(entry.path) || (is_file ? directories_.contains(entry.path)
                                                : explicit_directories_.contains(entry.path))) {
        refuse(ErrorCode::malformed_input, entry.path,
               "is named twice (as a file or a directory earlier in the archive)");
    }
    (is_file ? files_ : explicit_directories_).insert(entry.path);
    if (!is_file) {
        directories_.insert(entry.path);
    }
}

void TarReader::check_entry(const TarEntry& entry, char type) {
    if (const std::string_view what = kind_of_type(type); !what.empty()) {
        refuse(ErrorCode::special_file, entry.path,
               fmt::format("is {}; an archive cko reads holds only files and directories", what));
    }
    if (type != '0' && type != '\0' && type != '5') {
        refuse(ErrorCode::unsupported_format, entry.path,
               fmt::format("has the entry type '{}' (only files and directories are read)", type));
    }
    if (const auto problem = tar_path_problem(entry.path)) {
        refuse(ErrorCode::unsafe_path, entry.path, fmt::format("is a path that {}", *problem));
    }
    if (entries_ > limits_.max_entries) {
        refuse(ErrorCode::file_too_large, entry.path,
               fmt::format("is past the {} entries an archive may hold", limits_.max_entries));
    }
    if (entry.size > limits_.max_entry_bytes) {
        refuse(ErrorCode::file_too_large, entry.path,
               fmt::format("has {} bytes, more than the {}-byte limit of one entry", entry.size,
                           limits_.max_entry_bytes));
    }
    total_ += entry.size;
    if (total_ > limits_.max_total_bytes) {
        refuse(ErrorCode::file_too_large, entry.path,
               fmt::format("brings the archive to {} bytes, more than the {}-byte limit", total_,
                           limits_.max_total_bytes));
    }
    check_names(entry);
}

std::optional<TarEntry> TarReader::next() {
    skip_body();
    std::optional<std::string> pax_path;
    Block b{};
    while (true) {
        if (!read_block(b.data())) {
            throw Error(ErrorCode::truncated_input,
                        fmt::format("{}: the archive ends without its end-of-archive blocks (a "
                                    "file cut short)",
                                    name_),
                        Json{{"file", name_}});
        }
        if (std::all_of(b.begin(), b.end(), [](char c) { return c == '\0'; })) {
            check_end();
            return std::nullopt;
        }
        ++entries_;
        const std::string named =
            field_text(b, kPrefix).empty()
                ? std::string(field_text(b, kName))
                : fmt::format("{}/{}", field_text(b, kPrefix), field_text(b, kName));
        const auto checksum = octal_field(b, kChecksum);
        if (!checksum || *checksum != header_sum(b) ||
            !field_text(b, kMagic).starts_with("ustar")) {
            refuse(ErrorCode::malformed_input, named,
                   "has a header whose checksum does not add up (or is not a ustar header)");
        }
        const auto size = octal_field(b, kSize);
        if (!size) {
            refuse(ErrorCode::unsupported_format, named, "has a size that is not octal");
        }
        if (b[kTypeAt] == 'x') {
            if (pax_path) {
                refuse(ErrorCode::malformed_input, named, "is a second pax header in a row");
            }
            pax_path = read_pax_path(*size);
            --entries_;  // a pax header is part of the entry it precedes
            continue;
        }
        TarEntry entry{pax_path.value_or(named), *size,
                       b[kTypeAt] == '5' ? TarEntryKind::directory : TarEntryKind::file};
        if (entry.kind == TarEntryKind::directory) {
            while (entry.path.ends_with('/')) {
                entry.path.pop_back();
            }
            entry.size = 0;
        }
        check_entry(entry, b[kTypeAt]);
        body_left_ = entry.size;
        padding_left_ = (kBlock - entry.size % kBlock) % kBlock;
        return entry;
    }
}

namespace {

void write_extracted(int fd, std::string_view bytes, const fs::path& path) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw Error(ErrorCode::io_error,
                        fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)),
                        Json{{"path", path.string()}});
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace

std::string extract_tar_entry(TarReader& reader, const TarEntry& entry, const fs::path& dir) {
    const fs::path target = dir / entry.path;
    if (entry.kind == TarEntryKind::directory) {
        make_directories(target);
        return "";
    }
    make_directories(target.parent_path());
    const int fd =
        ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("{}: cannot create {}: {}", reader.name(), target.string(),
                                std::strerror(errno)),
                    Json{{"path", target.string()}});
    }
    Sha256 hash;
    try {
        reader.read_body([&](std::string_view piece) {
            hash.update(piece);
            write_extracted(fd, piece, target);
        });
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot write {}: {}", target.string(), std::strerror(errno)),
                    Json{{"path", target.string()}});
    }
    return hash.finish_hex();
}

std::vector<TarEntry> extract_tar(TarReader& reader, const fs::path& dir) {
    std::vector<TarEntry> entries;
    while (auto entry = reader.next()) {
        (void)extract_tar_entry(reader, *entry, dir);
        entries.push_back(std::move(*entry));
    }
    return entries;
}

}  // namespace cko
