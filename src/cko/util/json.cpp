// Strict JSON reading through nlohmann's SAX interface, and canonical writing.
#include "cko/util/json.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace cko {
namespace {

bool is_plain_key(std::string_view key) {
    if (key.empty()) {
        return false;
    }
    for (char c : key) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

// Builds the DOM while keeping the path of the value being read, so every rejection can say where.
class StrictSax : public nlohmann::json_sax<Json> {
public:
    StrictSax(const JsonLimits& limits, std::string_view source)
        : limits_(limits), source_(source) {}

    Json take() { return std::move(root_); }

    bool null() override { return put(Json(nullptr)); }
    bool boolean(bool v) override { return put(Json(v)); }
    bool number_integer(number_integer_t v) override { return put(Json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
    bool number_float(number_float_t v, const string_t& text) override {
        if (!std::isfinite(v)) {
            fail(ErrorCode::json_non_finite, fmt::format("number {} is not a finite double", text),
                 value_path());
        }
        return put(Json(v));
    }
    bool string(string_t& v) override { return put(Json(std::move(v))); }
    bool binary(binary_t& /*v*/) override {
        fail(ErrorCode::json_parse, "binary values are not JSON", value_path());
    }
    bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
    bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        Frame& top = stack_.back();
        if (top.container->contains(k)) {
            fail(ErrorCode::json_duplicate_key, fmt::format("duplicate key \"{}\"", k),
                 json_path_append_key(top.path, k));
        }
        top.pending_key = std::move(k);
        return true;
    }
    bool parse_error(std::size_t position, const std::string& last_token,
                     const nlohmann::detail::exception& ex) override {
        const std::string what = ex.what();
        ErrorCode code = ErrorCode::json_parse;
        if (what.find("UTF-8") != std::string::npos || what.find("utf-8") != std::string::npos) {
            code = ErrorCode::json_invalid_utf8;
        } else if (ex.id == 406 || last_token.ends_with("N") || last_token.ends_with("I")) {
            // 406: a number too large for a double; N/I: the NaN/Infinity literals some writers
            // emit.
            code = ErrorCode::json_non_finite;
        }
        // nlohmann's message already carries line/column; keep it after our own words.
        fail(code, fmt::format("invalid JSON at byte {}: {}", position, what), value_path());
    }

private:
    struct Frame {
        Json* container;
        std::string path;
        std::string pending_key;
    };

    [[noreturn]] void fail(ErrorCode code, const std::string& message, const std::string& path) {
        throw Error(code, fmt::format("{}: {} (at {})", source_, message, path),
                    Json{{"source", source_}, {"path", path}});
    }

    std::string value_path() const {
        if (stack_.empty()) {
            return "$";
        }
        const Frame& top = stack_.back();
        if (top.container->is_object()) {
            return top.pending_key.empty() && top.container->empty()
                       ? top.path
                       : json_path_append_key(top.path, top.pending_key);
        }
        return json_path_append_index(top.path, top.container->size());
    }

    // Inserts v at the current position; returns the inserted value's address.
    Json* insert(Json v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Frame& top = stack_.back();
        if (top.container->is_object()) {
            Json& slot = (*top.container)[top.pending_key];
            slot = std::move(v);
            return &slot;
        }
        top.container->push_back(std::move(v));
        return &top.container->back();
    }

    bool put(Json v) {
        insert(std::move(v));
        return true;
    }

    bool open(Json empty) {
        if (stack_.size() + 1 > limits_.max_depth) {
            fail(ErrorCode::json_too_deep,
                 fmt::format("nesting deeper than {} levels", limits_.max_depth), value_path());
        }
        std::string path = value_path();
        Json* slot = insert(std::move(empty));
        stack_.push_back(Frame{slot, std::move(path), {}});
        return true;
    }

    bool close() {
        stack_.pop_back();
        return true;
    }

    const JsonLimits& limits_;
    std::string source_;
    Json root_;
    std::vector<Frame> stack_;
};

void require_finite(const Json& value, const std::string& path) {
    switch (value.type()) {
    case Json::value_t::number_float:
        if (!std::isfinite(value.get<double>())) {
            throw Error(ErrorCode::json_non_finite,
                        fmt::format("cannot write a non-finite number (at {})", path),
                        Json{{"path", path}});
        }
        break;
    case Json::value_t::object:
        for (const auto& [k, v] : value.items()) {
            require_finite(v, json_path_append_key(path, k));
        }
        break;
    case Json::value_t::array:
        for (std::size_t i = 0; i < value.size(); ++i) {
            require_finite(value[i], json_path_append_index(path, i));
        }
        break;
    default:
        break;
    }
}

}  // namespace

std::string json_path_append_key(std::string_view parent, std::string_view key) {
    if (is_plain_key(key)) {
        return fmt::format("{}.{}", parent, key);
    }
    return fmt::format("{}[{}]", parent, printable_json(Json(std::string(key)), -1));
}

std::string json_path_append_index(std::string_view parent, std::size_t index) {
    return fmt::format("{}[{}]", parent, index);
}

Json parse_json_strict(std::string_view text, const JsonLimits& limits, std::string_view source) {
    if (text.size() > limits.max_bytes) {
        throw Error(ErrorCode::json_too_large,
                    fmt::format("{}: {} bytes exceed the {}-byte limit for JSON input", source,
                                text.size(), limits.max_bytes),
                    Json{{"source", source}, {"size", text.size()}, {"limit", limits.max_bytes}});
    }
    StrictSax sax(limits, source);
    // strict=true: trailing content after the document is an error.
    Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true);
    return sax.take();
}

Json read_json_file(const std::filesystem::path& path, const JsonLimits& limits) {
    const std::string bytes = read_file_capped(path, limits.max_bytes);
    return parse_json_strict(bytes, limits, path.string());
}

namespace {

// The one place where ill-formed UTF-8 becomes U+FFFD on the way out (nlohmann's own `replace`
// handler leaves object keys alone, so the value is made valid first, only when it needs it).
std::string dump_valid_utf8(const Json& value, int indent) {
    try {
        return value.dump(indent, ' ', false, Json::error_handler_t::strict);
    } catch (const nlohmann::json::type_error&) {
        return json_with_valid_utf8(value).dump(indent, ' ', false, Json::error_handler_t::replace);
    }
}

}  // namespace

std::string canonical_json(const Json& value) {
    require_finite(value, "$");
    return dump_valid_utf8(value, -1);
}

std::string printable_json(const Json& value, int indent) {
    return dump_valid_utf8(value, indent);
}

}  // namespace cko
