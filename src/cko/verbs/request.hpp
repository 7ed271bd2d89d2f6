// A verb's request: its parameters (one definition yields the JSON Schema and the CLI options) and
// typed access.
#pragma once

#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cko::verbs {

enum class ParamType { string, integer, number, boolean, string_list };

// One key of a request. The key is snake_case (`case_file`); the CLI option is `--case-file`, or
// the bare key for a positional argument.
struct Param {
    std::string key;
    ParamType type = ParamType::string;
    std::string help;
    Json default_value;  // null: none (the accessor then yields "", 0, false or [])
    bool required = false;
    bool positional = false;
    std::optional<double> minimum{};
    std::optional<double> maximum{};
    bool exclusive_minimum = false;  // minimum itself is not allowed (a positive number)
    bool root_default = false;       // absent: $CKO_ROOT, else ./artifacts (root_param)
};

// Shorthands for the table, so that each verb's request reads as a list.
Param string_param(std::string key, std::string help, Json default_value = Json());
Param integer_param(std::string key, std::string help, Json default_value = Json());
Param number_param(std::string key, std::string help, Json default_value = Json());
Param flag_param(std::string key, std::string help);
Param list_param(std::string key, std::string help);
Param positional(Param p);
Param required(Param p);
// The artifact root every store verb takes: default $CKO_ROOT, else ./artifacts (read when a
// request is normalized, not when the table is built).
Param root_param();
// --detach for the verbs that may run in the background.
Param detach_param();
// `override_failure` (confirm, audit, profile collect): the reason to measure or profile a
// candidate that an earlier screen, confirm or audit failed, recorded in the invocation.
Param override_failure_param();
// `override_falsified` (screen, confirm, profile collect): the reason to measure or profile an
// experiment recorded as falsified (`cko experiment falsify`), recorded in the invocation.
Param override_falsified_param();
// `stage_limit` (screen, confirm, audit): the farthest stage this call may run (screen, confirm or
// audit), for an agent's session; a verb past it refuses with not_authorized.
Param stage_limit_param();

[[nodiscard]] std::string cli_option_name(const std::string& key);  // case_file -> --case-file

struct RequestDef {
    std::vector<Param> params;

    [[nodiscard]] const Param* find(const std::string& key) const;
    // {"type":"object","properties":{...},"required":[...],"additionalProperties":false}
    [[nodiscard]] Json schema() const;
    // Checks a request object against the definition (unknown keys, types, ranges, required) and
    // fills the defaults; every problem is an invalid_request error naming the key and the fix.
    // Keys may be written with '-' for '_' (the CLI's spelling).
    [[nodiscard]] Json normalize(const Json& request) const;
    // The keys a request gives, checked one by one as normalize checks them (unknown keys, types,
    // ranges) without asking for required keys or filling defaults: for a CLI --request file, whose
    // other keys may come from the command line. Returns the given keys, snake_case, nulls dropped.
    [[nodiscard]] Json check_given(const Json& request) const;
};

// A normalized request with typed access; a key that is absent yields its type's empty value.
// Built with its definition, it refuses to read a key the definition does not have (error
// [internal], naming the key): a misspelt key in a verb fails its first test instead of reading "".
class Request {
public:
    Request() = default;
    explicit Request(Json normalized) : json_(std::move(normalized)) {}
    Request(const RequestDef& def, Json normalized) : json_(std::move(normalized)), def_(&def) {}

    [[nodiscard]] bool has(const std::string& key) const;
    [[nodiscard]] std::string text(const std::string& key) const;
    [[nodiscard]] std::int64_t integer(const std::string& key) const;
    [[nodiscard]] std::uint64_t unsigned_integer(const std::string& key) const;
    [[nodiscard]] double number(const std::string& key) const;
    [[nodiscard]] bool flag(const std::string& key) const;
    [[nodiscard]] std::vector<std::string> list(const std::string& key) const;
    [[nodiscard]] const Json& json() const noexcept { return json_; }

private:
    [[nodiscard]] const Json* find(const std::string& key) const;

    Json json_ = Json::object();
    const RequestDef* def_ = nullptr;
};

}  // namespace cko::verbs
