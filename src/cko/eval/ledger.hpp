// The Target's invocations read once for one operation: the questions a comparison, a baseline, a
// profile collection or the history asks of them, answered without reading the store again.
#pragma once

#include "cko/store/records.hpp"
#include "cko/store/store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::eval {

// One invocation as it stood when the ledger was read.
struct InvocationEntry {
    store::InvocationRecord request;
    // None while it runs (or while its dead owner has not been declared lost).
    std::optional<store::InvocationResultRecord> result;

    [[nodiscard]] const std::string& id() const noexcept { return request.id; }
    [[nodiscard]] const std::string& kind() const noexcept { return request.kind; }
    [[nodiscard]] bool succeeded() const { return result && result->succeeded(); }
};

// Not the store's hash-chained ledger of digests (store/ledger_index): a read-only view of every
// invocation's request and result, taken with one scan of invocations/ (run::list_invocations).
// An operation reads one when it starts (a confirm: under its per-experiment lock, so that it sees
// every earlier confirm) and passes it to each rule it checks; an invocation made after that is
// not in it.
class InvocationLedger {
public:
    // `known`: an invocation the caller holds already (one it has just finished), taken as given
    // instead of read again.
    [[nodiscard]] static InvocationLedger read(const store::Store& store,
                                               const InvocationEntry* known = nullptr);
    // A ledger of the given entries (for rules tested without a store).
    [[nodiscard]] static InvocationLedger of(std::vector<InvocationEntry> entries);

    // Every invocation, in id order (the order of run::list_invocations).
    [[nodiscard]] const std::vector<InvocationEntry>& entries() const noexcept { return entries_; }

    // The confirms whose request names `experiment_id`, running ones included, in id order.
    [[nodiscard]] std::vector<const InvocationEntry*> confirms_of(
        std::string_view experiment_id) const;

    // The last confirm (in id order) whose result's outputs name `experiment_id`; none if none
    // finished.
    [[nodiscard]] const InvocationEntry* confirmed_by(std::string_view experiment_id) const;

    // What the finished invocations spent: the sum of their cost (a `lost` one counts nothing).
    struct Spent {
        double wall_s = 0;
        double gpu_s = 0;
    };
    [[nodiscard]] Spent spent() const;

    // The succeeded baseline that started last; none before the first.
    [[nodiscard]] const InvocationEntry* latest_baseline() const;

    // The succeeded invocation that started last of those whose outputs carry an A/A
    // `instrument_check` (a baseline, or a comparison of a control experiment); none if none.
    [[nodiscard]] const InvocationEntry* latest_instrument_check() const;

private:
    std::vector<InvocationEntry> entries_;
};

}  // namespace cko::eval
