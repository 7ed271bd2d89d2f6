// Driver protocol v1: request JSON and strict result validation with one error code per failure.
#include "cko/driver/protocol.hpp"
#include "cko/store/catalogue.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <set>

namespace cko::driver {
namespace {

[[noreturn]] void fail(ErrorCode code, const std::string& path, const std::string& what) {
    throw Error(code, fmt::format("driver result {}: {}", path, what), Json{{"path", path}});
}

// Rejects keys outside `allowed`: the result is a closed object at every level.
void require_keys(const Json& obj, const std::string& path,
                  std::initializer_list<std::string_view> required,
                  std::initializer_list<std::string_view> optional = {}) {
    if (!obj.is_object()) {
        fail(ErrorCode::invalid_driver_result, path,
             fmt::format("expected an object, got {}", obj.type_name()));
    }
    for (const auto& key : required) {
        if (!obj.contains(std::string(key))) {
            fail(ErrorCode::invalid_driver_result, json_path_append_key(path, key), "missing");
        }
    }
    for (const auto& [key, value] : obj.items()) {
        bool known = false;
        for (const auto& k : required) {
            known = known || k == key;
        }
        for (const auto& k : optional) {
            known = known || k == key;
        }
        if (!known) {
            fail(ErrorCode::invalid_driver_result, json_path_append_key(path, key),
                 "unknown key (the result object is closed; see PROTOCOL.md)");
        }
    }
}

// `cost` (optional, closed): {"workload_s": seconds >= 0}, what the SDK measured of the workload.
std::optional<double> workload_seconds(const Json& result) {
    if (!result.contains("cost")) {
        return std::nullopt;
    }
    const Json& cost = result["cost"];
    require_keys(cost, "$.cost", {"workload_s"});
    const Json& w = cost["workload_s"];
    if (!w.is_number() || !std::isfinite(w.get<double>()) || w.get<double>() < 0) {
        fail(ErrorCode::invalid_driver_result, "$.cost.workload_s",
             fmt::format("expected finite seconds >= 0, got {}", w.dump()));
    }
    return w.get<double>();
}

const std::string& string_at(const Json& obj, const std::string& key, const std::string& path) {
    const Json& v = obj.at(key);
    if (!v.is_string()) {
        fail(ErrorCode::invalid_driver_result, json_path_append_key(path, key),
             "expected a string");
    }
    return v.get_ref<const std::string&>();
}

double number_at(const Json& v, const std::string& path) {
    if (!v.is_number()) {  // booleans are not numbers here
        fail(ErrorCode::invalid_driver_result, path,
             fmt::format("expected a number, got {}", v.type_name()));
    }
    return v.get<double>();
}

// `expected` < 0: the subject errored, so its series may be empty (nothing was measured) or full.
std::vector<double> samples_of(const Json& metric, const MetricSpec& spec, int expected,
                               const std::string& path) {
    require_keys(metric, path, {"name", "unit", "samples"});
    if (string_at(metric, "name", path) != spec.name) {
        fail(ErrorCode::metric_name_mismatch, path + ".name",
             fmt::format("\"{}\" but the request asked for \"{}\"",
                         metric["name"].get<std::string>(), spec.name));
    }
    if (string_at(metric, "unit", path) != spec.unit) {
        fail(ErrorCode::unit_mismatch, path + ".unit",
             fmt::format("\"{}\" but the request asked for \"{}\" (convert in the driver)",
                         metric["unit"].get<std::string>(), spec.unit));
    }
    const Json& list = metric["samples"];
    if (!list.is_array()) {
        fail(ErrorCode::invalid_driver_result, path + ".samples", "expected an array");
    }
    const int want = expected < 0 ? -expected : expected;
    const bool may_be_empty = expected < 0 && list.empty();
    if (static_cast<int>(list.size()) != want && !may_be_empty) {
        fail(ErrorCode::sample_count_mismatch, path + ".samples",
             fmt::format("{} samples, the request asked for exactly {}", list.size(), want));
    }
    std::vector<double> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = json_path_append_index(path + ".samples", i);
        const double v = number_at(list[i], where);
        if (!std::isfinite(v)) {
            fail(ErrorCode::non_finite_sample, where, "not finite");
        }
        if (v <= 0) {
            fail(ErrorCode::non_positive_sample, where, fmt::format("{} is not positive", v));
        }
        out.push_back(v);
    }
    return out;
}

// The subject's correctness object: its status and metrics (every one the rule needs, unless
// the status is error).
void correctness_of(const Json& c, const Request& request, const std::string& cpath,
                    SubjectResult& out) {
    require_keys(c, cpath, {"status", "metrics"});
    const std::string& status = string_at(c, "status", cpath);
    const auto parsed = correctness_status_from_name(status);
    if (!parsed) {
        fail(ErrorCode::invalid_driver_result, cpath + ".status",
             fmt::format("\"{}\" is not one of passed, failed, error", status));
    }
    out.status = *parsed;
    if (!c["metrics"].is_object()) {
        fail(ErrorCode::invalid_driver_result, cpath + ".metrics", "expected an object");
    }
    for (const auto& [name, value] : c["metrics"].items()) {
        const std::string where = json_path_append_key(cpath + ".metrics", name);
        const double v = number_at(value, where);
        if (!std::isfinite(v)) {
            fail(ErrorCode::non_finite_sample, where, "correctness metric is not finite");
        }
        out.correctness_metrics[name] = v;
    }
    // A subject whose correctness could not be judged may lack metrics; one that claims a verdict
    // must report every metric the rule needs.
    if (out.status != CorrectnessStatus::error) {
        for (const auto& name : request.correctness_metrics) {
            if (!out.correctness_metrics.contains(name)) {
                fail(ErrorCode::invalid_driver_result,
                     json_path_append_key(cpath + ".metrics", name),
                     "missing: the correctness rule needs it");
            }
        }
    }
}

SubjectResult subject_of(const Json& s, const Request& request, const std::string& role,
                         const std::string& path, bool v2) {
    if (v2) {
        require_keys(s, path, {"role", "loaded_digest", "correctness", "measurements"});
    } else {
        require_keys(s, path, {"role", "correctness", "measurements"}, {"loaded_digest"});
    }
    SubjectResult out;
    out.role = role;
    if (s.contains("loaded_digest")) {
        out.loaded_digest = string_at(s, "loaded_digest", path);
    }
    correctness_of(s["correctness"], request, path + ".correctness", out);
    const int full = samples_for(request.mode, request.samples);
    const int expected = out.status == CorrectnessStatus::error ? -full : full;
    const Json& m = s["measurements"];
    const std::string mpath = path + ".measurements";
    require_keys(m, mpath, {"primary"}, {"constraints"});
    out.primary = samples_of(m["primary"], request.primary, expected, mpath + ".primary");
    const Json constraints = m.value("constraints", Json::array());
    if (!constraints.is_array()) {
        fail(ErrorCode::invalid_driver_result, mpath + ".constraints", "expected an array");
    }
    std::set<std::string> want;
    for (const auto& spec : request.constraints) {
        want.insert(spec.name);
    }
    std::set<std::string> got;
    for (std::size_t i = 0; i < constraints.size(); ++i) {
        const std::string where = json_path_append_index(mpath + ".constraints", i);
        require_keys(constraints[i], where, {"name", "unit", "samples"});
        const std::string& name = string_at(constraints[i], "name", where);
        const MetricSpec* spec = nullptr;
        for (const auto& c2 : request.constraints) {
            if (c2.name == name) {
                spec = &c2;
            }
        }
        if (spec == nullptr || !got.insert(name).second) {
            fail(ErrorCode::constraint_set_mismatch, where + ".name",
                 fmt::format("\"{}\" is {} (the request's constraints: {})", name,
                             spec == nullptr ? "not a requested constraint" : "reported twice",
                             fmt::join(want, ", ")));
        }
        out.constraints[name] = samples_of(constraints[i], *spec, expected, where);
    }
    if (got != want) {
        fail(ErrorCode::constraint_set_mismatch, mpath + ".constraints",
             fmt::format("reported [{}], the request asked for [{}]", fmt::join(got, ", "),
                         fmt::join(want, ", ")));
    }
    return out;
}

// The subject entry that carries role `wanted.role` must say it measured that role's snapshot: a
// driver that loaded both subjects but reports one's samples under the other's role is caught here
// (the SDKs fill loaded_digest from the subject they timed). Requests without a digest (none that
// cko writes) leave nothing to compare.
void check_role(const SubjectResult& got, const Request& request, const Subject& wanted,
                const std::string& path) {
    if (got.loaded_digest.empty() || wanted.digest.empty() || got.loaded_digest == wanted.digest) {
        return;
    }
    std::string whose = "no subject of the request";
    for (const auto& other : request.subjects) {
        if (other.digest == got.loaded_digest) {
            whose = fmt::format("the {} ({})", other.role, other.label);
        }
    }
    throw Error(
        ErrorCode::role_mismatch,
        fmt::format("driver result {}: the samples reported as the {}'s were measured on {} "
                    "(loaded_digest {}, the request's {} is {}); report each subject's "
                    "samples under its own role, with the digest of the subject timed",
                    path, wanted.role, whose, got.loaded_digest, wanted.role, wanted.digest),
        Json{{"path", path + ".loaded_digest"},
             {"role", wanted.role},
             {"loaded_digest", got.loaded_digest},
             {"expected_digest", wanted.digest}});
}

}  // namespace

