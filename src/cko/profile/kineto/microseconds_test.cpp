// Kineto microsecond text becomes exact integer nanoseconds up to 3 digits, rounded beyond, or is
// refused.
#include "cko/profile/kineto/microseconds.hpp"

#include <gtest/gtest.h>

namespace cko::profile::kineto {
namespace {

TEST(MicrosecondsText, KeepsEveryNanosecondOfLargeTimestamps) {
    // 5122375887118.662 us is not representable as a double in ns; text parsing keeps it.
    EXPECT_EQ(microseconds_text_to_ns("5122375887118.662"), 5122375887118662);
    EXPECT_EQ(microseconds_text_to_ns("3737.251"), 3737251);
    EXPECT_EQ(microseconds_text_to_ns("0.737"), 737);
}

TEST(MicrosecondsText, PadsShortFractionsAndIntegers) {
    EXPECT_EQ(microseconds_text_to_ns("12"), 12000);
    EXPECT_EQ(microseconds_text_to_ns("12.5"), 12500);
    EXPECT_EQ(microseconds_text_to_ns("12.05"), 12050);
    EXPECT_EQ(microseconds_text_to_ns("-1"), -1000);
    EXPECT_EQ(microseconds_text_to_ns("1.250000"), 1250);  // trailing zeros lose nothing
}

TEST(MicrosecondsText, RoundsSubNanosecondDigitsAndSaysSo) {
    bool rounded = false;
    EXPECT_EQ(microseconds_text_to_ns("1.2344", &rounded), 1234);
    EXPECT_TRUE(rounded);
    EXPECT_EQ(microseconds_text_to_ns("1.2345", &rounded), 1235);  // ties away from zero
    EXPECT_EQ(microseconds_text_to_ns("-1.2345", &rounded), -1235);
    EXPECT_EQ(microseconds_text_to_ns("0.9999", &rounded), 1000);
    EXPECT_EQ(microseconds_text_to_ns("1616000000130.000000001", &rounded), 1616000000130000);
    EXPECT_TRUE(rounded);
    EXPECT_EQ(microseconds_text_to_ns("3.250", &rounded), 3250);
    EXPECT_FALSE(rounded);
    EXPECT_EQ(microseconds_text_to_ns("3.2500000", &rounded), 3250);
    EXPECT_FALSE(rounded);  // trailing zeros lose nothing
}

TEST(MicrosecondsText, RefusesWhatIsNotAPlainDecimal) {
    EXPECT_FALSE(microseconds_text_to_ns("1e3"));
    EXPECT_FALSE(microseconds_text_to_ns(""));
    EXPECT_FALSE(microseconds_text_to_ns("1."));
    EXPECT_FALSE(microseconds_text_to_ns(".5"));
    EXPECT_FALSE(microseconds_text_to_ns("abc"));
    EXPECT_FALSE(microseconds_text_to_ns("9223372036854775.808"));  // int64 ns overflow
    EXPECT_EQ(microseconds_text_to_ns("9223372036854775.807"), INT64_MAX);
}

}  // namespace
}  // namespace cko::profile::kineto
