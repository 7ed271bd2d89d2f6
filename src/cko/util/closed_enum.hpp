// One closed enum per concept, spelled once: CKO_CLOSED_ENUM makes the enum, its JSON names and
// both lookups.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

// CKO_CLOSED_ENUM(Type, LIST, name_fn, from_name_fn), with LIST(X) expanding X(enumerator) for
// each enumerator: the enumerator's name is its JSON spelling. Defines `enum class Type`,
// `std::string_view name_fn(Type)` and `std::optional<Type> from_name_fn(std::string_view)`.
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
    }
