// The one error type of cko: a closed ErrorCode, a message a person can act on, structured details.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cko {

// Process exit status classes of DESIGN.md §2.
enum class ExitClass : int {
    success = 0,
    negative_verdict = 1,
    usage = 2,          // bad flags, bad input files, validation failures
    environment = 3,    // missing tool, I/O failure, child process failure
    interrupted = 4,    // Ctrl-C, SIGTERM, deadline
    still_running = 5,  // `cko wait --timeout` expired: the operation itself goes on
};

// X(enumerator, exit class). The enumerator name is also the JSON spelling: one table, one
// spelling.
#define CKO_ERROR_CODES(X)                  \
    X(usage, usage)                         \
    X(invalid_argument, usage)              \
    X(invalid_request, usage)               \
    X(json_parse, usage)                    \
    X(json_duplicate_key, usage)            \
    X(json_non_finite, usage)               \
    X(json_too_deep, usage)                 \
    X(json_too_large, usage)                \
    X(json_invalid_utf8, usage)             \
    X(unsafe_path, usage)                   \
    X(symlink_refused, usage)               \
    X(already_exists, usage)                \
    X(not_found, usage)                     \
    X(file_too_large, usage)                \
    X(empty_input, usage)                   \
    X(binary_input, usage)                  \
    X(malformed_input, usage)               \
    X(truncated_input, usage)               \
    X(duplicate_header, usage)              \
    X(field_too_long, usage)                \
    X(unsupported_format, usage)            \
    X(missing_field, usage)                 \
    X(unknown_unit, usage)                  \
    X(not_a_store, usage)                   \
    X(invalid_record, usage)                \
    X(tampered_record, usage)               \
    X(special_file, usage)                  \
    X(cas_conflict, usage)                  \
    X(invalid_spec, usage)                  \
    X(scope_violation, usage)               \
    X(already_confirmed, usage)             \
    X(candidate_failed, usage)              \
    X(falsified, usage)                     \
    X(not_authorized, usage)                \
    X(not_eligible, usage)                  \
    X(budget_exhausted, usage)              \
    X(deadline_passed, usage)               \
    X(tool_version_unknown, usage)          \
    X(environment_mismatch, environment)    \
    X(driver_changed, environment)          \
    X(store_locked, environment)            \
    X(missing_result, environment)          \
    X(invalid_driver_result, environment)   \
    X(subject_mismatch, environment)        \
    X(role_mismatch, environment)           \
    X(sample_count_mismatch, environment)   \
    X(metric_name_mismatch, environment)    \
    X(unit_mismatch, environment)           \
    X(constraint_set_mismatch, environment) \
    X(non_finite_sample, environment)       \
    X(non_positive_sample, environment)     \
    X(undeclared_output, environment)       \
    X(unsafe_output, environment)           \
    X(driver_failed, environment)           \
    X(resource_wait_timeout, environment)   \
    X(io_error, environment)                \
    X(spawn_failed, environment)            \
    X(tool_failed, environment)             \
    X(self_check_failed, environment)       \
    X(timed_out, interrupted)               \
    X(interrupted, interrupted)             \
    X(still_running, still_running)         \
    X(internal, environment)

enum class ErrorCode {
#define CKO_X(name, cls) name,
    CKO_ERROR_CODES(CKO_X)
#undef CKO_X
};

[[nodiscard]] std::string_view error_code_name(ErrorCode code) noexcept;
[[nodiscard]] std::optional<ErrorCode> error_code_from_name(std::string_view name) noexcept;
[[nodiscard]] ExitClass error_exit_class(ErrorCode code) noexcept;

class Error : public std::runtime_error {
public:
    Error(ErrorCode code, std::string message, nlohmann::json details = nlohmann::json::object());

    [[nodiscard]] ErrorCode code() const noexcept { return code_; }
    [[nodiscard]] const nlohmann::json& details() const noexcept { return details_; }
    [[nodiscard]] int exit_code() const noexcept {
        return static_cast<int>(error_exit_class(code_));
    }

    // {"error":{"code":..,"message":..,"details":{..}}}
    [[nodiscard]] nlohmann::json to_json() const;

private:
    ErrorCode code_;
    nlohmann::json details_;
};

}  // namespace cko
