// simdjson on-demand parsing of one Kineto event, with decimal microsecond → ns timestamps.
#include "cko/profile/kineto/trace_event.hpp"

#include "cko/profile/kineto/microseconds.hpp"
#include "cko/util/error.hpp"

#include <simdjson.h>

#include <string>

namespace cko::profile::kineto {
namespace od = simdjson::ondemand;

struct TraceEventParser::Impl {
    od::parser parser;
};

namespace {

[[noreturn]] void bad_event(std::uint64_t index, std::string_view what, std::string_view raw) {
    constexpr std::size_t kExcerpt = 200;
    throw Error(ErrorCode::malformed_input,
                "trace event #" + std::to_string(index) + " " + std::string(what),
                {{"event_index", index}, {"excerpt", std::string(raw.substr(0, kExcerpt))}});
}

std::string_view trim_token(std::string_view token) {
    while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                              token.back() == '\t')) {
        token.remove_suffix(1);
    }
    if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
        token = token.substr(1, token.size() - 2);  // some exporters quote timestamps
    }
    return token;
}

std::optional<std::int64_t> optional_int(od::value value) {
    std::int64_t out = 0;
    if (value.get_int64().get(out) == simdjson::SUCCESS) {
        return out;
    }
    return std::nullopt;
}

}  // namespace

TraceEventParser::TraceEventParser() : impl_(std::make_unique<Impl>()) {}
TraceEventParser::~TraceEventParser() = default;

void TraceEventParser::parse(std::string_view raw, std::uint64_t index, TraceEvent& out) {
    out = TraceEvent{};
    od::document doc;
    const simdjson::padded_string_view view(raw.data(), raw.size(),
                                            raw.size() + simdjson::SIMDJSON_PADDING);
    if (impl_->parser.iterate(view).get(doc) != simdjson::SUCCESS) {
        bad_event(index, "is not valid JSON", raw);
    }
    od::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS) {
        bad_event(index, "is not a JSON object", raw);
    }
    for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
            bad_event(index, "has an unreadable member name", raw);
        }
        od::value value = field.value();
        simdjson::error_code error = simdjson::SUCCESS;
        if (key == "ph") {
            error = value.get_string().get(out.ph);
        } else if (key == "cat") {
            error = value.get_string().get(out.cat);
        } else if (key == "name") {
            error = value.get_string().get(out.name);
        } else if (key == "pid") {
            out.pid = optional_int(value);
        } else if (key == "tid") {
            out.tid = optional_int(value);
        } else if (key == "ts" || key == "dur") {
            const std::string_view token = trim_token(value.raw_json_token());
            bool rounded = false;
            const auto ns = microseconds_text_to_ns(token, &rounded);
            if (!ns) {
                bad_event(index,
                          "has " + std::string(key) + " '" + std::string(token) +
                              "', not a plain decimal number of microseconds (no exponent, "
                              "within int64 nanoseconds)",
                          raw);
            }
            out.rounded_timestamps += rounded ? 1 : 0;
            (key == "ts" ? out.ts_ns : out.dur_ns) = ns;
            (key == "ts" ? out.ts_text : out.dur_text) = token;
        } else if (key == "id") {
            out.id = optional_int(value);
        } else if (key == "args") {
            od::object args;
            if (value.get_object().get(args) != simdjson::SUCCESS) {
                continue;  // args that are not an object carry nothing cko reads
            }
            for (auto arg : args) {
                std::string_view arg_key;
                if (arg.unescaped_key().get(arg_key) != simdjson::SUCCESS) {
                    bad_event(index, "has an unreadable args member name", raw);
                }
                if (arg_key == "correlation") {
                    out.correlation = optional_int(arg.value());
                } else if (arg_key == "stream") {
                    out.stream = optional_int(arg.value());
                } else if (arg_key == "device") {
                    out.device = optional_int(arg.value());
                } else if (arg_key == "bytes") {
                    out.bytes = optional_int(arg.value());
                }
            }
        }
        if (error != simdjson::SUCCESS) {
            bad_event(index, "has a member '" + std::string(key) + "' of the wrong type", raw);
        }
    }
    // Nothing can follow the object: the tokenizer cut `raw` at its closing brace.
}

}  // namespace cko::profile::kineto
