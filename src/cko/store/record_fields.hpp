// The strict member reader behind store/records.cpp's typed records: every problem is an
// invalid_record error naming the file and the member's JSON path. Internal to store/.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cko::store::detail {

// Reads the members of one JSON object of a stored record; every problem is an invalid_record
// error naming the file and the member's JSON path.
class Fields {
public:
    Fields(const Json& j, std::string_view file, std::string where)
        : j_(j), file_(file), where_(std::move(where)) {
        if (!j_.is_object()) {
            fail_at(where_, fmt::format("is {}, not an object", j_.type_name()));
        }
    }

    // Refuses members the schema does not name (each schema here has additionalProperties false).
    void only(std::initializer_list<std::string_view> known) const {
        for (const auto& [key, value] : j_.items()) {
            bool listed = false;
            for (const auto k : known) {
                listed = listed || k == key;
            }
            if (!listed) {
                fail(key, "is not a member of this record");
            }
        }
    }

    [[nodiscard]] bool has(std::string_view key) const { return j_.contains(key); }

    [[nodiscard]] const Json& member(std::string_view key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) {
            fail(key, "is missing");
        }
        return *it;
    }

    [[nodiscard]] std::string text(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_string()) {
            wrong(key, v, "a string");
        }
        return v.get<std::string>();
    }

    // A closed word (a CKO_CLOSED_ENUM): a string that is one of its spellings.
    template <class Enum>
    [[nodiscard]] Enum word(std::string_view key) const {
        const std::string value = text(key);
        if (const auto found = closed_enum_from_name<Enum>(value)) {
            return *found;
        }
        fail(key, fmt::format("is \"{}\", not one of: {}", value, closed_enum_words<Enum>()));
    }

    [[nodiscard]] std::optional<std::string> text_or_null(std::string_view key) const {
        const Json& v = member(key);
        if (v.is_null()) {
            return std::nullopt;
        }
        if (!v.is_string()) {
            wrong(key, v, "a string or null");
        }
        return v.get<std::string>();
    }

    [[nodiscard]] std::int64_t integer(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_number_integer()) {
            wrong(key, v, "an integer");
        }
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) {
            fail(key, "is past the range of a signed 64-bit integer");
        }
        return v.get<std::int64_t>();
    }

    [[nodiscard]] std::uint64_t natural(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_number_integer() ||
            (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
            wrong(key, v, "a non-negative integer");
        }
        return v.get<std::uint64_t>();
    }

    [[nodiscard]] double number(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_number()) {
            wrong(key, v, "a number");
        }
        return v.get<double>();
    }

    [[nodiscard]] bool boolean(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_boolean()) {
            wrong(key, v, "true or false");
        }
        return v.get<bool>();
    }

    [[nodiscard]] const Json& object(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_object()) {
            wrong(key, v, "an object");
        }
        return v;
    }

    [[nodiscard]] const Json& array(std::string_view key) const {
        const Json& v = member(key);
        if (!v.is_array()) {
            wrong(key, v, "an array");
        }
        return v;
    }

    [[nodiscard]] std::vector<std::string> texts(std::string_view key) const {
        std::vector<std::string> out;
        const Json& a = array(key);
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_string()) {
                fail_at(fmt::format("{}.{}[{}]", where_, key, i),
                        fmt::format("is {}, not a string", a[i].type_name()));
            }
            out.push_back(a[i].get<std::string>());
        }
        return out;
    }

    [[nodiscard]] Fields child(std::string_view key) const {
        return Fields(object(key), file_, path(key));
    }

    [[nodiscard]] std::string path(std::string_view key) const {
        return fmt::format("{}.{}", where_, key);
    }

    [[nodiscard]] std::string_view file() const { return file_; }

    void format_version(std::string_view expected) const {
        if (text("format_version") != expected) {
            fail("format_version",
                 fmt::format("is \"{}\", not \"{}\"", j_.at("format_version").get<std::string>(),
                             expected));
        }
    }

    [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
        fail_at(path(key), problem);
    }

private:
    [[noreturn]] void wrong(std::string_view key, const Json& v, std::string_view expected) const {
        fail(key, fmt::format("is {}, not {}", v.type_name(), expected));
    }

    [[noreturn]] void fail_at(const std::string& where, const std::string& problem) const {
        throw Error(ErrorCode::invalid_record,
                    fmt::format("{}: {} {} (a damaged or hand-edited record; run cko fsck)", file_,
                                where, problem),
                    Json{{"file", std::string(file_)}, {"field", where}});
    }

    const Json& j_;
    std::string_view file_;
    std::string where_;
};

inline Json optional_text(const std::optional<std::string>& s) {
    return s ? Json(*s) : Json(nullptr);
}

}  // namespace cko::store::detail
