// POSIX ustar archives: a deterministic writer (sorted by its caller; fixed mode, owner and mtime)
// and a reader that refuses anything that could write outside the directory it extracts into.
// Written here rather than through libarchive: the reader's refusals are the point (each header
// checked, by name, before a byte of its entry is written), the writer's bytes must never vary,
// and the static builds link only what Debian ships as .a.
#pragma once

#include "cko/util/byte_stream.hpp"
#include "cko/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cko {

// Why `path` may not name an archive entry (absolute, empty, a "." or ".." component, an empty
// component, a control character, a component over 255 bytes or the whole over 4096), or nullopt.
// A directory entry may end with one '/'.
[[nodiscard]] std::optional<std::string> tar_path_problem(std::string_view path);

// Writes regular files as ustar entries with mode 0644, uid and gid 0, mtime 0 and no owner
// names, so that the same files in the same order give the same bytes. A path longer than a ustar
// header holds is carried by a pax `path` record before its header.
class TarWriter {
public:
    explicit TarWriter(ByteSink sink) : sink_(std::move(sink)) {}

    // Starts a file of exactly `size` bytes (below 8 GiB): unsafe_path for a path
    // tar_path_problem refuses, file_too_large past the size a header holds.
    void begin_file(std::string_view path, std::uint64_t size);
    // The body, in pieces; more than the size begun is an internal error.
    void write(std::string_view bytes);
    // Pads the body to its block; fewer bytes than the size begun is an internal error.
    void end_file();
    void add_file(std::string_view path, std::string_view bytes);
    // The two zero blocks that end an archive.
    void finish();

    [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_; }

private:
    void emit(std::string_view bytes);
    ByteSink sink_;
    std::uint64_t written_ = 0;
    std::uint64_t body_left_ = 0;
    std::uint64_t body_size_ = 0;
    bool in_file_ = false;
};

enum class TarEntryKind { file, directory };

struct TarEntry {
    std::string path;  // relative, without a directory's trailing '/'
    std::uint64_t size = 0;
    TarEntryKind kind = TarEntryKind::file;
};

// What a reader accepts before it refuses the archive (a hostile one may claim anything).
struct TarLimits {
    std::uint64_t max_entry_bytes = std::uint64_t{8} << 30;
    std::uint64_t max_total_bytes = std::uint64_t{64} << 30;
    std::uint64_t max_entries = 1'000'000;
};

// Reads a ustar archive entry by entry. Every header is checked before next() returns it, and a
// refusal is an Error naming the archive, the entry's index and path: a header checksum that does
// not add up (malformed_input); a link, device or FIFO (special_file); an unsafe path
// (unsafe_path); a name seen before, or a file where an earlier entry needs a directory
// (malformed_input); an entry or a total past the limits (file_too_large); an archive cut short
// (truncated_input); pax records other than `path`, GNU long names and other types
// (unsupported_format); anything but zeros after the end-of-archive blocks (malformed_input).
class TarReader {
public:
    TarReader(ByteSource source, std::string name, TarLimits limits = {});

    // The next entry, checked; nullopt at the end of the archive. An unread body is skipped.
    [[nodiscard]] std::optional<TarEntry> next();
    // The current entry's body, in pieces (all of it, once).
    void read_body(const ByteSink& sink);
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
    [[nodiscard]] bool read_block(char* block);
    void read_exact(char* buffer, std::size_t size, std::string_view what);
    void skip_body();
    void check_end();
    [[nodiscard]] std::string read_pax_path(std::uint64_t size);
    void check_entry(const TarEntry& entry, char type);
    void check_names(const TarEntry& entry);
    [[noreturn]] void refuse(ErrorCode code, const std::string& entry_path,
                             const std::string& problem) const;

    ByteSource source_;
    std::string name_;
    TarLimits limits_;
    std::uint64_t entries_ = 0;
    std::uint64_t total_ = 0;
    std::uint64_t body_left_ = 0;
    std::uint64_t padding_left_ = 0;
    std::set<std::string> files_;
    std::set<std::string> directories_;
    std::set<std::string> explicit_directories_;
};

// Writes the entry next() just returned under `dir`: its parent directories made (a link on the
// way refused), a file created new (O_EXCL | O_NOFOLLOW, mode 0644), a directory made. Returns the
// sha256 of the bytes written ("" for a directory).
std::string extract_tar_entry(TarReader& reader, const TarEntry& entry,
                              const std::filesystem::path& dir);

// Every entry under `dir`, in archive order.
std::vector<TarEntry> extract_tar(TarReader& reader, const std::filesystem::path& dir);

}  // namespace cko