std::string roles_unchecked_note(const std::vector<std::string>& roles) {
    return fmt::format(
        "roles unchecked: the driver reported no loaded digest (a cko/driver-result-v1 result "
        "without loaded_digest for the {}): nothing ties its samples to the subject measured, so "
        "swapped roles would go unseen; write cko/driver-result-v2 with each subject's "
        "loaded_digest, as the SDKs do (docs/PROTOCOL.md, Roles)",
        fmt::join(roles, " and "));
}

int samples_for(Mode mode, int requested) noexcept {
    return mode == Mode::smoke ? 2 : requested;
}

Json Request::to_json() const {
    Json subjects_json = Json::array();
    for (const auto& s : subjects) {
        Json subject{{"role", s.role}, {"label", s.label}, {"path", s.path}};
        if (!s.digest.empty()) {
            subject["digest"] = s.digest;
        }
        subjects_json.push_back(subject);
    }
    Json constraints_json = Json::array();
    for (const auto& c : constraints) {
        constraints_json.push_back(Json{{"name", c.name}, {"unit", c.unit}});
    }
    Json j{{"format_version", "cko/driver-request-v1"},
           {"mode", mode_name(mode)},
           {"case", {{"id", case_id}, {"path", case_path}}},
           {"subjects", subjects_json},
           {"order", order},
           {"samples", samples_for(mode, samples)},
           {"seed", seed},
           {"objective",
            {{"primary", {{"name", primary.name}, {"unit", primary.unit}}},
             {"constraints", constraints_json}}},
           {"correctness", {{"metrics", correctness_metrics}}}};
    if (profile.is_object()) {
        j["profile"] = profile;
    }
    return j;
}

