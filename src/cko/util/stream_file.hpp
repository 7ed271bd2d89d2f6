// Files as streams: one written piece by piece and published create-once, one read piece by
// piece, for archives too large to hold in memory.
#pragma once

#include "cko/util/byte_stream.hpp"

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace cko {

// The bytes go to a temporary file beside `path`; commit() fsyncs it, renames it into place
// without replacing anything (already_exists if `path` appeared meanwhile) and fsyncs the
// directory. Destroyed uncommitted it removes the temporary, so a failure leaves nothing at
// `path`. Throws already_exists at once when `path` exists.
class CreateOnceStream {
public:
    explicit CreateOnceStream(std::filesystem::path path, unsigned mode = 0644);
    ~CreateOnceStream();
    CreateOnceStream(const CreateOnceStream&) = delete;
    CreateOnceStream& operator=(const CreateOnceStream&) = delete;

    void write(std::string_view bytes);
    [[nodiscard]] ByteSink sink() {
        return [this](std::string_view bytes) { write(bytes); };
    }
    void commit();
    [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_; }

private:
    std::filesystem::path path_;
    std::filesystem::path temp_;
    int fd_ = -1;
    std::uint64_t written_ = 0;
    bool committed_ = false;
};

// A regular file read piece by piece (not_found, or io_error naming it: not a regular file, a
// failed read). With `no_follow` a link at `path` is refused (symlink_refused), not followed.
class FileStream {
public:
    explicit FileStream(const std::filesystem::path& path, bool no_follow = false);
    ~FileStream();
    FileStream(const FileStream&) = delete;
    FileStream& operator=(const FileStream&) = delete;

    [[nodiscard]] std::size_t read(char* buffer, std::size_t size);
    [[nodiscard]] ByteSource source() {
        return [this](char* buffer, std::size_t size) { return read(buffer, size); };
    }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

private:
    std::filesystem::path path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

}  // namespace cko
