// One closed enum per concept, spelled once: CKO_CLOSED_ENUM makes the enum, its JSON names and
// both lookups.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

// CKO_CLOSED_ENUM(Type, LIST, name_fn, from_name_fn), with LIST(X) expanding X(enumerator) for
// each enumerator: the enumerator's name is its JSON spelling. Defines `enum class Type`,
// `std::string_view name_fn(Type)` and `std::optional<Type> from_name_fn(std::string_view)`, and
// `closed_enum_spellings(Type)` (found by argument-dependent lookup) for the generic helpers below.
#define CKO_ENUM_ENUMERATOR_(name) name,
#define CKO_ENUM_SPELLING_(name) std::string_view(#name),
#define CKO_CLOSED_ENUM(Type, LIST, name_fn, from_name_fn)                                     \
    enum class Type { LIST(CKO_ENUM_ENUMERATOR_) };                                            \
    inline constexpr std::array k##Type##Spellings = {LIST(CKO_ENUM_SPELLING_)};               \
    [[nodiscard]] constexpr std::string_view name_fn(Type value) noexcept {                    \
        return k##Type##Spellings[static_cast<std::size_t>(value)];                            \
    }                                                                                          \
    [[nodiscard]] constexpr std::optional<Type> from_name_fn(std::string_view name) noexcept { \
        for (std::size_t i = 0; i < k##Type##Spellings.size(); ++i) {                          \
            if (k##Type##Spellings[i] == name) {                                               \
                return static_cast<Type>(i);                                                   \
            }                                                                                  \
        }                                                                                      \
        return std::nullopt;                                                                   \
    }                                                                                          \
    [[nodiscard]] constexpr const auto& closed_enum_spellings(Type) noexcept {                 \
        return k##Type##Spellings;                                                             \
    }

namespace cko {

// The JSON spellings of a closed enum, in declaration order.
template <class Enum>
[[nodiscard]] constexpr const auto& spellings_of() noexcept {
    return closed_enum_spellings(Enum{});
}

// The enumerator spelled `name`, or nullopt: the generic form of each enum's from_name_fn.
template <class Enum>
[[nodiscard]] constexpr std::optional<Enum> closed_enum_from_name(std::string_view name) noexcept {
    const auto& spellings = spellings_of<Enum>();
    for (std::size_t i = 0; i < spellings.size(); ++i) {
        if (spellings[i] == name) {
            return static_cast<Enum>(i);
        }
    }
    return std::nullopt;
}

// The allowed words as an error message lists them: "lower, higher".
template <class Enum>
[[nodiscard]] std::string closed_enum_words() {
    std::string out;
    for (const std::string_view word : spellings_of<Enum>()) {
        out += out.empty() ? "" : ", ";
        out += word;
    }
    return out;
}

}  // namespace cko
