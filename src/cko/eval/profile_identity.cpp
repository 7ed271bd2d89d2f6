// A profile's tool and device identity read from its document, and the rule binding it to a Target.
#include "cko/eval/profile_identity.hpp"

#include "cko/profile/tested_versions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace cko::eval {
namespace {

using profile::VersionStatus;

// `cko profile collect` has no --foreign: what it collected is kept as foreign evidence by
// importing the export with the importer's verb, which has.
std::string foreign_fix(bool collected) {
    return collected
               ? "keep it as foreign evidence by importing the export with `cko profile "
                 "ncu|nsys|torch FILE --root R --experiment EXP --subject S --foreign` (stored "
                 "with the reasons; no claim may cite it)"
               : "keep it as foreign evidence with --foreign (stored with the reasons; no "
                 "claim may cite it)";
}

std::string text_of(const Json& j, const char* key) {
    const Json v = j.is_object() ? j.value(key, Json()) : Json();
    return v.is_string() ? v.get<std::string>() : std::string();
}

std::string capability(const Json& major, const Json& minor) {
    return major.is_number_integer() && minor.is_number_integer()
               ? fmt::format("{}.{}", major.get<std::int64_t>(), minor.get<std::int64_t>())
               : std::string();
}

void add_device(Json& devices, const std::string& name, const std::string& cc) {
    if (name.empty() && cc.empty()) {
        return;
    }
    const Json d{{"name", name.empty() ? Json() : Json(name)},
                 {"compute_capability", cc.empty() ? Json() : Json(cc)}};
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) {
        devices.push_back(d);
    }
}

// The devices a document names, and whether it shows GPU work, per kind of document.
void read_devices(const std::string& kind, const Json& doc, ProfileIdentity& out) {
    if (kind == "ncu") {
        out.gpu_work = true;  // Nsight Compute profiles GPU kernels and nothing else
        const std::string name = text_of(doc, "device_name");
        bool any = false;
        for (const auto& l : doc.value("launches", Json::array())) {
            const std::string cc = text_of(l, "compute_capability");
            any = any || !cc.empty();
            add_device(out.devices, name, cc);
        }
        if (!any) {
            add_device(out.devices, name, "");
        }
    } else if (kind == "nsys") {
        for (const auto& g : doc.value("gpus", Json::array())) {
            add_device(
                out.devices, text_of(g, "name"),
                capability(g.value("computeMajor", Json()), g.value("computeMinor", Json())));
        }
        const Json rows = doc.value("reports", Json::object())
                              .value("cuda_gpu_kern_sum", Json::object())
                              .value("rows", Json::array());
        out.gpu_work = !out.devices.empty() || !rows.empty();
    } else if (kind == "torch") {
        for (const auto& t : doc.value("traces", Json::array())) {
            const Json id = t.value("identity", Json::object());
            for (const auto& d : id.value("device_properties", Json::array())) {
                add_device(
                    out.devices, text_of(d, "name"),
                    capability(d.value("computeMajor", Json()), d.value("computeMinor", Json())));
            }
            const Json summary = t.value("summary", Json::object());
            out.gpu_work = out.gpu_work || summary.value("kernel_time_ns", Json(0)) != Json(0);
        }
        out.gpu_work = out.gpu_work || !out.devices.empty();
    } else if (kind == "map") {
        for (const auto& part : doc.value("parts", Json::array())) {
            for (const auto& w : part.value("windows", Json::array())) {
                const Json busy = w.value("gpu", Json::object()).value("busy_ns", Json(0));
                out.gpu_work = out.gpu_work || (busy.is_number() && busy.get<double>() > 0);
            }
        }
    }
}

void add_tool(ProfileIdentity& out, const std::string& tool, const std::string& field,
              const std::string& version) {
    const profile::VersionCheck c = profile::check_tested_version(tool, field, version);
    const char* status = c.status == VersionStatus::tested       ? "tested"
                         : c.status == VersionStatus::not_stated ? "not_stated"
                                                                 : "untested";
    const Json entry{{"tool", tool},
                     {"field", field},
                     {"version", version},
                     {"status", status},
                     {"tested", c.ranges}};
    if (std::find(out.tools.begin(), out.tools.end(), entry) == out.tools.end()) {
        out.tools.push_back(entry);
    }
}

