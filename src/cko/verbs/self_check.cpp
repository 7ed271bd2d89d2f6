// `cko self-check`: verifies the installation without a GPU.
#include "cko/verbs/self_check.hpp"

#include "cko/util/build_info.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/text_table.hpp"
#include "cko/util/utf8.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <cctype>
#include <cstdlib>

namespace cko::verbs {
namespace fs = std::filesystem;
namespace {

fs::path own_executable() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe;
}

CheckItem check_version(const fs::path& exe) {
    CheckItem item{"version", false, ""};
    if (exe.empty()) {
        item.detail = "cannot read /proc/self/exe to hash the running binary";
        return item;
    }
    item.ok = true;
    item.detail = fmt::format("cko {} at {} (sha256 {})", build_version(), exe.string(),
                              sha256_file_hex(exe).substr(0, 16));
    return item;
}

CheckItem check_schemas(const fs::path& data_dir) {
    CheckItem item{"schemas", false, ""};
    const fs::path dir = data_dir / "schemas";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        item.detail = fmt::format("{} is missing; reinstall (cmake --install) or set CKO_DATA_DIR",
                                  dir.string());
        return item;
    }
    int count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        try {
            const Json schema = read_json_file(entry.path());
            if (!schema.contains("$schema") || !schema.contains("$id")) {
                item.detail = fmt::format("{} lacks $schema/$id", entry.path().string());
                return item;
            }
        } catch (const Error& e) {
            item.detail = fmt::format("{} is not valid JSON: {}", entry.path().string(), e.what());
            return item;
        }
        ++count;
    }
    item.ok = count > 0;
    item.detail = count > 0 ? fmt::format("{} JSON Schemas in {}", count, dir.string())
                            : fmt::format("no *.json schema in {}", dir.string());
    return item;
}

// "0.3" of "0.3.1", "0.3.0rc1" and "0.3.0.post2+g1a2b3c4", "1.0" of "1"; "" when `version` does
// not start with a number. A skill package documents the verbs and flags of one release series,
// which its patch releases keep.
std::string release_series(std::string_view version) {
    const auto digits_end = [version](std::size_t from) {
        while (from < version.size() && version[from] >= '0' && version[from] <= '9') {
            ++from;
        }
        return from;
    };
    const std::size_t major_end = digits_end(0);
    if (major_end == 0) {
        return "";
    }
    if (major_end < version.size() && version[major_end] == '.') {
        if (const std::size_t minor_end = digits_end(major_end + 1); minor_end > major_end + 1) {
            return std::string(version.substr(0, minor_end));
        }
    }
    return std::string(version.substr(0, major_end)) + ".0";
}

// The skill's VERSION file names the cko release it was written for; a binary of another release
// series may lack a verb or flag that the skill tells the agent to use.
std::string skill_version_problem(const fs::path& skill_dir) {
    const fs::path file = skill_dir / "VERSION";
    std::string skill_version;
    try {
        skill_version = utf8_or_replaced(read_file_capped(file, 256));
    } catch (const Error& e) {
        return fmt::format("{}; install the skill package of cko {} (docs/release.md)", e.what(),
                           build_version());
    }
    while (!skill_version.empty() &&
           std::isspace(static_cast<unsigned char>(skill_version.back()))) {
        skill_version.pop_back();
    }
    const std::string series = release_series(skill_version);
    if (!series.empty() && series == release_series(build_version())) {
        return "";
    }
    return fmt::format(
        "{} says the skill is for cko {}, but this binary is cko {}: install a matching pair, "
        "the cko of the skill's release (pip install 'cko=={}.*') or the skill package from this "
        "binary's source (git {}); see docs/release.md",
        file.string(), skill_version, build_version(), series.empty() ? "?" : series,
        build_describe());
}

// The skill package: SKILL.md with the Agent Skills front matter, every references/ file it links
// to present (an installer that dropped a file leaves the agent without the formats), and a
// VERSION of this binary's release series.
CheckItem check_skill(const fs::path& skill_dir) {
    CheckItem item{"skill_package", false, ""};
    const fs::path skill = skill_dir / "SKILL.md";
    try {
        const std::string text = read_file_capped(skill, 1 << 20);
        // Agent Skills packages start with YAML front matter naming the skill.
        if (!text.starts_with("---\n") ||
            text.find("\nname: cuda-kernel-optimizer\n") == std::string::npos) {
            item.detail = fmt::format("{} lacks the front matter 'name: cuda-kernel-optimizer'",
                                      skill.string());
            return item;
        }
        std::size_t at = 0;
        int references = 0;
        while ((at = text.find("](references/", at)) != std::string::npos) {
            const std::size_t start = at + 2;
            const std::size_t end = text.find_first_of(")#", start);
            const fs::path ref = skill_dir / text.substr(start, end - start);
            if (!fs::is_regular_file(ref)) {
                item.detail =
                    fmt::format("{} links to {}, which is missing; reinstall the skill package",
                                skill.string(), ref.string());
                return item;
            }
            ++references;
            at = end;
        }
        if (std::string problem = skill_version_problem(skill_dir); !problem.empty()) {
            item.detail = std::move(problem);
            return item;
        }
        item.ok = true;
        item.detail = fmt::format("{} ({} reference link(s) present, for cko {})", skill.string(),
                                  references, release_series(build_version()));
    } catch (const Error& e) {
        item.detail = fmt::format("{}; reinstall or set CKO_DATA_DIR", e.what());
    }
    return item;
}

