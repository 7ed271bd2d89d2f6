// The termination record: why the optimization ended (`cko stop`), written once, cited by the
// handoff.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <optional>
#include <string>

namespace cko::report {

inline constexpr std::string_view kStopRecord = store::layout::kStop;

// Writes stop.json (cko/stop-v1, create-once): the reason, when, the Target, the champion at that
// moment and the cost spent so far. A second stop is refused (already_exists, naming the first).
// An empty reason is refused (invalid_request): the reason is the point of the record.
Json record_stop(const store::Store& store, const std::string& reason);

// The stop record, or nullopt while the optimization has not been stopped.
[[nodiscard]] std::optional<Json> read_stop(const store::Store& store);

}  // namespace cko::report