std::string device_text(const Json& d) {
    const std::string name = text_of(d, "name");
    const std::string cc = text_of(d, "compute_capability");
    if (cc.empty()) {
        return name;
    }
    return name.empty() ? "a GPU of compute capability " + cc
                        : fmt::format("{} (compute capability {})", name, cc);
}

std::string devices_text(const Json& devices) {
    std::vector<std::string> parts;
    for (const auto& d : devices) {
        parts.push_back(device_text(d));
    }
    return parts.empty() ? std::string("a GPU") : fmt::format("{}", fmt::join(parts, ", "));
}

bool same_text(const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// Unknown on either side is not a difference; a device naming neither matches nothing.
bool device_matches(const Json& d, const Json& t) {
    const std::string dn = text_of(d, "name"), tn = text_of(t, "name");
    const std::string dc = text_of(d, "compute_capability"), tc = text_of(t, "compute_capability");
    return (dn.empty() || tn.empty() || same_text(dn, tn)) &&
           (dc.empty() || tc.empty() || dc == tc);
}

void problem(ProfileIdentity& out, ErrorCode code, const std::string& field, std::string seen,
             std::string expected, const std::string& what, const std::string& fix) {
    out.problems.push_back(IdentityProblem{code, field, what, what + "; " + fix,
                                           Json{{"field", field},
                                                {"seen", std::move(seen)},
                                                {"expected", std::move(expected)},
                                                {"fix", fix}}});
}

void compare_versions(ProfileIdentity& out, const std::string& target_id, bool collected) {
    for (const auto& t : out.tools) {
        const std::string status = t.value("status", "");
        if (status == "tested") {
            continue;
        }
        const std::string tool = t.value("tool", ""), field = t.value("field", "");
        const std::string version = t.value("version", "");
        const profile::VersionCheck c = profile::check_tested_version(tool, field, version);
        const std::string name = profile::tool_display_name(tool);
        std::string fix;
        if (field == "schema_version") {
            fix = foreign_fix(collected);
        } else if (collected) {
            fix = fmt::format("profile with a {} of a tested version, or {}", name,
                              foreign_fix(collected));
        } else if (status == "not_stated") {
            fix = fmt::format("pass --tool-version VERSION (the {} that made it), or {}", name,
                              foreign_fix(false));
        } else {
            fix = fmt::format(
                "{}; or, if {} is not the {} that made it, pass the right one "
                "with --tool-version",
                foreign_fix(false), version, name);
        }
        problem(out, ErrorCode::tool_version_unknown, field, version, c.ranges,
                fmt::format("{}: a profile bound to Target {} must carry a tested version",
                            c.problem, target_id),
                fix);
    }
}

void compare_devices(ProfileIdentity& out, const store::TargetRecord& target, const Json& mine,
                     bool collected) {
    const std::string fix =
        "offer it to a Target frozen on that device, or " + foreign_fix(collected);
    if (mine.empty()) {
        if (!out.devices.empty() || out.gpu_work) {
            problem(out, ErrorCode::environment_mismatch, "device", devices_text(out.devices),
                    "no GPU",
                    fmt::format("the export was made on {}, but Target {} has no GPU (a CPU-only "
                                "Target: its frozen environment lists none it measures on)",
                                devices_text(out.devices), target.id),
                    fix);
        }
        return;
    }
    if (out.devices.empty() && out.gpu_work) {
        out.notes.push_back("the export names no device: not compared with the Target's " +
                            devices_text(mine));
    }
    for (const auto& d : out.devices) {
        if (std::none_of(mine.begin(), mine.end(),
                         [&](const Json& t) { return device_matches(d, t); })) {
            problem(out, ErrorCode::environment_mismatch, "device", device_text(d),
                    devices_text(mine),
                    fmt::format("the export was made on {}, but Target {} measures on {}",
                                device_text(d), target.id, devices_text(mine)),
                    fix);
        }
    }
}

// The first three components ("2025.3.2.474" and "2025.3.2.0" are one release).
bool same_release(const std::string& a, const std::string& b) {
    auto x = profile::version_components(a), y = profile::version_components(b);
    if (!x || !y) {
        return a == b;
    }
    x->resize(3, 0);
    y->resize(3, 0);
    return *x == *y;
}

void compare_tools(ProfileIdentity& out, const store::TargetRecord& target, bool collected) {
    const Json tools = target.environment.is_object()
                           ? target.environment.value("tools", Json::array())
                           : Json::array();
    for (const auto& t : out.tools) {
        const std::string tool = t.value("tool", ""), version = t.value("version", "");
        if (t.value("field", "") != "tool_version" || version.empty() || tool == "kineto") {
            continue;
        }
        const auto it = std::find_if(tools.begin(), tools.end(),
                                     [&](const Json& e) { return text_of(e, "name") == tool; });
        const std::string frozen = it == tools.end() ? std::string() : text_of(*it, "version");
        if (frozen.empty()) {
            out.notes.push_back(fmt::format(
                "the Target's environment records no {} version: {} {} is not compared with it",
                tool, profile::tool_display_name(tool), version));
        } else if (!same_release(frozen, version)) {
            problem(out, ErrorCode::environment_mismatch, "tool_version", version, frozen,
                    fmt::format("the export was made by {} {}, but Target {}'s environment has "
                                "{} {} (its `{} --version` at freeze)",
                                profile::tool_display_name(tool), version, target.id,
                                profile::tool_display_name(tool), frozen, tool),
                    "profile with the Target's own " + tool + ", or " + foreign_fix(collected));
        }
    }
}

}  // namespace

