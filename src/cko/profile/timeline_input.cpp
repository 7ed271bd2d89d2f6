// Format detection and the per-format feeders behind `cko map`.
#include "cko/profile/timeline_input.hpp"

#include "cko/profile/kineto/timeline_feeder.hpp"
#include "cko/profile/nsys/nsys_database.hpp"
#include "cko/profile/nsys/nsys_export.hpp"
#include "cko/profile/nsys/timeline_feeder.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <fstream>
#include <set>

namespace cko::profile {
namespace {

bool is_sqlite(const std::filesystem::path& path) {
    char magic[16] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(magic, sizeof magic);
    return in.gcount() == 16 && std::string_view(magic, 15) == "SQLite format 3";
}

}  // namespace

LoadedTimeline load_timeline(const std::vector<std::filesystem::path>& paths,
                             const std::string& tool_version) {
    if (paths.empty()) {
        throw Error(ErrorCode::invalid_argument, "name at least one trace file",
                    {{"field", "files"}});
    }
    LoadedTimeline out;
    std::size_t kineto_files = 0;
    for (const auto& path : paths) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            throw Error(ErrorCode::not_found, path.string() + " is not a readable file",
                        {{"path", path.string()}, {"field", "files"}});
        }
        TimelineInput input;
        input.path = path.string();
        if (is_sqlite(path)) {
            const nsys::NsysDatabase db(path);
            const nsys::NsysTimelineFeed feed = nsys::feed_nsys_timeline(db, out.timeline);
            input.format = "nsys";
            input.source =
                Source{sha256_file_hex(path), "nsys", db.metadata("EXPORT_PRODUCT_VERSION"),
                       "nsys-sqlite-" + db.schema_version(), nsys::kParserVersion};
            input.file_bytes = std::filesystem::file_size(path);
            input.intervals = feed.intervals;
            out.notes.insert(out.notes.end(), feed.notes.begin(), feed.notes.end());
        } else {
            const kineto::KinetoTimelineFeed feed =
                kineto::feed_kineto_timeline(path, out.timeline, tool_version);
            input.format = "torch";
            input.source = feed.source;
            input.file_bytes = feed.file_bytes;
            input.rank = feed.rank;
            input.intervals = feed.intervals;
            out.notes.insert(out.notes.end(), feed.notes.begin(), feed.notes.end());
            ++kineto_files;
        }
        out.inputs.push_back(std::move(input));
    }
    if (kineto_files > 1) {
        std::set<std::int64_t> ranks;
        for (const auto& in : out.inputs) {
            if (in.format != "torch") {
                continue;
            }
            if (!in.rank) {
                throw Error(ErrorCode::missing_field,
                            in.path +
                                " has no distributedInfo.rank; with several traces each must "
                                "say which rank it is",
                            {{"path", in.path}, {"field", "distributedInfo.rank"}});
            }
            if (!ranks.insert(*in.rank).second) {
                throw Error(ErrorCode::invalid_argument,
                            "two traces claim rank " + std::to_string(*in.rank),
                            {{"path", in.path}, {"rank", *in.rank}});
            }
        }
    }
    return out;
}

Json map_document(const LoadedTimeline& loaded, const timeline::ExecutionMap& map) {
    Json doc = timeline::execution_map_to_json(map);
    Json inputs = Json::array();
    for (const auto& in : loaded.inputs) {
        inputs.push_back(Json{{"path", in.path},
                              {"format", in.format},
                              {"source", source_to_json(in.source)},
                              {"file_bytes", in.file_bytes},
                              {"rank", in.rank ? Json(*in.rank) : Json()},
                              {"intervals", in.intervals}});
    }
    doc["inputs"] = inputs;
    for (const auto& note : loaded.notes) {
        doc["notes"].push_back(note);
    }
    return doc;
}

}  // namespace cko::profile
