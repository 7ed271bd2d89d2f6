// `cko map FILE...`: the execution map of Kineto traces or nsys exports (logic in timeline/).
#include "cko/cli/command.hpp"
#include "cko/cli/evidence_flags.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/profile/timeline_input.hpp"
#include "cko/timeline/execution_map.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cko::cli {

void register_map(CLI::App& app) {
    struct Flags {
        std::vector<std::string> files;
        std::string window;
        std::optional<double> speedup;
        std::optional<std::int64_t> device;
        std::optional<std::int64_t> rank;
        std::size_t top = 15;
        std::size_t gantt_columns = 80;
        std::string tool_version;
        EvidenceFlags evidence;
    };
    auto f = std::make_shared<Flags>();
    auto* verb = add_verb(
        app, "map",
        "Where the time goes: GPU busy/idle, idle attribution, overlap, exposed time per item",
        [f] {
            const std::vector<std::filesystem::path> paths(f->files.begin(), f->files.end());
            const profile::LoadedTimeline loaded = profile::load_timeline(paths, f->tool_version);
            timeline::MapOptions o;
            o.window = f->window;
            o.speedup = f->speedup;
            o.device = f->device;
            o.rank = f->rank;
            o.gantt_columns = f->gantt_columns;
            timeline::ExecutionMap map = timeline::compute_execution_map(loaded.timeline, o);
            map.notes.insert(map.notes.end(), loaded.notes.begin(), loaded.notes.end());
            CommandResult result{timeline::execution_map_text(map, f->top),
                                 profile::map_document(loaded, map), 0};
            Json sources = Json::array();
            for (const auto& in : result.json["inputs"]) {
                Json s = in["source"];
                s["path"] = in["path"];
                sources.push_back(s);
            }
            store_if_asked(f->evidence, "map", sources, result);
            return result;
        });
    verb->add_option("files", f->files,
                     "Kineto traces (.json/.json.gz, one per rank) or an nsys .sqlite export")
        ->required();
    verb->add_option("--window", f->window,
                     "Annotation/NVTX range whose occurrences are the windows (trailing * = "
                     "prefix); default: the whole trace");
    verb->add_option("--speedup", f->speedup,
                     "K > 1: the Amdahl bound of the end-to-end gain if an item became K× faster");
    verb->add_option("--device", f->device, "Only this GPU");
    verb->add_option("--rank", f->rank, "Only this rank (distributedInfo.rank)");
    verb->add_option("--top", f->top, "Items per window to print (default 15)");
    verb->add_option("--gantt-columns", f->gantt_columns,
                     "Width of the text Gantt (default 80; 0: none)");
    verb->add_option("--tool-version", f->tool_version,
                     "torch version that wrote the traces (they do not record it)");
    add_evidence_flags(verb, f->evidence);
}

}  // namespace cko::cli
