// JsonStream's slow paths: DOM values and strings that need escapes.
#include "cko/profile/ncu/json_stream.hpp"

namespace cko::profile::ncu {

void JsonStream::dom(const nlohmann::json& value) {
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        raw("null");
        return;
    case nlohmann::json::value_t::boolean:
        raw(value.get<bool>() ? "true" : "false");
        return;
    case nlohmann::json::value_t::number_integer:
        integer(value.get<std::int64_t>());
        return;
    case nlohmann::json::value_t::number_unsigned:
        integer(value.get<std::uint64_t>());
        return;
    case nlohmann::json::value_t::number_float:
        dom_number(value.get<double>());
        return;
    case nlohmann::json::value_t::string:
        dom_string(value.get_ref<const std::string&>());
        return;
    case nlohmann::json::value_t::object: {
        put('{');
        bool first = true;
        for (const auto& [name, member] : value.items()) {
            if (!first) {
                put(',');
            }
            first = false;
            dom_string(name);
            put(':');
            dom(member);
        }
        put('}');
        return;
    }
    case nlohmann::json::value_t::array: {
        put('[');
        bool first = true;
        for (const auto& member : value) {
            if (!first) {
                put(',');
            }
            first = false;
            dom(member);
        }
        put(']');
        return;
    }
    default:
        raw(value.dump());
    }
}

void JsonStream::escaped(std::string_view text) {
    put('"');
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }
        raw(text.substr(start, i - start));
        switch (c) {
        case '"':
            raw("\\\"");
            break;
        case '\\':
            raw("\\\\");
            break;
        case '\n':
            raw("\\n");
            break;
        case '\r':
            raw("\\r");
            break;
        case '\t':
            raw("\\t");
            break;
        default: {
            char* out = reserve(8);
            commit(fmt::format_to(out, "\\u{:04x}", c));
        }
        }
        start = i + 1;
    }
    raw(text.substr(start));
    put('"');
}

}  // namespace cko::profile::ncu
