// A string- and nesting-aware splitter of Kineto traces into members and events.
#include "cko/profile/kineto/trace_tokenizer.hpp"

#include "cko/profile/kineto/container_scan.hpp"
#include "cko/util/error.hpp"

#include <cstring>

namespace cko::profile::kineto {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// p points just past the opening quote; returns just past the closing quote, or nullptr when the
// string does not end inside [p, end).
const char* skip_string(const char* p, const char* end) {
    const char* from = p;
    while (true) {
        const auto* quote = static_cast<const char*>(std::memchr(from, '"', end - from));
        if (quote == nullptr) {
            return nullptr;
        }
        const char* b = quote;
        while (b > p && b[-1] == '\\') {
            --b;
        }
        if (((quote - b) & 1) == 0) {
            return quote + 1;
        }
        from = quote + 1;
    }
}

// p points at '{' or '['; returns just past the matching close, or nullptr when incomplete.
// [p, end) is followed by the tokenizer's padding (spaces), as find_container_end needs.
const char* skip_container(const char* p, const char* end) {
    return container_scan::find_container_end(p, end).end;
}

// A scalar (number, literal) ends at a delimiter; nullptr when the buffer ends first.
const char* skip_scalar(const char* p, const char* end) {
    while (p < end && !is_space(*p) && *p != ',' && *p != '}' && *p != ']') {
        ++p;
    }
    return p < end ? p : nullptr;
}

const char* skip_value(const char* p, const char* end) {
    if (*p == '{' || *p == '[') {
        return skip_container(p, end);
    }
    if (*p == '"') {
        return skip_string(p + 1, end);
    }
    return skip_scalar(p, end);
}

}  // namespace

TraceTokenizer::TraceTokenizer(TraceSink& sink) : sink_(sink) {}
TraceTokenizer::~TraceTokenizer() = default;

std::span<char> TraceTokenizer::prepare(std::size_t bytes) {
    if (pos_ > 0) {
        std::memmove(buffer_.get(), buffer_.get() + pos_, size_ - pos_);
        size_ -= pos_;
        consumed_ += pos_;
        pos_ = 0;
    }
    if (size_ > kMaxItemBytes) {
        throw Error(ErrorCode::file_too_large, "one trace event or top-level value exceeds 256 MiB",
                    {{"offset", consumed_}, {"limit_bytes", kMaxItemBytes}});
    }
    const std::size_t needed = size_ + bytes + kPadding;
    if (needed > capacity_) {
        const std::size_t grown = std::max(needed, capacity_ + capacity_ / 2);
        auto bigger = std::make_unique_for_overwrite<char[]>(grown);  // not zeroed: read into first
        if (size_ > 0) {  // the first buffer has nothing to keep (and memcpy from null is UB)
            std::memcpy(bigger.get(), buffer_.get(), size_);
        }
        buffer_ = std::move(bigger);
        capacity_ = grown;
    }
    return {buffer_.get() + size_, bytes};
}

void TraceTokenizer::commit(std::size_t bytes) {
    size_ += bytes;
    std::memset(buffer_.get() + size_, ' ', kPadding);
    process();
}

void TraceTokenizer::feed(std::string_view bytes) {
    const std::span<char> room = prepare(bytes.size());
    std::memcpy(room.data(), bytes.data(), bytes.size());
    commit(bytes.size());
}

void TraceTokenizer::fail(std::string_view what) const {
    throw Error(ErrorCode::malformed_input,
                std::string("not a Chrome/Kineto trace: ") + std::string(what),
                {{"offset", consumed_ + pos_}});
}

void TraceTokenizer::finish() {
    if (state_ == State::done) {
        return;
    }
    // A trailing scalar member value ends at EOF only if the root is unterminated anyway.
    throw Error(ErrorCode::truncated_input,
                "the trace ends before its root object is closed (truncated file?)",
                {{"bytes", consumed_ + size_}, {"events_read", events_}});
}

void TraceTokenizer::process() {
    const char* base = buffer_.get();
    const char* end = base + size_;
    const char* p = base + pos_;
    while (true) {
        while (p < end && is_space(*p)) {
            ++p;
        }
        pos_ = static_cast<std::size_t>(p - base);
        if (p == end) {
            return;
        }
        switch (state_) {
        case State::before_root:
            if (*p != '{') {
                fail("the file does not start with a JSON object");
            }
            ++p;
            state_ = State::expect_key;
            after_element_ = false;
            break;
        case State::expect_key: {
            if (*p == '}') {
                ++p;
                state_ = State::done;
                break;
            }
            if (*p == ',' && after_element_) {
                ++p;
                after_element_ = false;
                break;
            }
            if (*p != '"' || after_element_) {
                fail("expected a member name in the root object");
            }
            const char* key_end = skip_string(p + 1, end);
            if (key_end == nullptr) {
                return;  // wait for more input
            }
            key_.assign(p + 1, key_end - 1);
            p = key_end;
            state_ = State::expect_colon;
            break;
        }
        case State::expect_colon:
            if (*p != ':') {
                fail("expected ':' after a member name");
            }
            ++p;
            state_ = State::expect_value;
            break;
        case State::expect_value:
            if (key_ == "traceEvents") {
                if (*p != '[') {
                    fail("traceEvents is not an array");
                }
                ++p;
                saw_trace_events_ = true;
                state_ = State::expect_event;
                after_element_ = false;
            } else {
                const char* value_end = skip_value(p, end);
                if (value_end == nullptr) {
                    return;
                }
                sink_.on_member(key_, std::string_view(p, value_end - p));
                p = value_end;
                state_ = State::expect_key;
                after_element_ = true;
            }
            break;
        case State::expect_event: {
            if (*p == ']') {
                ++p;
                state_ = State::expect_key;
                after_element_ = true;
                break;
            }
            if (*p == ',' && after_element_) {
                ++p;
                after_element_ = false;
                break;
            }
            if (*p != '{' || after_element_) {
                fail("traceEvents holds something other than comma-separated objects");
            }
            const container_scan::ContainerEnd event = container_scan::find_container_end(p, end);
            if (event.end == nullptr) {
                return;
            }
            const char* event_end = event.end;
            sink_.on_event(std::string_view(p, event_end - p), event.ascii);
            ++events_;
            p = event_end;
            after_element_ = true;
            break;
        }
        case State::done:
            fail("content after the root object");
        }
    }
}

}  // namespace cko::profile::kineto
