// Splits a Chrome/Kineto trace byte stream into top-level members and single trace events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace cko::profile::kineto {

// Receives the pieces of the trace as the tokenizer finds them. Views are valid only during
// the call. An event's bytes are followed by at least `padding` readable bytes, so that
// simdjson can parse them in place.
class TraceSink {
public:
    virtual ~TraceSink() = default;
    // A top-level member other than traceEvents, with its raw JSON value text.
    virtual void on_member(std::string_view key, std::string_view raw_value) = 0;
    // One element of traceEvents (always a JSON object), as raw text. `ascii`: no byte of it is
    // above 0x7f, so it is valid UTF-8 without a check (false: it may or may not be).
    virtual void on_event(std::string_view raw_event, bool ascii) = 0;
};

// Why not simdjson over the whole file: on-demand needs the whole document in memory plus its
// structural index (together about twice the file size), which breaks the memory bound for
// traces of hundreds of MB. This class only finds where each event starts and ends (string and
// nesting aware) over a bounded buffer; the events themselves are parsed with simdjson.
class TraceTokenizer {
public:
    static constexpr std::size_t kPadding = 64;                           // >= SIMDJSON_PADDING
    static constexpr std::size_t kMaxItemBytes = std::size_t{256} << 20;  // one event/member

    explicit TraceTokenizer(TraceSink& sink);
    ~TraceTokenizer();
    TraceTokenizer(const TraceTokenizer&) = delete;
    TraceTokenizer& operator=(const TraceTokenizer&) = delete;

    // Zero-copy input: prepare() returns room for at least `bytes`, commit() hands over what was
    // written there and processes every complete item.
    [[nodiscard]] std::span<char> prepare(std::size_t bytes);
    void commit(std::size_t bytes);
    void feed(std::string_view bytes);  // prepare + copy + commit

    // Ends the input; throws truncated_input when the root object is not closed.
    void finish();

    [[nodiscard]] std::uint64_t events() const noexcept { return events_; }
    [[nodiscard]] bool saw_trace_events() const noexcept { return saw_trace_events_; }

private:
    enum class State {
        before_root,
        expect_key,
        expect_colon,
        expect_value,
        expect_event,
        done,
    };

    void process();
    [[noreturn]] void fail(std::string_view what) const;

    TraceSink& sink_;
    std::unique_ptr<char[]> buffer_;
    std::size_t capacity_ = 0;
    std::size_t size_ = 0;
    std::size_t pos_ = 0;         // first byte not yet consumed
    std::uint64_t consumed_ = 0;  // bytes dropped from the front, for error offsets
    State state_ = State::before_root;
    std::string key_;
    bool after_element_ = false;  // a ',' is needed before the next key/event
    bool saw_trace_events_ = false;
    std::uint64_t events_ = 0;
};

}  // namespace cko::profile::kineto