Json call_request_json(const Request& request, const std::filesystem::path& output_dir,
                       std::int64_t deadline_unix_ns) {
    Json j = request.to_json();
    j["output_dir"] = output_dir.string();
    j["result_path"] = store::layout::driver_result(output_dir.string());
    j["deadline_unix_s"] = static_cast<double>(deadline_unix_ns) / 1e9;
    return j;
}

std::vector<std::string> call_argv(const std::vector<std::string>& driver_argv,
                                   const std::filesystem::path& request_path) {
    std::vector<std::string> argv = driver_argv;
    argv.push_back("--request");
    argv.push_back(request_path.string());
    return argv;
}

const SubjectResult& Result::subject(const std::string& role) const {
    for (const auto& s : subjects) {
        if (s.role == role) {
            return s;
        }
    }
    throw Error(ErrorCode::internal, fmt::format("no subject {} in the result", role));
}

Json Result::to_json() const {
    Json list = Json::array();
    for (const auto& s : subjects) {
        Json constraints = Json::object();
        for (const auto& [name, samples] : s.constraints) {
            constraints[name] = samples;
        }
        list.push_back(Json{
            {"role", s.role},
            {"correctness",
             {{"status", correctness_status_name(s.status)}, {"metrics", s.correctness_metrics}}},
            {"primary", s.primary},
            {"constraints", constraints}});
    }
    return Json{{"subjects", list}, {"environment", environment}, {"artifacts", artifacts}};
}

