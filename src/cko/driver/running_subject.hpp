// Which subject a driver was running when it died (docs/PROTOCOL.md "Which subject was running").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cko::driver {

// "reference", "candidate" or "" (not said). The SDKs keep the line `cko: subject ROLE case ID` in
// <call>/out/cko-running-subject.txt while a request runs, overwritten at every change of subject
// and removed before the result is written: when it is there, it names who ran at the end. A
// driver without that file may write the same line to stderr before each subject it runs: then the
// last such line of `stderr_tail` says it.
[[nodiscard]] std::string running_subject(const std::filesystem::path& call_dir,
                                          std::string_view stderr_tail);

// The role a `cko: subject ROLE case ID` line names ("" when `line` is none or names another role).
[[nodiscard]] std::string role_of_subject_line(std::string_view line);

}  // namespace cko::driver
