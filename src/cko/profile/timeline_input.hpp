// Loads trace files of either format (Kineto JSON, nsys SQLite) into one Timeline for the map.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/timeline/execution_map.hpp"
#include "cko/timeline/timeline.hpp"
#include "cko/util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::profile {

struct TimelineInput {
    std::string path;
    std::string format;  // "torch" or "nsys"
    Source source;       // sha256 of the file, tool, tool version, dialect, parser version
    std::uint64_t file_bytes = 0;
    std::optional<std::int64_t> rank;
    std::int64_t intervals = 0;
};

struct LoadedTimeline {
    timeline::Timeline timeline;
    std::vector<TimelineInput> inputs;
    std::vector<std::string> notes;
};

// Each file is one source, recognised by content: an SQLite header is an nsys export, anything
// else is read as a Kineto trace. With several Kineto traces each must name its rank and ranks
// must differ (missing_field / invalid_argument), as `cko profile torch`. Errors of the importers.
[[nodiscard]] LoadedTimeline load_timeline(const std::vector<std::filesystem::path>& paths,
                                           const std::string& tool_version = "");

// The map of the loaded files: the cko/map-v1 document with `inputs` (what was read, with the
// digests) and the importers' notes added.
[[nodiscard]] Json map_document(const LoadedTimeline& loaded, const timeline::ExecutionMap& map);

}  // namespace cko::profile
