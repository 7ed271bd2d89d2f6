// What this binary was built from: the release version and the git state at configure time.
#pragma once

namespace cko {

// PEP 440, from the nearest v<version> tag (cmake/CkoBuildInfo.cmake): "0.3.0" at the tag,
// "0.3.0.post2+g1a2b3c4" after it, "0.1.0.dev0+g1a2b3c4" before any release.
[[nodiscard]] const char* build_version();
[[nodiscard]] const char* build_describe();  // `git describe --tags --always --dirty`
[[nodiscard]] const char* build_tag();       // the v<version> tag, or "none"
[[nodiscard]] const char* build_commit();    // the full commit id, or "unknown"

}  // namespace cko
