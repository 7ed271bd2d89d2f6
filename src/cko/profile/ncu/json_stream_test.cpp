// JsonStream writes numbers as fmt's shortest form, integral values by their own fast path.
#include "cko/profile/ncu/json_stream.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace cko::profile::ncu {
namespace {

// The values as one stream writes them, one per line: one JsonStream (its buffer is a megabyte, and
// a stream per value made this test 3 minutes long under ASan).
std::vector<std::string> written(const std::vector<double>& values) {
    std::ostringstream out;
    {
        JsonStream js(out);
        for (const double v : values) {
            js.number(v);
            js.put('\n');
        }
    }
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

TEST(JsonStream, NumbersAreSpelledAsFmtSpellsThem) {
    std::vector<double> values = {
        0.0, -0.0, 0.5, -2.25, 1e-7, 3.88e12, 1e15, -1e15, 1e16, 9007199254740993.0, 1e300};
    for (int i = -2000; i <= 2000; ++i) {
        values.push_back(i);
    }
    for (int e = 0; e <= 17; ++e) {  // around each power of ten, to past the fast path's bound
        const double p = std::pow(10.0, e);
        for (const double v : {p - 1, p, p + 1, -p, std::nextafter(p, 0.0), p * 7 / 3}) {
            values.push_back(v);
        }
    }
    std::mt19937_64 rng(7);
    for (int i = 0; i < 20000; ++i) {
        const double magnitude = std::pow(10.0, static_cast<double>(rng() % 17));
        values.push_back(
            std::trunc(static_cast<double>(rng() % 1000000007) / 1000000007.0 * magnitude) *
            (i % 2 == 0 ? 1 : -1));
        values.push_back(static_cast<double>(rng() % 100000) / 100.0);
    }
    const std::vector<std::string> got = written(values);
    ASSERT_EQ(got.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(got[i], fmt::format("{}", values[i])) << values[i];
    }
    EXPECT_EQ(written({std::numeric_limits<double>::infinity(), std::nan("")}),
              (std::vector<std::string>{"null", "null"}));
}

// Short decimals (an export's "52.88", "0.0123") take short_decimal, fmt's spelling without fmt: it
// must give fmt's bytes for every decimal of 1 to 15 significant digits at every scale, at the
// bounds of its range (1e-4, 1e15), and leave to fmt what it cannot write (a 16th or 17th digit,
// results of arithmetic like 7/3, values outside the range).
TEST(JsonStream, ShortDecimalsAreSpelledAsFmtSpellsThem) {
    std::vector<double> values = {1e-4,
                                  -1e-4,
                                  std::nextafter(1e-4, 0.0),
                                  std::nextafter(1e-4, 1.0),
                                  9.99e-5,
                                  0.1,
                                  0.2,
                                  0.3,
                                  0.7,
                                  1.1,
                                  2.675,
                                  1e15 - 0.5,
                                  1e15 - 0.25,
                                  999999999999999.9,
                                  99999999999999.99,
                                  0.000123456789012345,
                                  0.10000000000000001,
                                  123456789012.345,
                                  52.88,
                                  -1978863004.21};
    std::mt19937_64 rng(11);
    for (int i = 0; i < 150000; ++i) {
        const int digits = 1 + static_cast<int>(rng() % 15);
        const auto mantissa =
            static_cast<double>(rng() % static_cast<std::uint64_t>(std::pow(10.0, digits)));
        const double v = mantissa / std::pow(10.0, static_cast<double>(rng() % 20));
        values.push_back(i % 3 == 0 ? -v : v);
        values.push_back(std::nextafter(v, 2 * v + 1));  // mostly not a short decimal
        values.push_back(v * 7 / 3);
    }
    // Any bit pattern of a double in [2^-17, 2^53): 7.6e-6 to 9e15.
    for (int i = 0; i < 20000; ++i) {
        double v = 0;
        const std::uint64_t bits = (rng() & 0x000fffffffffffffULL) | ((1006ULL + rng() % 70) << 52);
        std::memcpy(&v, &bits, sizeof v);
        values.push_back(v);
    }
    const std::vector<std::string> got = written(values);
    ASSERT_EQ(got.size(), values.size());
    std::size_t short_written = 0;
    std::array<char, 40> buffer{};
    for (std::size_t i = 0; i < values.size(); ++i) {
        ASSERT_EQ(got[i], fmt::format("{}", values[i])) << i;
        if (char* end = JsonStream::short_decimal(values[i], buffer.data())) {
            ++short_written;
            EXPECT_EQ(std::string(buffer.data(), end), got[i]);
        }
    }
    // The fast path is taken, not only agreed with: the random short decimals in range (about 70%
    // of the first third of the values) are written by it.
    EXPECT_GT(short_written, values.size() / 5);
    EXPECT_EQ(JsonStream::short_decimal(7.0 / 3, buffer.data()), nullptr);
    EXPECT_EQ(JsonStream::short_decimal(1e15, buffer.data()), nullptr);
    EXPECT_EQ(JsonStream::short_decimal(-0.0, buffer.data()), nullptr);
    EXPECT_EQ(JsonStream::short_decimal(9.99e-5, buffer.data()), nullptr);
}

// A view of no bytes may have a null data() (a Rule Type column the export lacks gives one): it is
// written as "" and nothing, without handing memcpy a null source (UBSan's fuzz_ncu_csv found it).
TEST(JsonStream, AnEmptyViewWithANullDataIsAnEmptyString) {
    const std::string_view none;
    ASSERT_EQ(none.data(), nullptr);
    std::ostringstream out;
    {
        JsonStream js(out);
        js.put('[');
        js.string(none);
        js.raw(none);
        js.put(',');
        js.dom_string(none);
        js.put(',');
        js.key(none);
        js.raw("1]");
    }
    EXPECT_EQ(out.str(), R"(["","","":1])");
}

// A held stream keeps everything written (past its first megabyte too) until write_to() sends it,
// keeps nothing after clear(), and sends nothing of its own when it goes.
TEST(JsonStream, AHeldStreamKeepsItsBytesUntilWrittenOut) {
    std::ostringstream out;
    std::string want;
    {
        JsonStream held{JsonStream::Held{}};
        held.raw("gone");
        held.clear();
        for (int i = 0; i < 300000; ++i) {  // about 2.4 MB: the buffer grows, twice
            held.integer(i);
            held.put(',');
            want += std::to_string(i) + ",";
        }
        EXPECT_EQ(out.str(), "");
        held.write_to(out);
        EXPECT_EQ(out.str(), want);
        held.raw("left");  // never written out
    }
    EXPECT_EQ(out.str(), want);
}

}  // namespace
}  // namespace cko::profile::ncu
