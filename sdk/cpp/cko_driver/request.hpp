// Reads and validates a cko/driver-request-v1 document (PROTOCOL.md) into a plain struct.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "json.hpp"

namespace cko_driver {

inline constexpr const char* kRequestFormat = "cko/driver-request-v1";

// The request file is missing or does not follow cko/driver-request-v1.
struct RequestError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Case {
    std::string id;
    std::string path;
};

struct Subject {
    std::string role;
    std::string label;
    std::string path;
    // The digest of the snapshot at `path` (request.subjects[].digest; empty from a cko that names
    // none). The result reports it as this subject's loaded_digest, from the Subject that was
    // prepared and timed, so cko can refuse samples reported under the wrong role (role_mismatch).
    std::string digest;
};

struct Metric {
    std::string name;
    std::string unit;
};

struct Request {
    std::string mode;  // smoke | single | paired
    Case case_;
    std::vector<Subject> subjects;
    std::vector<std::string> order;  // execution order of roles; for one subject just {role}
    int samples = 0;
    std::uint64_t seed = 0;
    Metric primary;
    std::vector<Metric> constraints;
    std::vector<std::string> correctness_metrics;
    std::string output_dir;
    std::string result_path;
    bool has_deadline = false;
    double deadline_unix_s = 0.0;

