// Streamed files: a temporary published by rename-no-replace, and a plain reader.
#include "cko/util/stream_file.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace cko {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void stream_failure(const std::string& what, const fs::path& path, int err) {
    throw Error(err == ENOENT ? ErrorCode::not_found : ErrorCode::io_error,
                fmt::format("{} {}: {}", what, path.string(), std::strerror(err)),
                Json{{"path", path.string()}, {"errno", err}});
}

}  // namespace

CreateOnceStream::CreateOnceStream(fs::path path, unsigned mode) : path_(std::move(path)) {
    if (::access(path_.c_str(), F_OK) == 0) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} already exists; it is written once", path_.string()),
                    Json{{"path", path_.string()}});
    }
    const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
    std::string pattern = (dir / fmt::format(".{}.tmp-XXXXXX", path_.filename().string())).string();
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0) {
        stream_failure("cannot create a temporary file in", dir, errno);
    }
    temp_ = pattern;
    ::fchmod(fd_, mode);
}

CreateOnceStream::~CreateOnceStream() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    if (!committed_ && !temp_.empty()) {
        ::unlink(temp_.c_str());
    }
}

void CreateOnceStream::write(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            stream_failure("cannot write", temp_, errno);
        }
        written_ += static_cast<std::uint64_t>(n);
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

void CreateOnceStream::commit() {
    if (const int err = sync_to_disk(fd_); err != 0) {
        stream_failure("cannot fsync", temp_, err);
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
        stream_failure("cannot write", temp_, errno);
    }
    rename_no_replace(temp_, path_);
    committed_ = true;
    fsync_directory(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
}

FileStream::FileStream(const fs::path& path, bool no_follow) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0));
    if (fd_ < 0 && errno == ELOOP && no_follow) {
        throw Error(ErrorCode::symlink_refused,
                    fmt::format("{} is a symbolic link; it is not followed", path.string()),
                    Json{{"path", path.string()}});
    }
    if (fd_ < 0) {
        stream_failure("cannot open", path, errno);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd_);
        throw Error(ErrorCode::io_error, fmt::format("{} is not a regular file", path.string()),
                    Json{{"path", path.string()}});
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
}

FileStream::~FileStream() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

std::size_t FileStream::read(char* buffer, std::size_t size) {
    while (true) {
        const ssize_t n = ::read(fd_, buffer, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            stream_failure("cannot read", path_, errno);
        }
        return static_cast<std::size_t>(n);
    }
}

}  // namespace cko
