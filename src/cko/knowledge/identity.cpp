// Identity parsing: versions, compute capabilities, the family ranges, doctor documents.
#include "cko/knowledge/identity.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace cko::knowledge {
namespace {

struct FamilyRange {
    ArchFamily family;
    ComputeCapability low;
    ComputeCapability high;
};

// Ranges, not SM lists: a new minor revision inside a range (8.7, 10.3, 12.1) is in its family.
constexpr std::array kFamilies = {
    FamilyRange{ArchFamily::volta, {7, 0}, {7, 2}},
    FamilyRange{ArchFamily::turing, {7, 5}, {7, 9}},
    FamilyRange{ArchFamily::ampere, {8, 0}, {8, 7}},
    FamilyRange{ArchFamily::ada, {8, 9}, {8, 9}},
    FamilyRange{ArchFamily::hopper, {9, 0}, {9, 9}},
    FamilyRange{ArchFamily::blackwell, {10, 0}, {11, 9}},
    FamilyRange{ArchFamily::blackwell_consumer, {12, 0}, {12, 9}},
};

bool cc_le(const ComputeCapability& a, const ComputeCapability& b) noexcept {
    return a.major < b.major || (a.major == b.major && a.minor <= b.minor);
}

std::optional<int> whole_number(std::string_view s) {
    int v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
        return std::nullopt;
    }
    return v;
}

std::string text_or_empty(const Json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
    std::size_t end = 0;
    while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) {
        ++end;
    }
    const std::string_view core = text.substr(0, end);
    if (core.empty() || core.front() == '.' || core.back() == '.') {
        return std::nullopt;
    }
    // What follows must be a local/pre-release tail (+cu130, a0, rc1, .post1), never more digits.
    Version v;
    std::size_t start = 0;
    while (start <= core.size()) {
        std::size_t dot = core.find('.', start);
        if (dot == std::string_view::npos) {
            dot = core.size();
        }
        const auto n = whole_number(core.substr(start, dot - start));
        if (!n) {
            return std::nullopt;
        }
        v.parts.push_back(*n);
        start = dot + 1;
    }
    v.spelled = std::string(core);
    return v;
}

std::string Version::text() const {
    if (!spelled.empty()) {
        return spelled;  // "580.159.04", as the driver spells it, not "580.159.4"
    }
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        out += i == 0 ? "" : ".";
        out += std::to_string(parts[i]);
    }
    return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) noexcept {
    const std::size_t n = std::max(a.parts.size(), b.parts.size());
    for (std::size_t i = 0; i < n; ++i) {
        const int x = i < a.parts.size() ? a.parts[i] : 0;
        const int y = i < b.parts.size() ? b.parts[i] : 0;
        if (x != y) {
            return x <=> y;
        }
    }
    return std::strong_ordering::equal;
}

std::string ComputeCapability::text() const {
    return fmt::format("{}.{}", major, minor);
}

std::optional<ArchFamily> family_of(const ComputeCapability& cc) noexcept {
    for (const FamilyRange& r : kFamilies) {
        if (cc_le(r.low, cc) && cc_le(cc, r.high)) {
            return r.family;
        }
    }
    return std::nullopt;
}

std::optional<ComputeCapability> cc_from_arch(std::string_view arch) noexcept {
    if (arch.starts_with("sm_")) {
        arch.remove_prefix(3);
    } else if (arch.starts_with("compute_")) {
        arch.remove_prefix(8);
    } else {
        return std::nullopt;
    }
    if (!arch.empty() && arch.back() >= 'a' && arch.back() <= 'z') {
        arch.remove_suffix(1);  // sm_90a, sm_100f: the same compute capability
    }
    if (arch.size() < 2 || arch.size() > 3) {
        return std::nullopt;
    }
    const auto n = whole_number(arch);
    if (!n) {
        return std::nullopt;
    }
    return ComputeCapability{*n / 10, *n % 10};
}

std::optional<ComputeCapability> parse_cc(std::string_view text) noexcept {
    const std::size_t dot = text.find('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    const auto major = whole_number(text.substr(0, dot));
    const auto minor = whole_number(text.substr(dot + 1));
    if (!major || !minor || *minor > 9) {
        return std::nullopt;
    }
    return ComputeCapability{*major, *minor};
}

std::string canonical_framework(std::string_view name) {
    std::string out;
    for (char c : name) {
        out.push_back(c == '-' ? '_' : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
    }
    if (out == "pytorch") {
        return "torch";
    }
    if (out == "trt_llm" || out == "tensorrtllm") {
        return "tensorrt_llm";
    }
    return out;
}

Json Identity::to_json() const {
    Json fw = Json::object();
    for (const auto& [name, v] : frameworks) {
        fw[name] = v.text();
    }
    const auto family = cc ? family_of(*cc) : std::nullopt;
    return Json{{"arch", arch.empty() ? Json() : Json(arch)},
                {"compute_capability", cc ? Json(cc->text()) : Json()},
                {"family", family ? Json(std::string(arch_family_name(*family))) : Json()},
                {"cuda", cuda ? Json(cuda->text()) : Json()},
                {"driver", driver ? Json(driver->text()) : Json()},
                {"frameworks", fw},
                {"source", source}};
}

Identity identity_from_doctor(const Json& doctor, std::string_view file) {
    if (!doctor.is_object() || doctor.value("format_version", "") != "cko/doctor-v1" ||
        !doctor.contains("identity") || !doctor["identity"].is_object()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--doctor {}: not a `cko doctor --json` document (format_version "
                                "cko/doctor-v1 with an identity)",
                                file),
                    Json{{"path", std::string(file)}});
    }
    const Json& id = doctor["identity"];
    Identity out;
    out.source = fmt::format("doctor:{}", file);
    std::vector<std::string> ccs;
    if (const auto g = id.find("gpus"); g != id.end() && g->is_array()) {
        for (const Json& gpu : *g) {
            const std::string cc = text_or_empty(gpu, "compute_capability");
            if (!cc.empty() && std::find(ccs.begin(), ccs.end(), cc) == ccs.end()) {
                ccs.push_back(cc);
            }
        }
    }
    if (ccs.size() > 1) {
        throw Error(
            ErrorCode::invalid_argument,
            fmt::format("--doctor {}: identity.gpus have different compute capabilities ({}); "
                        "pick one with --cc",
                        file, fmt::join(ccs, ", ")),
            Json{{"path", std::string(file)}, {"field", "identity.gpus[].compute_capability"}});
    }
    if (ccs.size() == 1) {
        out.cc = parse_cc(ccs.front());
        if (out.cc) {
            out.arch = fmt::format("sm_{}{}", out.cc->major, out.cc->minor);
        }
    }
    out.driver = Version::parse(text_or_empty(id, "driver_version"));
    if (const auto t = id.find("tools"); t != id.end() && t->is_array()) {
        for (const Json& tool : *t) {
            if (text_or_empty(tool, "name") == "nvcc") {
                out.cuda = Version::parse(text_or_empty(tool, "version"));
            }
        }
    }
    return out;
}

}  // namespace cko::knowledge
