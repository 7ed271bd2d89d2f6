// One Kineto trace event, parsed in place with simdjson on-demand into the fields cko uses.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace cko::profile::kineto {

// The fields of one event. String views point into the parser and are valid until the next
// parse. Numbers in args are kept only where the summaries use them.
struct TraceEvent {
    std::string_view ph;
    std::string_view cat;
    std::string_view name;
    std::optional<std::int64_t> pid;  // absent when missing or not an integer ("Spans")
    std::optional<std::int64_t> tid;
    std::optional<std::int64_t> ts_ns;
    std::optional<std::int64_t> dur_ns;
    std::string_view ts_text;  // raw token, for error messages
    std::string_view dur_text;
    int rounded_timestamps = 0;      // of ts and dur, how many had sub-nanosecond digits (rounded)
    std::optional<std::int64_t> id;  // flow id
    // args
    std::optional<std::int64_t> device;
    std::optional<std::int64_t> stream;
    std::optional<std::int64_t> correlation;
    std::optional<std::int64_t> bytes;
};

class TraceEventParser {
public:
    TraceEventParser();
    ~TraceEventParser();
    TraceEventParser(const TraceEventParser&) = delete;
    TraceEventParser& operator=(const TraceEventParser&) = delete;

    // Parses one event object; `raw` must be followed by at least 64 readable bytes. Throws
    // cko::Error(malformed_input) naming the event index when the object is not valid JSON or a
    // timestamp is not a plain decimal.
    void parse(std::string_view raw, std::uint64_t index, TraceEvent& out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cko::profile::kineto
