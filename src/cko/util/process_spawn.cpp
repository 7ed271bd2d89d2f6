// The spawning half of run_process: file descriptors, capture files, program lookup, posix_spawn.
#include "cko/util/process_spawn.hpp"

#include "cko/util/error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <system_error>

namespace cko::process_detail {

std::string errno_text(int err) {
    return std::system_category().message(err);
}

nlohmann::json errno_details(int err) {
    const char* name = ::strerrorname_np(err);
    return {{"errno", name != nullptr ? name : std::to_string(err)}, {"reason", errno_text(err)}};
}

[[noreturn]] void throw_spawn_failed(const ProcessSpec& spec, const std::string& program, int err,
                                     const std::string& what) {
    nlohmann::json details = errno_details(err);
    details["argv0"] = spec.argv.front();
    details["program"] = program;
    details["working_dir"] = spec.working_dir.string();
    throw Error(ErrorCode::spawn_failed,
                "cannot start '" + spec.argv.front() + "': " + what + ": " + errno_text(err),
                std::move(details));
}

[[noreturn]] void throw_io_error(const std::string& action, const std::filesystem::path& path,
                                 int err) {
    nlohmann::json details = errno_details(err);
    details["path"] = path.string();
    throw Error(ErrorCode::io_error,
                "cannot " + action + " '" + path.string() + "': " + errno_text(err),
                std::move(details));
}

bool contains_nul(std::string_view text) {
    return text.find('\0') != std::string_view::npos;
}

// Writes all of data; returns 0 or the errno of the failure.
int write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return 0;
}

// The child's 0, 1 and 2 are dup2'ed from our fds; a source below 3 would be overwritten by an
// earlier dup2, which happens when our own stdin/stdout/stderr are closed.
UniqueFd above_stdio(UniqueFd fd) {
    if (fd.get() > STDERR_FILENO) {
        return fd;
    }
    const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0) {
        throw Error(ErrorCode::io_error, "cannot duplicate a file descriptor: " + errno_text(errno),
                    errno_details(errno));
    }
    return UniqueFd(moved);
}

Pipe make_output_pipe() {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
        throw Error(ErrorCode::io_error, "cannot create a pipe: " + errno_text(errno),
                    errno_details(errno));
    }
    Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
    // Only our end is non-blocking; the child's end keeps the blocking semantics it expects.
    const int flags = ::fcntl(pipe.read_end.get(), F_GETFL);
    if (flags < 0 || ::fcntl(pipe.read_end.get(), F_SETFL, flags | O_NONBLOCK) < 0) {
        throw Error(ErrorCode::io_error, "cannot make a pipe non-blocking: " + errno_text(errno),
                    errno_details(errno));
    }
    pipe.read_end = above_stdio(std::move(pipe.read_end));
    pipe.write_end = above_stdio(std::move(pipe.write_end));
    return pipe;
}

UniqueFd open_capture_file(const std::filesystem::path& path) {
    if (path.empty()) {
        return {};
    }
    // O_APPEND so that stdout and stderr captured into one file interleave instead of overwriting.
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOCTTY;
    int fd = -1;
    do {
        fd = ::open(path.c_str(), flags, 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        throw_io_error("create capture file", path, errno);
    }
    return UniqueFd(fd);
}

// stdin is a memory file rather than a pipe: the child reads it at its own pace, and we never
// write into a pipe whose reader is gone (SIGPIPE) or block on one that is full.
UniqueFd make_stdin(const std::string& data) {
    if (data.empty()) {
        const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            throw_io_error("open", "/dev/null", errno);
        }
        return above_stdio(UniqueFd(fd));
    }
    UniqueFd fd(::memfd_create("cko-stdin", MFD_CLOEXEC));
    if (!fd.valid()) {
        throw Error(ErrorCode::io_error,
                    "cannot create a memory file for stdin: " + errno_text(errno),
                    errno_details(errno));
    }
    if (const int err = write_all(fd.get(), data.data(), data.size()); err != 0) {
        throw Error(ErrorCode::io_error, "cannot write stdin data: " + errno_text(err),
                    errno_details(err));
    }
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
        throw Error(ErrorCode::io_error, "cannot rewind stdin data: " + errno_text(errno),
                    errno_details(errno));
    }
    return above_stdio(std::move(fd));
}

std::optional<std::string_view> env_value(const std::vector<std::string>& env,
                                          std::string_view name) {
    for (const std::string& entry : env) {
        if (entry.size() > name.size() && entry[name.size()] == '=' &&
            std::string_view(entry).substr(0, name.size()) == name) {
            return std::string_view(entry).substr(name.size() + 1);
        }
    }
    return std::nullopt;
}

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0;
}

