// Lines of a file descriptor with a cap on their length: the MCP stdio transport's framing.
#pragma once

#include <cstddef>
#include <string>

namespace cko::mcp {

// Reads '\n'-terminated lines from `fd` (a final line without '\n' counts too). A line longer than
// `max_line` bytes is never held: next() answers too_long as soon as the cap is passed and then
// reads the rest of that line away without keeping it, so memory stays near max_line whatever
// arrives.
class LineReader {
public:
    enum class Next { line, too_long, end, stopped };

    // With `stop_fd` (>= 0), next() also waits on it: once it is readable (a signal handler wrote
    // to it), next() answers stopped.
    LineReader(int fd, std::size_t max_line, int stop_fd = -1);

    // The next line without its '\n' (and without a '\r' before it: kept, JSON ignores it).
    [[nodiscard]] Next next(std::string& line);

private:
    bool fill();  // appends what one read(2) gives; false at end of input (or a read error)

    int fd_;
    std::size_t max_line_;
    int stop_fd_;
    std::string buffer_;
    std::size_t start_ = 0;    // where the unread part of buffer_ begins
    std::size_t scanned_ = 0;  // bytes after start_ known to hold no '\n'
    bool skipping_ = false;    // inside a too-long line: drop bytes up to its '\n'
    bool at_end_ = false;
    bool stopped_ = false;
};

}  // namespace cko::mcp
