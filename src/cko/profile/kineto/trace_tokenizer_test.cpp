// The tokenizer finds members and events whatever the chunking, and refuses what is not a trace.
#include "cko/profile/kineto/trace_tokenizer.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cko::profile::kineto {
namespace {

struct Recorder : TraceSink {
    std::vector<std::string> members;
    std::vector<std::string> events;
    void on_member(std::string_view key, std::string_view raw) override {
        members.push_back(std::string(key) + "=" + std::string(raw));
    }
    void on_event(std::string_view raw, bool /*ascii*/) override { events.emplace_back(raw); }
};

const std::string kTrace =
    R"( {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H]}\"200"}],)"
    R"( "traceEvents": [ {"ph": "X", "name": "a\"}{[", "args": {"x": [1, {"y": 2}]}},)"
    "\n{\"ph\": \"i\", \"name\": \"\\\\\"} ],\n \"traceName\": \"t\", \"n\": 12 }\n";

Recorder tokenize_in_chunks(const std::string& text, std::size_t chunk) {
    Recorder sink;
    TraceTokenizer tokenizer(sink);
    for (std::size_t i = 0; i < text.size(); i += chunk) {
        tokenizer.feed(std::string_view(text).substr(i, chunk));
    }
    tokenizer.finish();
    return sink;
}

TEST(TraceTokenizer, SplitsEventsAndMembersForEveryChunkSize) {
    for (std::size_t chunk = 1; chunk <= kTrace.size(); ++chunk) {
        const Recorder r = tokenize_in_chunks(kTrace, chunk);
        ASSERT_EQ(r.events.size(), 2u) << "chunk " << chunk;
        EXPECT_EQ(r.events[0], R"({"ph": "X", "name": "a\"}{[", "args": {"x": [1, {"y": 2}]}})");
        EXPECT_EQ(r.events[1], "{\"ph\": \"i\", \"name\": \"\\\\\"}");
        ASSERT_EQ(r.members.size(), 4u);
        EXPECT_EQ(r.members[0], "schemaVersion=1");
        EXPECT_EQ(r.members[1], R"(deviceProperties=[{"id": 0, "name": "H]}\"200"}])");
        EXPECT_EQ(r.members[2], "traceName=\"t\"");
        EXPECT_EQ(r.members[3], "n=12");
    }
}

TEST(TraceTokenizer, ATruncatedTraceIsTruncatedInput) {
    const std::string cut = kTrace.substr(0, kTrace.find("traceName"));
    EXPECT_CKO_ERROR((void)tokenize_in_chunks(cut, 7), ErrorCode::truncated_input);
}

TEST(TraceTokenizer, RefusesNonTraces) {
    for (const std::string text :
         {"[1, 2]", R"({"traceEvents": {"a": 1}})", R"({"traceEvents": [1, 2]})",
          R"({"a": 1} {"b": 2})", R"({"traceEvents": [{"a": 1} {"b": 2}]})"}) {
        SCOPED_TRACE(text);
        EXPECT_CKO_ERROR((void)tokenize_in_chunks(text, 3), ErrorCode::malformed_input);
    }
}

}  // namespace
}  // namespace cko::profile::kineto
