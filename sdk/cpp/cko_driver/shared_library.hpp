// Builds a subject's source into a shared library (cached by content under $TMPDIR) and dlopens it.
// Drivers use this to load the code under test from the subject's read-only snapshot at run time.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace cko_driver {

struct ProcessResult {
    int exit_code = -1;  // -1 when it did not exit normally
    std::string output;  // stdout and stderr together
};

// Runs argv (found on PATH, no shell) and captures its output.
inline ProcessResult run_process(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    ProcessResult result;
    if (err != 0) {
        close(fds[0]);
        throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(err));
    }
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        result.output.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

namespace detail {
inline void fnv1a(std::uint64_t& h, const std::string& bytes) {
    for (unsigned char c : bytes)
        h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator, so that ("ab","c") != ("a","bc")
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A private cache root: created 0700, refused when another user owns it or others may write to it.
inline std::string private_cache_root(const std::string& cache_name) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string root =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/" + cache_name + "-" + std::to_string(getuid());
    mkdir(root.c_str(), 0700);
    struct stat st {};
    if (lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022))
        throw std::runtime_error("cache directory " + root +
                                 " is not a private directory of this user");
    return root;
}
}  // namespace detail

// Compiles `source` with `compile_prefix + {"-o", <lib>, source}` unless a library built from the
// same bytes, flags and compiler version is cached; returns the library path. Throws with the
// compiler output.
inline std::string compile_shared_library(const std::string& source,
                                          const std::vector<std::string>& compile_prefix,
                                          const std::string& cache_name) {
    std::uint64_t h = 1469598103934665603ull;
    detail::fnv1a(h, detail::read_file(source));
    for (const auto& a : compile_prefix)
        detail::fnv1a(h, a);
    // The compiler's version, asked once per compiler and process (a session prepares every
    // request's subjects again; spawning `nvcc --version` each time cost tens of milliseconds).
    static std::map<std::string, std::string> versions;
    auto version = versions.find(compile_prefix.at(0));
    if (version == versions.end())
        version = versions
                      .emplace(compile_prefix.at(0),
                               run_process({compile_prefix.at(0), "--version"}).output)
                      .first;
    detail::fnv1a(h, version->second);
    char key[17];
    std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
    const std::string root = detail::private_cache_root(cache_name);
    const std::string dir = root + "/" + key;
    const std::string lib = dir + "/lib.so";
    if (access(lib.c_str(), R_OK) == 0)
        return lib;

    std::string tmp = root + "/.build-XXXXXX";
    if (!mkdtemp(&tmp[0]))
        throw std::runtime_error("mkdtemp in " + root + ": " + std::strerror(errno));
    std::vector<std::string> argv = compile_prefix;
    argv.insert(argv.end(), {"-o", tmp + "/lib.so", source});
    const ProcessResult built = run_process(argv);
    if (built.exit_code != 0) {
        std::filesystem::remove_all(tmp);
        throw std::runtime_error("compiling " + source + " failed:\n" +
                                 built.output.substr(0, 4096));
    }
    // Publish the whole directory at once; when another process won the race, use its copy.
    if (std::rename(tmp.c_str(), dir.c_str()) != 0)
        std::filesystem::remove_all(tmp);
    if (access(lib.c_str(), R_OK) != 0)
        throw std::runtime_error("cache entry " + lib + " is missing after build");
    return lib;
}

// A dlopen'ed library; symbols are looked up in this library only (RTLD_LOCAL).
class SharedLibrary {
public:
    explicit SharedLibrary(const std::string& path)
        : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        if (!handle_)
            throw std::runtime_error(std::string("dlopen: ") + dlerror());
    }
    ~SharedLibrary() {
        if (handle_)
            dlclose(handle_);
    }
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    template <class Fn>
    Fn* symbol(const char* name) const {
        void* p = dlsym(handle_, name);
        if (!p) {
            const char* why = dlerror();
            throw std::runtime_error(std::string("symbol ") + name +
                                     " not found: " + (why ? why : "null symbol"));
        }
        return reinterpret_cast<Fn*>(p);
    }

private:
    void* handle_;
};

}  // namespace cko_driver
