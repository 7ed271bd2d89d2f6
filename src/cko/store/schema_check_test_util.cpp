// A small JSON-schema check for the record tests (records_test.cpp): type, const, enum, pattern,
// required, additionalProperties false, items, local and cross-file $ref. The combinators (oneOf,
// allOf, if/then) are left to tests/schemas/validate_store.py, which cli_schemas runs.
#include "schema_check_test_util.hpp"

#include "cko/util/files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <utility>

namespace cko::store::schema_check {
namespace {
namespace fs = std::filesystem;

Json schema_file(const std::string& name) {
    return read_json_file(fs::path("schemas") / (name + ".json"));
}

// Resolves "#/$defs/x" in `root` or "https://cko.dev/schemas/<file>#/$defs/x" in that file.
std::pair<Json, Json> resolve(const Json& root, const std::string& ref) {
    Json doc = root;
    std::string pointer = ref;
    if (!ref.starts_with("#")) {
        const std::string prefix = "https://cko.dev/schemas/";
        const auto hash = ref.find('#');
        EXPECT_TRUE(ref.starts_with(prefix)) << ref;
        doc = read_json_file(fs::path("schemas") / ref.substr(prefix.size(), hash - prefix.size()));
        pointer = ref.substr(hash);
    }
    return {doc, doc.at(Json::json_pointer(pointer.substr(1)))};
}

bool of_type(const Json& v, const std::string& t) {
    return (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
           (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
           (t == "null" && v.is_null()) || (t == "number" && v.is_number()) ||
           (t == "integer" && v.is_number_integer());
}

// Paths whose documents a record keeps opaque (a Target's spec and environment identity: their own
// writers and cli_schemas check them), not descended into.
const std::vector<std::string> kOpaque = {"$.spec", "$.environment"};

void validate(const Json& root, const Json& schema, const Json& v, const std::string& at,
              std::vector<std::string>& problems) {
    if (std::find(kOpaque.begin(), kOpaque.end(), at) != kOpaque.end()) {
        return;
    }
    if (schema.contains("$ref")) {
        const auto [doc, target] = resolve(root, schema["$ref"].get<std::string>());
        validate(doc, target, v, at, problems);
    }
    if (schema.contains("type")) {
        const Json types =
            schema["type"].is_array() ? schema["type"] : Json::array({schema["type"]});
        bool any = false;
        for (const auto& t : types) {
            any = any || of_type(v, t.get<std::string>());
        }
        if (!any) {
            problems.push_back(at + ": not of type " + schema["type"].dump());
            return;
        }
    }
    if (schema.contains("const") && v != schema["const"]) {
        problems.push_back(at + ": not " + schema["const"].dump());
    }
    if (schema.contains("enum")) {
        bool listed = false;
        for (const auto& e : schema["enum"]) {
            listed = listed || e == v;
        }
        if (!listed) {
            problems.push_back(at + ": " + v.dump() + " not in " + schema["enum"].dump());
        }
    }
    if (schema.contains("pattern") && v.is_string() &&
        !std::regex_search(v.get<std::string>(),
                           std::regex(schema["pattern"].get<std::string>()))) {
        problems.push_back(at + ": " + v.dump() + " does not match " + schema["pattern"].dump());
    }
    if (schema.contains("minLength") && v.is_string() &&
        v.get<std::string>().size() < schema["minLength"].get<std::size_t>()) {
        problems.push_back(at + ": shorter than minLength");
    }
    if (v.is_object()) {
        for (const auto& r : schema.value("required", Json::array())) {
            if (!v.contains(r.get<std::string>())) {
                problems.push_back(at + ": required member " + r.get<std::string>() + " missing");
            }
        }
        const Json properties = schema.value("properties", Json::object());
        for (const auto& [key, value] : v.items()) {
            if (properties.contains(key)) {
                validate(root, properties[key], value, at + "." + key, problems);
            } else if (schema.value("additionalProperties", Json(true)) == Json(false)) {
                problems.push_back(at + ": member " + key + " is not allowed");
            }
        }
    }
    if (v.is_array() && schema.contains("items")) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            validate(root, schema["items"], v[i], at + "[" + std::to_string(i) + "]", problems);
        }
    }
}

}  // namespace

std::vector<std::string> problems_against(const std::string& schema_name, const Json& doc) {
    const Json schema = schema_file(schema_name);
    std::vector<std::string> problems;
    validate(schema, schema, doc, "$", problems);
    return problems;
}

}  // namespace cko::store::schema_check