Json ProfileIdentity::to_json(const Json& target_devices) const {
    return Json{{"tools", tools},
                {"devices", devices},
                {"gpu_work", gpu_work},
                {"target_devices", target_devices},
                {"notes", notes}};
}

ProfileIdentity read_profile_identity(const std::string& kind, const Json& document,
                                      const Json& sources, const Json& collection) {
    ProfileIdentity out;
    const std::string collected = text_of(collection, "tool_version");
    for (const auto& s : sources.is_array() ? sources : Json::array()) {
        const std::string tool = text_of(s, "tool");
        std::string version = text_of(s, "tool_version");
        add_tool(out, tool, "tool_version", version.empty() ? collected : version);
        const std::string dialect = text_of(s, "dialect");
        if (tool == "nsys" && dialect.starts_with("nsys-sqlite-")) {
            add_tool(out, tool, "schema_version", dialect.substr(12));
        }
    }
    read_devices(kind, document.is_object() ? document : Json::object(), out);
    return out;
}

Json target_devices(const store::TargetRecord& target) {
    Json out = Json::array();
    const Json gpus = target.environment.is_object()
                          ? target.environment.value("gpus", Json::array())
                          : Json::array();
    for (const auto& g : gpus) {
        const std::string uuid = text_of(g, "uuid");
        if (target.gpus &&
            std::find(target.gpus->begin(), target.gpus->end(), uuid) == target.gpus->end()) {
            continue;
        }
        add_device(out, text_of(g, "name"), text_of(g, "compute_capability"));
    }
    return out;
}

void compare_with_target(ProfileIdentity& identity, const store::TargetRecord& target,
                         bool collected) {
    compare_devices(identity, target, target_devices(target), collected);
    compare_tools(identity, target, collected);
    compare_versions(identity, target.id, collected);
}

Error identity_refusal(const std::vector<IdentityProblem>& problems) {
    const auto first = std::find_if(problems.begin(), problems.end(), [](const auto& p) {
        return p.code == ErrorCode::environment_mismatch;
    });
    const IdentityProblem& lead = first == problems.end() ? problems.front() : *first;
    std::string message = lead.message;
    Json all = Json::array();
    for (const auto& p : problems) {
        all.push_back(Json{{"code", std::string(error_code_name(p.code))},
                           {"field", p.field},
                           {"message", p.message}});
        if (&p != &lead) {
            message += ". Also: " + p.message;
        }
    }
    Json details = lead.details;
    details["problems"] = all;
    return Error(lead.code, message, details);
}

}  // namespace cko::eval
