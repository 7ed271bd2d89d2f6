// A driver's stderr tail: per-call subject markers (of a driver without the SDKs' running-subject
// file) fold into the last one, which still says who was running; lines and bytes are bounded.
#include "cko/driver/stderr_tail.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cko::driver {
namespace {

std::string paired_stderr(int calls, const std::string& after) {
    std::string s = "warming up\n";
    for (int i = 0; i < calls; ++i) {
        s += i % 2 == 0 ? "cko: subject reference case small\n"
                        : "cko: subject candidate case small\n";
    }
    return s + after;
}

TEST(StderrTail, TwoThousandMarkersFoldIntoTheLastAndTheLinesThatMatterStay) {
    const std::string tail =
        stderr_tail_of(paired_stderr(2000, "CUDA error: an illegal memory access\n"), 5, 1500);
    EXPECT_EQ(tail,
              "(1999 subject marker lines left out)\nwarming up\ncko: subject candidate case "
              "small\nCUDA error: an illegal memory access");
}

TEST(StderrTail, TheLastMarkerIsKeptWhenTheLinesAfterItFillTheTail) {
    std::string after;
    for (int i = 0; i < 10; ++i) {
        after += "frame " + std::to_string(i) + "\n";
    }
    const std::string tail = stderr_tail_of(paired_stderr(3, after), 4, 1500);
    EXPECT_EQ(tail,
              "(2 subject marker lines left out)\ncko: subject reference case small\nframe 7\n"
              "frame 8\nframe 9");
    // A byte cut does not lose it either.
    const std::string cut = stderr_tail_of(paired_stderr(3, std::string(5000, 'x') + "\n"), 5, 100);
    EXPECT_EQ(cut.rfind("cko: subject reference case small"), cut.find("cko: subject"));
    EXPECT_NE(cut.find("…"), std::string::npos);
    EXPECT_LT(cut.size(), 200U);
}

TEST(StderrTail, WithoutMarkersItIsTheLastLinesUnchanged) {
    EXPECT_EQ(stderr_tail_of("a\nb\nc\n\n", 2, 100), "b\nc");
    EXPECT_EQ(stderr_tail_of("", 5, 100), "");
    EXPECT_EQ(stderr_tail_of("one marker\ncko: subject candidate case a\n", 5, 100),
              "one marker\ncko: subject candidate case a");
}

}  // namespace
}  // namespace cko::driver
