// The capped line reader of the MCP stdio transport.
#include "cko/mcp/line_reader.hpp"

#include <poll.h>
#include <unistd.h>
#include <cerrno>

namespace cko::mcp {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;

}  // namespace

LineReader::LineReader(int fd, std::size_t max_line, int stop_fd)
    : fd_(fd), max_line_(max_line), stop_fd_(stop_fd) {}

bool LineReader::fill() {
    if (at_end_) {
        return false;
    }
    if (start_ > 0) {  // drop what was handed out before growing
        buffer_.erase(0, start_);
        start_ = 0;
    }
    while (stop_fd_ >= 0) {
        pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;  // read(2) below reports the problem
        }
        if ((fds[1].revents & POLLIN) != 0) {
            stopped_ = true;
            at_end_ = true;
            return false;
        }
        if (fds[0].revents != 0) {
            break;
        }
    }
    const std::size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    ssize_t n = 0;
    do {
        n = ::read(fd_, buffer_.data() + old, kChunk);
    } while (n < 0 && errno == EINTR);
    buffer_.resize(old + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n <= 0) {
        at_end_ = true;
        return false;
    }
    return true;
}

LineReader::Next LineReader::next(std::string& line) {
    for (;;) {
        const std::size_t newline = buffer_.find('\n', start_ + scanned_);
        if (skipping_) {
            if (newline != std::string::npos) {
                start_ = newline + 1;
                scanned_ = 0;
                skipping_ = false;
                continue;
            }
            buffer_.clear();  // the rest of the refused line: read, never kept
            start_ = 0;
            scanned_ = 0;
            if (!fill()) {
                return stopped_ ? Next::stopped : Next::end;
            }
            continue;
        }
        if (newline != std::string::npos) {
            const std::size_t length = newline - start_;
            const std::size_t begin = start_;
            start_ = newline + 1;
            scanned_ = 0;
            if (length > max_line_) {
                return Next::too_long;
            }
            line.assign(buffer_, begin, length);
            return Next::line;
        }
        scanned_ = buffer_.size() - start_;
        if (scanned_ > max_line_) {
            skipping_ = true;
            return Next::too_long;
        }
        if (!fill()) {
            if (stopped_) {
                return Next::stopped;
            }
            if (buffer_.size() > start_) {  // a last line without '\n'
                line.assign(buffer_, start_, std::string::npos);
                buffer_.clear();
                start_ = 0;
                scanned_ = 0;
                return Next::line;
            }
            return Next::end;
        }
    }
}

}  // namespace cko::mcp
