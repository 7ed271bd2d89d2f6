// Which subject a driver was running when it died: the SDKs' file, else the last stderr marker.
#include "cko/driver/running_subject.hpp"

#include "cko/driver/stderr_tail.hpp"
#include "cko/store/catalogue.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

namespace cko::driver {
namespace {

// The first bytes of the file, "" when it is absent or not a regular file (never a link followed).
std::string read_marker_file(const std::filesystem::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return "";
    }
    struct stat st {};
    std::array<char, 512> buf{};
    ssize_t n = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        n = ::read(fd, buf.data(), buf.size());
    }
    ::close(fd);
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : "";
}

}  // namespace

std::string role_of_subject_line(std::string_view line) {
    if (!line.starts_with(kSubjectMarker)) {
        return "";
    }
    line.remove_prefix(kSubjectMarker.size());
    const std::string_view role = line.substr(0, line.find_first_of(" \n"));
    return role == "reference" || role == "candidate" ? std::string(role) : "";
}

std::string running_subject(const std::filesystem::path& call_dir, std::string_view stderr_tail) {
    if (!call_dir.empty()) {
        const std::string role = role_of_subject_line(
            read_marker_file(store::layout::driver_running_subject(call_dir.string())));
        if (!role.empty()) {
            return role;
        }
    }
    const std::size_t at = stderr_tail.rfind(kSubjectMarker);
    return at == std::string_view::npos ? "" : role_of_subject_line(stderr_tail.substr(at));
}

}  // namespace cko::driver