Result validate_result(const Request& request, const Json& result,
                       const std::vector<std::string>& output_files) {
    require_keys(result, "$", {"format_version", "subjects"}, {"environment", "artifacts", "cost"});
    // v2 = v1 + every subject's loaded_digest (PROTOCOL.md); v1 results are still read.
    const bool v2 = result["format_version"] == "cko/driver-result-v2";
    if (result["format_version"] != "cko/driver-result-v1" && !v2) {
        fail(ErrorCode::invalid_driver_result, "$.format_version",
             fmt::format("{} is neither cko/driver-result-v1 nor cko/driver-result-v2",
                         result["format_version"].dump()));
    }
    const Json& subjects = result["subjects"];
    if (!subjects.is_array() || subjects.size() != request.subjects.size()) {
        fail(
            ErrorCode::subject_mismatch, "$.subjects",
            fmt::format(
                "expected {} subject(s) ({}), got {}", request.subjects.size(),
                request.subjects.size() == 1 ? request.subjects[0].role : "reference and candidate",
                subjects.is_array() ? std::to_string(subjects.size()) : subjects.type_name()));
    }
    Result out;
    std::set<std::string> seen;
    for (const auto& wanted : request.subjects) {
        bool found = false;
        for (std::size_t i = 0; i < subjects.size(); ++i) {
            const std::string path = json_path_append_index("$.subjects", i);
            if (!subjects[i].is_object() || !subjects[i].contains("role") ||
                !subjects[i]["role"].is_string()) {
                fail(ErrorCode::invalid_driver_result, path + ".role", "missing or not a string");
            }
            if (subjects[i]["role"] == wanted.role) {
                if (found) {
                    fail(ErrorCode::subject_mismatch, path,
                         fmt::format("role {} appears twice", wanted.role));
                }
                found = true;
                out.subjects.push_back(subject_of(subjects[i], request, wanted.role, path, v2));
                check_role(out.subjects.back(), request, wanted, path);
                if (out.subjects.back().loaded_digest.empty() && !wanted.digest.empty()) {
                    out.unchecked_roles.push_back(wanted.role);  // v1: believed, and noted
                }
            }
        }
        if (!found) {
            fail(ErrorCode::subject_mismatch, "$.subjects",
                 fmt::format("no subject with role {}", wanted.role));
        }
    }
    out.environment = result.value("environment", Json::object());
    if (!out.environment.is_object()) {
        fail(ErrorCode::invalid_driver_result, "$.environment", "expected an object");
    }
    out.workload_s = workload_seconds(result);
    const Json artifacts = result.value("artifacts", Json::array());
    if (!artifacts.is_array()) {
        fail(ErrorCode::invalid_driver_result, "$.artifacts", "expected an array of file names");
    }
    std::set<std::string> declared;
    for (std::size_t i = 0; i < artifacts.size(); ++i) {
        const std::string where = json_path_append_index("$.artifacts", i);
        bool safe = artifacts[i].is_string() &&
                    artifacts[i].get<std::string>() != store::layout::kResultFile;
        if (safe) {
            try {
                (void)safe_join("/", artifacts[i].get<std::string>(), where);
            } catch (const Error&) {
                safe = false;
            }
        }
        if (!safe) {
            fail(
                ErrorCode::invalid_driver_result, where,
                "must be a relative path inside output_dir, components from [A-Za-z0-9._-]{1,128}");
        }
        declared.insert(artifacts[i].get<std::string>());
        out.artifacts.push_back(artifacts[i].get<std::string>());
    }
    std::set<std::string> present(output_files.begin(), output_files.end());
    for (const auto& name : present) {
        if (name != store::layout::kResultFile && !declared.contains(name)) {
            throw Error(
                ErrorCode::undeclared_output,
                fmt::format("the driver left \"{}\" in its output directory without listing it in "
                            "artifacts; declare it or write it elsewhere",
                            name),
                Json{{"file", name}});
        }
    }
    for (const auto& name : declared) {
        if (!present.contains(name)) {
            fail(ErrorCode::invalid_driver_result, "$.artifacts",
                 fmt::format("declares \"{}\", which is not in the output directory", name));
        }
    }
    return out;
}

}  // namespace cko::driver
