// The capped line reader: lines come out whole, a too-long one is refused once and skipped.
#include "cko/mcp/line_reader.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <string>
#include <thread>
#include <vector>

namespace cko::mcp {
namespace {

// Everything `reader` yields, "<too long>" for a refused line.
std::vector<std::string> read_all(LineReader& reader) {
    std::vector<std::string> out;
    std::string line;
    for (;;) {
        const LineReader::Next n = reader.next(line);
        if (n == LineReader::Next::end) {
            return out;
        }
        out.push_back(n == LineReader::Next::line ? line : "<too long>");
    }
}

// A pipe whose writer sends `text` from a thread (the text may be larger than the pipe holds).
std::vector<std::string> lines_of(const std::string& text, std::size_t max_line) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
            if (n <= 0) {
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        ::close(fds[1]);
    });
    LineReader reader(fds[0], max_line);
    std::vector<std::string> out = read_all(reader);
    writer.join();
    ::close(fds[0]);
    return out;
}

TEST(LineReaderTest, SplitsLinesAndKeepsALastLineWithoutNewline) {
    EXPECT_EQ(lines_of("a\nbc\n\nlast", 10), (std::vector<std::string>{"a", "bc", "", "last"}));
    EXPECT_EQ(lines_of("", 10), std::vector<std::string>{});
}

TEST(LineReaderTest, ALineOverTheCapIsRefusedOnceAndTheNextLineIsRead) {
    const std::string big(3 * 1000 * 1000, 'x');  // many reads, far over the cap
    EXPECT_EQ(lines_of("ok\n" + big + "\nafter\n", 1000),
              (std::vector<std::string>{"ok", "<too long>", "after"}));
    // Exactly the cap passes; one byte more does not, whether or not its '\n' came in the same
    // read.
    EXPECT_EQ(lines_of(std::string(1000, 'y') + "\n" + std::string(1001, 'z') + "\nend", 1000),
              (std::vector<std::string>{std::string(1000, 'y'), "<too long>", "end"}));
    EXPECT_EQ(lines_of(big, 1000), std::vector<std::string>{"<too long>"});
}

TEST(LineReaderTest, AWriteToTheStopDescriptorEndsTheWaitForInput) {
    int input[2];
    int stop[2];
    ASSERT_EQ(::pipe(input), 0);
    ASSERT_EQ(::pipe(stop), 0);
    ASSERT_EQ(::write(input[1], "one\n", 4), 4);
    LineReader reader(input[0], 100, stop[0]);
    std::string line;
    EXPECT_EQ(reader.next(line), LineReader::Next::line);
    EXPECT_EQ(line, "one");
    std::thread signal_handler([&] { EXPECT_EQ(::write(stop[1], "x", 1), 1); });
    EXPECT_EQ(reader.next(line), LineReader::Next::stopped);  // input stays open, unwritten
    signal_handler.join();
    for (const int fd : {input[0], input[1], stop[0], stop[1]}) {
        ::close(fd);
    }
}

}  // namespace
}  // namespace cko::mcp