// The program execve will run: argv[0] itself when it holds a '/', else the first executable
// regular file of that name in the child's PATH. Relative PATH entries are skipped so that
// working_dir cannot change which program runs.
std::string resolve_program(const ProcessSpec& spec, const std::vector<std::string>& env) {
    const std::string& name = spec.argv.front();
    if (name.empty()) {
        throw Error(ErrorCode::invalid_argument, "argv[0] is empty");
    }
    if (auto found = find_program(name, env)) {
        return *found;
    }
    const std::string_view path = env_value(env, "PATH").value_or("/bin:/usr/bin");
    throw_spawn_failed(spec, name, ENOENT,
                       "no executable named '" + name + "' in PATH '" + std::string(path) + "'");
}

}  // namespace cko::process_detail

namespace cko {

std::optional<std::string> find_program(const std::string& name,
                                        const std::vector<std::string>& env) {
    if (name.find('/') != std::string::npos) {
        return name;
    }
    const std::string_view path = process_detail::env_value(env, "PATH").value_or("/bin:/usr/bin");
    std::size_t begin = 0;
    while (begin <= path.size()) {
        const std::size_t end = std::min(path.find(':', begin), path.size());
        const std::string_view dir = path.substr(begin, end - begin);
        if (!dir.empty() && dir.front() == '/') {
            std::string candidate(dir);
            candidate += '/';
            candidate += name;
            if (process_detail::is_executable_file(candidate)) {
                return candidate;
            }
        }
        begin = end + 1;
    }
    return std::nullopt;
}

}  // namespace cko

namespace cko::process_detail {

std::vector<char*> c_string_array(std::vector<std::string>& strings) {
    std::vector<char*> array;
    array.reserve(strings.size() + 1);
    for (std::string& s : strings) {
        array.push_back(s.data());
    }
    array.push_back(nullptr);
    return array;
}

// posix_spawn rather than fork+exec: glibc's runs the child on a vfork-style stack, does only
// async-signal-safe work there, reports a failed chdir or execve back as its return value (the
// CLOEXEC pipe trick, done for us) and returns after the child has exec'ed, so the process group
// is already set and the parent-side setpgid of fork+exec is not needed (it would fail: EACCES).
pid_t spawn(const ProcessSpec& spec, const std::string& program, std::vector<std::string>& argv,
            std::vector<std::string>& env, const SpawnFds& fds) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (const int err = ::posix_spawn_file_actions_init(&actions); err != 0) {
        throw_spawn_failed(spec, program, err, "posix_spawn_file_actions_init");
    }
    if (const int err = ::posix_spawnattr_init(&attr); err != 0) {
        ::posix_spawn_file_actions_destroy(&actions);
        throw_spawn_failed(spec, program, err, "posix_spawnattr_init");
    }
    struct Cleanup {
        posix_spawn_file_actions_t* actions;
        posix_spawnattr_t* attr;
        ~Cleanup() {
            ::posix_spawn_file_actions_destroy(actions);
            ::posix_spawnattr_destroy(attr);
        }
    } cleanup{&actions, &attr};

    auto check = [&](int err, const char* what) {
        if (err != 0) {
            throw_spawn_failed(spec, program, err, what);
        }
    };
    check(::posix_spawn_file_actions_adddup2(&actions, fds.stdin_fd, STDIN_FILENO), "adddup2");
    check(::posix_spawn_file_actions_adddup2(&actions, fds.stdout_fd, STDOUT_FILENO), "adddup2");
    check(::posix_spawn_file_actions_adddup2(&actions, fds.stderr_fd, STDERR_FILENO), "adddup2");
    // Our own fds are all CLOEXEC; this also closes those other code opened without it.
    check(::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1), "addclosefrom");
    if (!spec.working_dir.empty()) {
        check(::posix_spawn_file_actions_addchdir_np(&actions, spec.working_dir.c_str()),
              "addchdir");
    }

    // Own process group, so that the whole tree can be signalled at once. Empty signal mask and
    // default dispositions: an ignored SIGPIPE or SIGINT of ours would otherwise survive execve.
    sigset_t empty_mask;
    sigset_t all_signals;
    sigemptyset(&empty_mask);
    sigfillset(&all_signals);
    check(::posix_spawnattr_setflags(
              &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
          "setflags");
    check(::posix_spawnattr_setpgroup(&attr, 0), "setpgroup");
    check(::posix_spawnattr_setsigmask(&attr, &empty_mask), "setsigmask");
    check(::posix_spawnattr_setsigdefault(&attr, &all_signals), "setsigdefault");

    std::vector<char*> c_argv = c_string_array(argv);
    std::vector<char*> c_env = c_string_array(env);
    pid_t pid = 0;
    if (const int err =
            ::posix_spawn(&pid, program.c_str(), &actions, &attr, c_argv.data(), c_env.data());
        err != 0) {
        // glibc has already reaped the failed child.
        throw_spawn_failed(spec, program, err,
                           spec.working_dir.empty() ? "execve failed" : "chdir or execve failed");
    }
    return pid;
}

}  // namespace cko::process_detail
