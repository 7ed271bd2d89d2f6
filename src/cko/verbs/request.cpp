// Request definitions: JSON Schema, CLI spelling, validation with defaults, typed access.
#include "cko/verbs/request.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace cko::verbs {
namespace {

std::string snake(std::string key) {
    for (char& c : key) {
        if (c == '-') {
            c = '_';
        }
    }
    return key;
}

[[noreturn]] void bad(const std::string& key, const std::string& message) {
    throw Error(ErrorCode::invalid_request, fmt::format("request key \"{}\": {}", key, message),
                Json{{"key", key}});
}

Json checked_value(const Param& p, const Json& value) {
    const auto check_range = [&](double v) {
        if (p.minimum && (v < *p.minimum || (p.exclusive_minimum && v == *p.minimum))) {
            bad(p.key, fmt::format("{} is below the minimum {}{}", v,
                                   p.exclusive_minimum ? "(exclusive) " : "", *p.minimum));
        }
        if (p.maximum && v > *p.maximum) {
            bad(p.key, fmt::format("{} is above the maximum {}", v, *p.maximum));
        }
    };
    switch (p.type) {
    case ParamType::string:
        if (!value.is_string()) {
            bad(p.key, fmt::format("expected a string, got {}", value.type_name()));
        }
        if (value.get_ref<const std::string&>().find('\0') != std::string::npos) {
            bad(p.key, "the string holds a NUL character (\\u0000); remove it");
        }
        return value;
    case ParamType::integer:
        if (!value.is_number_integer()) {
            bad(p.key, fmt::format("expected an integer, got {}", value.dump()));
        }
        check_range(value.get<double>());
        return value;
    case ParamType::number:
        if (!value.is_number()) {
            bad(p.key, fmt::format("expected a number, got {}", value.dump()));
        }
        check_range(value.get<double>());
        return value;
    case ParamType::boolean:
        if (!value.is_boolean()) {
            bad(p.key, fmt::format("expected true or false, got {}", value.dump()));
        }
        return value;
    case ParamType::string_list: {
        const Json items = value.is_array() ? value : Json::array({value});
        for (const auto& item : items) {
            if (!item.is_string()) {
                bad(p.key, fmt::format("expected a list of strings, got an item {}", item.dump()));
            }
        }
        return items;
    }
    }
    return value;
}

}  // namespace

Param string_param(std::string key, std::string help, Json default_value) {
    return Param{std::move(key), ParamType::string, std::move(help), std::move(default_value)};
}
Param integer_param(std::string key, std::string help, Json default_value) {
    return Param{std::move(key), ParamType::integer, std::move(help), std::move(default_value)};
}
Param number_param(std::string key, std::string help, Json default_value) {
    return Param{std::move(key), ParamType::number, std::move(help), std::move(default_value)};
}
Param flag_param(std::string key, std::string help) {
    return Param{std::move(key), ParamType::boolean, std::move(help), Json()};
}
Param list_param(std::string key, std::string help) {
    return Param{std::move(key), ParamType::string_list, std::move(help), Json()};
}
Param positional(Param p) {
    p.positional = true;
    return p;
}
Param required(Param p) {
    p.required = true;
    return p;
}
Param root_param() {
    Param p = string_param("root", "Artifact root (default $CKO_ROOT, else ./artifacts)");
    p.root_default = true;
    return p;
}
Param detach_param() {
    return flag_param("detach", "Run in the background; print the invocation id");
}
Param override_failure_param() {
    return string_param("override_failure",
                        "Run it although the candidate failed an earlier screen, confirm or audit: "
                        "the reason, recorded in the invocation");
}
Param override_falsified_param() {
    return string_param("override_falsified",
                        "Run it although the experiment was recorded as falsified: the reason, "
                        "recorded in the invocation");
}
Param stage_limit_param() {
    return string_param("stage_limit",
                        "The farthest stage this session may run: screen, confirm or audit "
                        "(tightens the Target's [limits] farthest_stage)");
}

std::string cli_option_name(const std::string& key) {
    std::string name = "--" + key;
    for (char& c : name) {
        if (c == '_') {
            c = '-';
        }
    }
    return name;
}

const Param* RequestDef::find(const std::string& key) const {
    const std::string k = snake(key);
    for (const Param& p : params) {
        if (p.key == k) {
            return &p;
        }
    }
    return nullptr;
}