    const Subject& subject(const std::string& role) const {
        for (const auto& s : subjects)
            if (s.role == role)
                return s;
        throw std::out_of_range("no subject with role " + role);
    }
};

namespace detail {

inline const json::Value& field(const json::Value& obj, const std::string& key,
                                json::Value::Kind kind, const std::string& where) {
    if (obj.kind != json::Value::Kind::object)
        throw RequestError(where + " must be an object");
    const json::Value* v = obj.find(key);
    if (!v)
        throw RequestError(where + "." + key + " is missing");
    if (v->kind != kind)
        throw RequestError(where + "." + key + " has the wrong type");
    return *v;
}

inline std::string nonempty(const json::Value& obj, const std::string& key,
                            const std::string& where) {
    const std::string& s = field(obj, key, json::Value::Kind::string, where).string;
    if (s.empty())
        throw RequestError(where + "." + key + " must not be empty");
    return s;
}

inline Metric metric(const json::Value& obj, const std::string& where) {
    return Metric{nonempty(obj, "name", where), nonempty(obj, "unit", where)};
}

inline std::string normalize_dir(std::string p) {
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    return p;
}

}  // namespace detail

// Validates a decoded request; throws RequestError naming the first offending field.
inline Request parse_request(const json::Value& doc) {
    using K = json::Value::Kind;
    using detail::field;
    using detail::nonempty;
    const std::string w = "request";
    Request r;
    const std::string version = field(doc, "format_version", K::string, w).string;
    if (version != kRequestFormat)
        throw RequestError("request.format_version is \"" + version + "\", this SDK reads " +
                           kRequestFormat);
    r.mode = field(doc, "mode", K::string, w).string;
    if (r.mode != "smoke" && r.mode != "single" && r.mode != "paired")
        throw RequestError("request.mode is \"" + r.mode + "\"; expected smoke, single or paired");
    const json::Value& c = field(doc, "case", K::object, w);
    r.case_ = Case{nonempty(c, "id", "request.case"), nonempty(c, "path", "request.case")};

    const json::Value& subjects = field(doc, "subjects", K::array, w);
    std::vector<std::string> roles;
    for (size_t i = 0; i < subjects.array.size(); ++i) {
        const std::string where = "request.subjects[" + std::to_string(i) + "]";
        const json::Value& s = subjects.array[i];
        const json::Value* digest = s.kind == K::object ? s.find("digest") : nullptr;
        r.subjects.push_back(Subject{
            nonempty(s, "role", where), field(s, "label", K::string, where).string,
            nonempty(s, "path", where),
            digest && digest->kind != K::null ? nonempty(s, "digest", where) : std::string()});
        if (std::find(roles.begin(), roles.end(), r.subjects.back().role) != roles.end())
            throw RequestError("request.subjects has a duplicate role " + r.subjects.back().role);
        roles.push_back(r.subjects.back().role);
    }
    const size_t expected = r.mode == "paired" ? 2 : 1;
    if (r.subjects.size() != expected)
        throw RequestError("request.mode \"" + r.mode + "\" needs " + std::to_string(expected) +
                           " subject(s), got " + std::to_string(r.subjects.size()));

    // Outside paired mode the order may be absent, null or empty: there is only one subject.
    const json::Value* order = doc.find("order");
    const bool order_given =
        order && order->kind != K::null && !(order->kind == K::array && order->array.empty());
    if (r.mode == "paired" || order_given) {
        for (const auto& o : field(doc, "order", K::array, w).array) {
            if (o.kind != K::string)
                throw RequestError("request.order must list role strings");
            r.order.push_back(o.string);
        }
        std::vector<std::string> a = r.order, b = roles;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        if (a != b)
            throw RequestError("request.order must list each subject role exactly once");
    } else {
        r.order = roles;
    }

    const json::Value& samples = field(doc, "samples", K::number, w);
    if (!samples.is_integer() || samples.number < 1 || samples.number > 1e6)
        throw RequestError("request.samples must be an integer >= 1");
    r.samples = static_cast<int>(samples.number);
    const json::Value& seed = field(doc, "seed", K::number, w);
    if (!seed.is_integer() || seed.number_text[0] == '-')
        throw RequestError("request.seed must be an integer >= 0");
    r.seed = std::strtoull(seed.number_text.c_str(), nullptr, 10);

    const json::Value& objective = field(doc, "objective", K::object, w);
    r.primary = detail::metric(field(objective, "primary", K::object, "request.objective"),
                               "request.objective.primary");
    const json::Value& constraints = field(objective, "constraints", K::array, "request.objective");
    std::vector<std::string> names{r.primary.name};
    for (size_t i = 0; i < constraints.array.size(); ++i) {
        r.constraints.push_back(detail::metric(
            constraints.array[i], "request.objective.constraints[" + std::to_string(i) + "]"));
        if (std::find(names.begin(), names.end(), r.constraints.back().name) != names.end())
            throw RequestError("request.objective repeats the metric name " +
                               r.constraints.back().name);
        names.push_back(r.constraints.back().name);
    }
    const json::Value& correctness = field(doc, "correctness", K::object, w);
    for (const auto& m : field(correctness, "metrics", K::array, "request.correctness").array) {
        if (m.kind != K::string || m.string.empty())
            throw RequestError("request.correctness.metrics must be non-empty strings");
        r.correctness_metrics.push_back(m.string);
    }

    r.output_dir = nonempty(doc, "output_dir", w);
    r.result_path = nonempty(doc, "result_path", w);
    if (r.output_dir[0] != '/' || r.result_path[0] != '/')
        throw RequestError("request.output_dir and request.result_path must be absolute paths");
    const std::string dir = detail::normalize_dir(r.output_dir);
    if (r.result_path.size() <= dir.size() + 1 ||
        r.result_path.compare(0, dir.size() + 1, dir + "/") != 0 ||
        r.result_path.find('/', dir.size() + 1) != std::string::npos)
        throw RequestError("request.result_path must be a file directly inside request.output_dir");

    const json::Value* deadline = doc.find("deadline_unix_s");
    if (deadline && deadline->kind != K::null) {
        if (deadline->kind != K::number)
            throw RequestError("request.deadline_unix_s must be a number");
        r.has_deadline = true;
        r.deadline_unix_s = deadline->number;
    }
    return r;
}

// Reads and validates the request file at `path`.
inline Request load_request(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw RequestError("cannot read request file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return parse_request(json::parse(text.str()));
    } catch (const json::Error& e) {
        throw RequestError("request file " + path + " is not valid JSON: " + e.what());
    }
}

}  // namespace cko_driver
