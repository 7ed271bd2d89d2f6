// The Target's invocations read once for one operation (see ledger.hpp).
#include "cko/eval/ledger.hpp"

#include "cko/run/invocation.hpp"
#include "cko/store/catalogue.hpp"

#include <cstdint>
#include <functional>

namespace cko::eval {
namespace {

// The succeeded entry satisfying `wanted` that started last (the first of equals, in id order).
const InvocationEntry* latest_succeeded(const std::vector<InvocationEntry>& entries,
                                        const std::function<bool(const InvocationEntry&)>& wanted) {
    const InvocationEntry* latest = nullptr;
    for (const auto& e : entries) {
        if (e.succeeded() && wanted(e) &&
            (latest == nullptr || e.result->started_unix_ns > latest->result->started_unix_ns)) {
            latest = &e;
        }
    }
    return latest;
}

}  // namespace

InvocationLedger InvocationLedger::read(const store::Store& store, const InvocationEntry* known) {
    InvocationLedger ledger;
    for (const auto& id : run::list_invocations(store)) {
        if (known != nullptr && known->id() == id) {
            ledger.entries_.push_back(*known);
            continue;
        }
        InvocationEntry e{store::read_invocation_record(store, id), std::nullopt};
        if (store.exists(store::layout::invocation_result(id))) {
            e.result = store::read_invocation_result_record(store, id);
        }
        ledger.entries_.push_back(std::move(e));
    }
    return ledger;
}

InvocationLedger InvocationLedger::of(std::vector<InvocationEntry> entries) {
    InvocationLedger ledger;
    ledger.entries_ = std::move(entries);
    return ledger;
}

std::vector<const InvocationEntry*> InvocationLedger::confirms_of(
    std::string_view experiment_id) const {
    std::vector<const InvocationEntry*> found;
    for (const auto& e : entries_) {
        if (e.kind() == "confirm" &&
            e.request.request.value("experiment_id", "") == experiment_id) {
            found.push_back(&e);
        }
    }
    return found;
}

const InvocationEntry* InvocationLedger::confirmed_by(std::string_view experiment_id) const {
    const InvocationEntry* last = nullptr;
    for (const auto& e : entries_) {
        if (e.result && e.result->kind == "confirm" &&
            e.result->outputs.value("experiment_id", "") == experiment_id) {
            last = &e;
        }
    }
    return last;
}

InvocationLedger::Spent InvocationLedger::spent() const {
    Spent s;
    for (const auto& e : entries_) {
        if (e.result) {
            s.wall_s += e.result->cost.wall_s.value_or(0.0);
            s.gpu_s += e.result->cost.gpu_s.value_or(0.0);
        }
    }
    return s;
}

const InvocationEntry* InvocationLedger::latest_baseline() const {
    return latest_succeeded(entries_,
                            [](const InvocationEntry& e) { return e.result->kind == "baseline"; });
}

const InvocationEntry* InvocationLedger::latest_instrument_check() const {
    return latest_succeeded(entries_, [](const InvocationEntry& e) {
        return e.result->outputs.contains("instrument_check");
    });
}

}  // namespace cko::eval
