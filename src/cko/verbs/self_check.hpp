// `cko self-check`: is this installation whole? (version, schemas, skill package, temp dir,
// JSON+SHA-256)
#pragma once

#include "cko/util/json.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cko::verbs {

struct CheckItem {
    std::string name;
    bool ok = false;
    std::string detail;  // what was found, or what is wrong and how to fix it
};

struct SelfCheckReport {
    std::string version;
    std::string git_describe;  // what the binary was built from (at configure time)
    std::string git_tag;
    std::string git_commit;
    std::filesystem::path executable;
    std::filesystem::path data_dir;  // where schemas/ and skills/ were looked for
    std::vector<CheckItem> checks;
    [[nodiscard]] bool ok() const;
    [[nodiscard]] Json to_json() const;
    [[nodiscard]] std::string to_text() const;
};

// Where schemas/ and skills/ live: $CKO_DATA_DIR, else <prefix>/share/cko next to an installed
// binary, else the source tree the binary was built from.
[[nodiscard]] std::filesystem::path find_data_dir();

// `skill_dir`: an installed copy of the skill package to check instead of the data dir's.
[[nodiscard]] SelfCheckReport run_self_check(const std::filesystem::path& data_dir,
                                             const std::filesystem::path& skill_dir = {});

}  // namespace cko::verbs
