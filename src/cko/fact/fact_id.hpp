// The closed vocabulary of fact ids that knowledge triggers may name, with their producer and unit.
#pragma once

#include "cko/util/closed_enum.hpp"

#include <span>
#include <string>
#include <string_view>

namespace cko::fact {

// Which parser emits a family of facts. The prefix of every id names it ("ncu.", "sass." ...).
#define CKO_FACT_PRODUCERS(X) X(ncu) X(sass) X(ptxas) X(triton) X(map)
CKO_CLOSED_ENUM(Producer, CKO_FACT_PRODUCERS, producer_name, producer_from_name)
#undef CKO_FACT_PRODUCERS

// One row of the vocabulary. `pattern` is an exact id, or holds one '*' that stands for one or
// more characters of [A-Za-z0-9_] (a stall reason, an opcode, a rule name): "ncu.stall.*_pct".
struct FactIdSpec {
    std::string_view pattern;
    Producer producer;
    std::string_view unit;  // a base unit spelling of profile/fact.hpp ("%", "byte", "count" ...)
    std::string_view meaning;
};

[[nodiscard]] std::span<const FactIdSpec> fact_vocabulary() noexcept;

// The row an id belongs to, or nullptr when the id is not in the vocabulary.
[[nodiscard]] const FactIdSpec* lookup_fact_id(std::string_view id) noexcept;

// Whether `id` matches `pattern` (exact, or with the one wildcard of FactIdSpec).
[[nodiscard]] bool fact_id_matches(std::string_view pattern, std::string_view id) noexcept;

// The id a parser's own fact gets in the vocabulary: NCU report facts carry bare ids
// ("duration", "stall.wait_pct"), so the producer's prefix is added; others already have it.
[[nodiscard]] std::string qualified_fact_id(Producer producer, std::string_view id);

}  // namespace cko::fact
