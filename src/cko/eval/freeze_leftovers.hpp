// What target freezes leave behind, and its reclaiming (target.cpp's freeze calls both).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cko::eval {

// Copies the invocations of a failed freeze (request, stdout/stderr of each smoke call) in
// `staging` to a fresh cko-failed-freeze-<name>-<pid>-<unix_s> directory under temp_base(); returns
// it, or "" when there was nothing to keep.
std::string keep_failed_freeze_logs(const std::filesystem::path& staging, const std::string& name);

// Removes what earlier freezes left once their process is gone: a killed freeze's staging root
// beside the root, its store staging, the kept logs of failed freezes of `target_name`, and the
// identity probe's scratch folders in the temp directory. Returns the paths removed.
std::vector<std::string> reclaim_freeze_leftovers(const std::filesystem::path& parent,
                                                  const std::string& root_name,
                                                  const std::string& target_name);

}  // namespace cko::eval
