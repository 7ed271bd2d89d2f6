// The card files of knowledge/ compiled into the binary, so an installed or static cko has them.
#pragma once

#include <span>
#include <string_view>

namespace cko::knowledge {

struct EmbeddedCardFile {
    std::string_view name;  // "knowledge/tensor-cores.json"
    std::string_view text;
};

// Generated at configure time from knowledge/*.json (embedded_cards.cpp.in).
[[nodiscard]] std::span<const EmbeddedCardFile> embedded_card_files() noexcept;

}  // namespace cko::knowledge
