// The ledger as a path -> digest map, caught up with the file's appended lines on every lookup.
#include "cko/store/ledger_index.hpp"

#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace cko::store {
namespace {

[[noreturn]] void ledger_read_error(const std::filesystem::path& ledger, int err) {
    throw Error(ErrorCode::io_error,
                fmt::format("cannot read the ledger {}: {}", ledger.string(), std::strerror(err)),
                Json{{"path", ledger.string()}, {"errno", err}});
}

}  // namespace

void LedgerIndex::catch_up(const std::filesystem::path& ledger) {
    const int fd = ::open(ledger.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        ledger_read_error(ledger, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        ledger_read_error(ledger, err);
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < consumed_) {  // only a rewritten ledger shrinks: start over
        consumed_ = 0;
        digests_.clear();
    }
    std::string fresh(size - consumed_, '\0');
    std::size_t got = 0;
    while (got < fresh.size()) {
        const ssize_t n = ::pread(fd, fresh.data() + got, fresh.size() - got,
                                  static_cast<off_t>(consumed_ + got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::close(fd);
            ledger_read_error(ledger, err);
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    std::size_t begin = 0;
    for (std::size_t nl = fresh.find('\n'); nl != std::string::npos; nl = fresh.find('\n', begin)) {
        try {
            const Json line = parse_json_strict(std::string_view(fresh).substr(begin, nl - begin));
            // The first line of a path is what cko wrote (files are ledgered once): a later line
            // for it, as a writer forging a record's new digest would append, is not believed.
            digests_.emplace(line.at("path").get<std::string>(),
                             line.at("sha256").get<std::string>());
        } catch (const std::exception&) {
            // An unparsable line proves nothing about any record; fsck reports it as damage.
        }
        begin = nl + 1;
    }
    consumed_ += begin;
}

std::optional<std::string> LedgerIndex::digest_of(const std::filesystem::path& ledger,
                                                  std::string_view relative) {
    const std::lock_guard<std::mutex> held(mutex_);
    catch_up(ledger);
    const auto found = digests_.find(relative);
    if (found == digests_.end()) {
        return std::nullopt;
    }
    return found->second;
}

}  // namespace cko::store
