// Wall-clock time as records store it: integer seconds or nanoseconds since the Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace cko {

[[nodiscard]] inline std::int64_t unix_seconds_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

[[nodiscard]] inline std::int64_t unix_nanoseconds_now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace cko
