// An event's member names are compared unescaped: an escaped spelling reads as the plain one.
#include "cko/profile/kineto/trace_event.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cko::profile::kineto {
namespace {

TraceEvent parse(const std::string& text) {
    static TraceEventParser parser;
    std::string padded = text;
    padded.append(64, ' ');
    TraceEvent event;
    parser.parse(std::string_view(padded.data(), text.size()), 0, event);
    return event;
}

TEST(TraceEvent, EscapedMemberNamesReadLikePlainOnes) {
    const std::string plain =
        R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1.5, "dur": 2, "pid": 0, "tid": 7,)"
        R"( "args": {"stream": 7, "correlation": 42}})";
    const std::string escaped =
        R"({"p\u0068": "X", "c\u0061t": "kernel", "name": "k", "\u0074s": 1.5, "dur": 2,)"
        R"( "pid": 0, "tid": 7, "args": {"str\u0065am": 7, "correlation": 42}})";
    for (const std::string& text : {plain, escaped}) {
        const TraceEvent e = parse(text);
        EXPECT_EQ(e.ph, "X") << text;
        EXPECT_EQ(e.cat, "kernel") << text;
        EXPECT_EQ(e.ts_ns, 1500) << text;
        EXPECT_EQ(e.dur_ns, 2000) << text;
        EXPECT_EQ(e.stream, 7) << text;
        EXPECT_EQ(e.correlation, 42) << text;
    }
}

TEST(TraceEvent, ANameWithAQuoteInsideIsNotCutShort) {
    // "a\"b" is neither "a" nor "ph": the name ends at its closing quote, not the escaped one.
    const TraceEvent e = parse(R"({"ph": "i", "a\"b": 1, "name": "n"})");
    EXPECT_EQ(e.ph, "i");
    EXPECT_EQ(e.name, "n");
}

}  // namespace
}  // namespace cko::profile::kineto
