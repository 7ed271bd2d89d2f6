// find_container_end agrees with a plain byte loop on random JSON-ish text at every block offset.
#include "cko/profile/kineto/container_scan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace cko::profile::kineto::container_scan {
namespace {

// The rules read plainly: strings hide brackets, depth counts the rest, and a backslash escapes
// the byte after it (outside strings too, as simdjson reads it: valid JSON has none there).
ContainerEnd bytewise(const std::string& text, std::size_t from, std::size_t limit) {
    ContainerEnd out;
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    bool ascii = true;
    for (std::size_t i = from; i < limit; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        ascii = ascii && c < 0x80;
        if (escaped) {
            escaped = false;
            continue;
        }
        if (c == '\\') {
            escaped = true;
            continue;
        }
        if (in_string) {
            in_string = c != '"';
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            out.end = text.data() + i + 1;
            out.ascii = ascii;
            return out;
        }
    }
    return out;
}

TEST(ContainerScan, AgreesWithTheByteLoopOnRandomText) {
    std::mt19937 rng(7);
    const std::string alphabet = "{}[]\"\\\\\\ab, :\xc3\xa9";
    for (int round = 0; round < 3000; ++round) {
        const std::size_t length = 1 + rng() % 300;
        std::string text = "{";
        for (std::size_t i = 1; i < length; ++i) {
            text += alphabet[rng() % alphabet.size()];
        }
        const std::size_t limit = text.size();
        text.append(64, ' ');  // the tokenizer's padding
        const ContainerEnd want = bytewise(text, 0, limit);
        const ContainerEnd got = find_container_end(text.data(), text.data() + limit);
        ASSERT_EQ(got.end, want.end) << "round " << round << ": " << text.substr(0, limit);
        if (want.end != nullptr) {
            ASSERT_EQ(got.ascii, want.ascii) << "round " << round;
        }
    }
}

TEST(ContainerScan, EscapesAndStringsAcrossBlockEdges) {
    // A string that opens in one 64-byte block and closes in the next, with a backslash run
    // ending exactly at the block edge, hides the brackets inside it.
    for (std::size_t pad = 0; pad < 70; ++pad) {
        for (std::size_t slashes = 0; slashes < 5; ++slashes) {
            std::string text = "{\"k\": \"" + std::string(pad, 'x') + std::string(slashes, '\\') +
                               "\"}] \", \"a\": [1, {\"b\": \"}\"}]}";
            const std::size_t limit = text.size();
            text.append(64, ' ');
            const ContainerEnd want = bytewise(text, 0, limit);
            const ContainerEnd got = find_container_end(text.data(), text.data() + limit);
            ASSERT_EQ(got.end, want.end) << pad << " " << slashes;
        }
    }
}

TEST(ContainerScan, AByteAboveAsciiAfterTheCloseDoesNotCount) {
    std::string text = "{\"a\": 1}\xff\xff";
    const std::size_t limit = text.size();
    text.append(64, ' ');
    const ContainerEnd got = find_container_end(text.data(), text.data() + limit);
    ASSERT_EQ(got.end, text.data() + 8);
    EXPECT_TRUE(got.ascii);
    text[2] = '\xe9';  // the member name's letter
    EXPECT_FALSE(find_container_end(text.data(), text.data() + limit).ascii);
}

TEST(ContainerScan, AnUnclosedContainerHasNoEnd) {
    std::string text = "{\"a\": [1, 2], \"b\": \"}\"";
    const std::size_t limit = text.size();
    text.append(64, ' ');
    EXPECT_EQ(find_container_end(text.data(), text.data() + limit).end, nullptr);
}

}  // namespace
}  // namespace cko::profile::kineto::container_scan
