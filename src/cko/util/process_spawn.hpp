// Internal to run_process (process.cpp): file descriptors, capture files, program lookup, spawn.
#pragma once

#include "cko/util/process.hpp"

#include <nlohmann/json.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cko::process_detail {

class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) {
            reset(std::exchange(other.fd_, -1));
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) {
            ::close(fd_);  // Never retried on EINTR: on Linux the fd is gone either way.
        }
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

struct Pipe {
    UniqueFd read_end;
    UniqueFd write_end;
};

struct SpawnFds {
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
};

[[nodiscard]] std::string errno_text(int err);
[[nodiscard]] nlohmann::json errno_details(int err);
[[noreturn]] void throw_spawn_failed(const ProcessSpec& spec, const std::string& program, int err,
                                     const std::string& what);
[[noreturn]] void throw_io_error(const std::string& action, const std::filesystem::path& path,
                                 int err);
[[nodiscard]] bool contains_nul(std::string_view text);
// Writes all of data; returns 0 or the errno of the failure.
[[nodiscard]] int write_all(int fd, const char* data, std::size_t size);
[[nodiscard]] Pipe make_output_pipe();
[[nodiscard]] UniqueFd open_capture_file(const std::filesystem::path& path);
// stdin is a memory file rather than a pipe (see process_spawn.cpp).
[[nodiscard]] UniqueFd make_stdin(const std::string& data);
// The program execve will run: argv[0] with a '/', else the first match in the child's PATH.
[[nodiscard]] std::string resolve_program(const ProcessSpec& spec,
                                          const std::vector<std::string>& env);
// posix_spawn in a new process group with an empty signal mask and default dispositions.
[[nodiscard]] pid_t spawn(const ProcessSpec& spec, const std::string& program,
                          std::vector<std::string>& argv, std::vector<std::string>& env,
                          const SpawnFds& fds);

}  // namespace cko::process_detail
