// The closed error-code table and the Error type.
#include "cko/util/error.hpp"

#include "cko/util/utf8.hpp"

#include <array>

namespace cko {
namespace {

struct CodeInfo {
    std::string_view name;
    ExitClass exit_class;
};

constexpr std::array kCodes = {
#define CKO_X(name, cls) CodeInfo{#name, ExitClass::cls},
    CKO_ERROR_CODES(CKO_X)
#undef CKO_X
};

}  // namespace

std::string_view error_code_name(ErrorCode code) noexcept {
    return kCodes[static_cast<std::size_t>(code)].name;
}

std::optional<ErrorCode> error_code_from_name(std::string_view name) noexcept {
    for (std::size_t i = 0; i < kCodes.size(); ++i) {
        if (kCodes[i].name == name) {
            return static_cast<ErrorCode>(i);
        }
    }
    return std::nullopt;
}

ExitClass error_exit_class(ErrorCode code) noexcept {
    return kCodes[static_cast<std::size_t>(code)].exit_class;
}

Error::Error(ErrorCode code, std::string message, nlohmann::json details)
    // Messages and details echo outside bytes (paths, request values, driver stderr): made valid
    // UTF-8 here, once, so that every error can be printed and stored.
    : std::runtime_error(utf8_or_replaced(message)),
      code_(code),
      details_(json_with_valid_utf8(details)) {
    if (!details_.is_object()) {
        details_ = nlohmann::json{{"value", std::move(details_)}};
    }
}

nlohmann::json Error::to_json() const {
    return nlohmann::json{{"error",
                           {{"code", std::string(error_code_name(code_))},
                            {"message", what()},
                            {"details", details_}}}};
}

}  // namespace cko