CheckItem check_temp_dir() {
    CheckItem item{"temp_dir", false, ""};
    fs::path dir;
    try {
        dir = make_temp_dir("cko-self-check");
    } catch (const Error& e) {
        item.detail = e.what();
        return item;
    }
    try {
        write_file_create_once(dir / "probe.json", "{}");
        item.ok = read_file_capped(dir / "probe.json", 16) == "{}";
        item.detail =
            item.ok ? fmt::format("atomic write and read back in {}", dir.parent_path().string())
                    : "read back differs from what was written";
    } catch (const Error& e) {
        item.detail = e.what();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return item;
}

CheckItem check_json_sha256() {
    CheckItem item{"json_sha256_roundtrip", false, ""};
    // FIPS 180-2 test vector for "abc".
    const bool sha_ok =
        sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const Json value = parse_json_strict(R"({"b":[1,2.5,"\u00e9"],"a":{"z":null,"y":true}})");
    const std::string canonical = canonical_json(value);
    const bool json_ok =
        canonical == "{\"a\":{\"y\":true,\"z\":null},\"b\":[1,2.5,\"\xc3\xa9\"]}" &&
        parse_json_strict(canonical) == value;
    item.ok = sha_ok && json_ok;
    item.detail = item.ok ? "SHA-256 test vector and canonical JSON bytes as expected"
                          : fmt::format("sha256 {}, canonical JSON {}", sha_ok ? "ok" : "WRONG",
                                        json_ok ? "ok" : "WRONG");
    return item;
}

}  // namespace

bool SelfCheckReport::ok() const {
    for (const auto& c : checks) {
        if (!c.ok) {
            return false;
        }
    }
    return true;
}

Json SelfCheckReport::to_json() const {
    Json items = Json::array();
    for (const auto& c : checks) {
        items.push_back(Json{{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
    }
    return Json{{"format_version", "cko/self-check-v1"},
                {"version", version},
                {"build",
                 {{"version", version},
                  {"describe", git_describe},
                  {"tag", git_tag},
                  {"commit", git_commit}}},
                {"executable", executable.string()},
                {"data_dir", data_dir.string()},
                {"ok", ok()},
                {"checks", items}};
}

std::string SelfCheckReport::to_text() const {
    std::string out =
        fmt::format("cko {} self-check ({})\n  built from git {} (tag {}, commit {})\n", version,
                    data_dir.string(), git_describe, git_tag, git_commit);
    TextTable table({{4}, {22}, {}}, "  ");
    for (const auto& c : checks) {
        table.add({c.ok ? "ok" : "FAIL", c.name, c.detail});
    }
    out += table.render();
    out += ok() ? "installation ok\n" : "installation has problems (see FAIL lines)\n";
    return out;
}

fs::path find_data_dir() {
    if (const char* env = std::getenv("CKO_DATA_DIR"); env != nullptr && *env != '\0') {
        return fs::path(env);
    }
    const fs::path exe = own_executable();
    std::error_code ec;
    if (!exe.empty()) {
        const fs::path installed = exe.parent_path().parent_path() / "share" / "cko";
        if (fs::is_directory(installed, ec)) {
            return installed;
        }
    }
    return fs::path(CKO_SOURCE_DIR);
}

SelfCheckReport run_self_check(const fs::path& data_dir, const fs::path& skill_dir) {
    SelfCheckReport report;
    report.version = build_version();
    report.git_describe = build_describe();
    report.git_tag = build_tag();
    report.git_commit = build_commit();
    report.executable = own_executable();
    report.data_dir = data_dir;
    report.checks.push_back(check_version(report.executable));
    report.checks.push_back(check_schemas(data_dir));
    report.checks.push_back(
        check_skill(skill_dir.empty() ? data_dir / "skills" / "cuda-kernel-optimizer" : skill_dir));
    report.checks.push_back(check_temp_dir());
    report.checks.push_back(check_json_sha256());
    return report;
}

namespace {

Outcome self_check(const Request& request, Context& /*context*/) {
    const SelfCheckReport report = run_self_check(find_data_dir(), request.text("skill"));
    return Outcome{report.to_text(),
                   report.to_json(),
                   report.ok() ? 0 : static_cast<int>(ExitClass::environment),
                   {}};
}

}  // namespace

void add_self_check_verbs(std::vector<Verb>& table) {
    table.push_back(
        Verb{{"self-check"},
             "Verify this installation (no GPU needed); reports the version, git tag and commit",
             RequestDef{{string_param("skill",
                                      "An installed copy of the skill package (the folder "
                                      "holding SKILL.md) to check instead of the data dir's")}},
             &self_check,
             true});
}

}  // namespace cko::verbs