Json RequestDef::schema() const {
    Json properties = Json::object();
    Json required_keys = Json::array();
    for (const Param& p : params) {
        Json s;
        switch (p.type) {
        case ParamType::string:
            s["type"] = "string";
            break;
        case ParamType::integer:
            s["type"] = "integer";
            break;
        case ParamType::number:
            s["type"] = "number";
            break;
        case ParamType::boolean:
            s["type"] = "boolean";
            break;
        case ParamType::string_list:
            s["type"] = "array";
            s["items"] = Json{{"type", "string"}};
            break;
        }
        s["description"] = p.help;
        if (!p.default_value.is_null()) {
            s["default"] = p.default_value;
        }
        if (p.minimum) {
            s[p.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *p.minimum;
        }
        if (p.maximum) {
            s["maximum"] = *p.maximum;
        }
        properties[p.key] = std::move(s);
        if (p.required) {
            required_keys.push_back(p.key);
        }
    }
    Json out{
        {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
    if (!required_keys.empty()) {
        out["required"] = std::move(required_keys);
    }
    return out;
}

Json RequestDef::check_given(const Json& request) const {
    const Json given = request.is_null() ? Json::object() : request;
    if (!given.is_object()) {
        throw Error(ErrorCode::invalid_request,
                    "a request must be one JSON object of the verb's keys");
    }
    Json out = Json::object();
    for (const auto& [key, value] : given.items()) {
        const Param* p = find(key);
        if (p == nullptr) {
            std::vector<std::string> known;
            for (const Param& q : params) {
                known.push_back(q.key);
            }
            throw Error(ErrorCode::invalid_request,
                        fmt::format("request key \"{}\" is not a key of this verb; known keys: {}",
                                    key, fmt::join(known, ", ")),
                        Json{{"key", key}, {"known", known}});
        }
        if (value.is_null()) {
            continue;  // null means "not given", as JSON-RPC clients often send it
        }
        out[p->key] = checked_value(*p, value);
    }
    return out;
}

Json RequestDef::normalize(const Json& request) const {
    Json out = check_given(request);
    for (const Param& p : params) {
        if (out.contains(p.key)) {
            continue;
        }
        if (p.required) {
            throw Error(ErrorCode::invalid_request,
                        fmt::format("request key \"{}\" is required: {}", p.key, p.help),
                        Json{{"key", p.key}});
        }
        if (p.root_default) {
            const char* env = std::getenv("CKO_ROOT");
            out["root"] = env != nullptr && *env != '\0' ? env : "artifacts";
        } else if (!p.default_value.is_null()) {
            out[p.key] = p.default_value;
        }
    }
    return out;
}

const Json* Request::find(const std::string& key) const {
    if (def_ != nullptr && def_->find(key) == nullptr) {
        throw Error(ErrorCode::internal,
                    fmt::format("the verb reads request key \"{}\", which its definition does not "
                                "have (a misspelt key in the verb's code)",
                                key),
                    Json{{"key", key}});
    }
    const auto it = json_.find(key);
    return it == json_.end() ? nullptr : &*it;
}

bool Request::has(const std::string& key) const {
    return find(key) != nullptr;
}

std::string Request::text(const std::string& key) const {
    const Json* v = find(key);
    return v != nullptr ? v->get<std::string>() : std::string();
}

std::int64_t Request::integer(const std::string& key) const {
    const Json* v = find(key);
    return v != nullptr ? v->get<std::int64_t>() : 0;
}

std::uint64_t Request::unsigned_integer(const std::string& key) const {
    const Json* v = find(key);
    if (v == nullptr) {
        return 0;
    }
    if (v->is_number_unsigned()) {
        return v->get<std::uint64_t>();
    }
    const std::int64_t n = v->get<std::int64_t>();
    if (n < 0) {
        bad(key, "expected a non-negative integer");
    }
    return static_cast<std::uint64_t>(n);
}

double Request::number(const std::string& key) const {
    const Json* v = find(key);
    return v != nullptr ? v->get<double>() : 0.0;
}

bool Request::flag(const std::string& key) const {
    const Json* v = find(key);
    return v != nullptr && v->get<bool>();
}

std::vector<std::string> Request::list(const std::string& key) const {
    const Json* v = find(key);
    return v != nullptr ? v->get<std::vector<std::string>>() : std::vector<std::string>{};
}

}  // namespace cko::verbs
