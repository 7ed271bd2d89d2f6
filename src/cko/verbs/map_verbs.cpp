// `cko map FILE...`: the execution map of Kineto traces or nsys exports (logic in timeline/).
#include "cko/profile/timeline_input.hpp"
#include "cko/timeline/execution_map.hpp"
#include "cko/verbs/evidence.hpp"
#include "cko/verbs/verb.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cko::verbs {
namespace {

Outcome map(const Request& r, Context& /*context*/) {
    const std::vector<std::string> files = r.list("files");
    const std::vector<std::filesystem::path> paths(files.begin(), files.end());
    const profile::LoadedTimeline loaded = profile::load_timeline(paths, r.text("tool_version"));
    timeline::MapOptions o;
    o.window = r.text("window");
    if (r.has("speedup")) {
        o.speedup = r.number("speedup");
    }
    if (r.has("device")) {
        o.device = r.integer("device");
    }
    if (r.has("rank")) {
        o.rank = r.integer("rank");
    }
    o.gantt_columns = static_cast<std::size_t>(r.integer("gantt_columns"));
    timeline::ExecutionMap m = timeline::compute_execution_map(loaded.timeline, o);
    m.notes.insert(m.notes.end(), loaded.notes.begin(), loaded.notes.end());
    for (const auto& in : loaded.inputs) {
        add_version_notes(m.notes, in.source);
    }
    Outcome out{timeline::execution_map_text(m, static_cast<std::size_t>(r.integer("top"))),
                profile::map_document(loaded, m),
                0,
                {}};
    Json sources = Json::array();
    for (const auto& in : out.document["inputs"]) {
        Json s = in["source"];
        s["path"] = in["path"];
        sources.push_back(s);
    }
    store_if_asked(r, "map", sources, out);
    return out;
}

}  // namespace

void add_map_verbs(std::vector<Verb>& table) {
    // K ≤ 1 is refused by the map itself (timeline/execution_map.hpp), with the same words as a
    // library call gets.
    Param speedup = number_param(
        "speedup", "K > 1: the Amdahl bound of the end-to-end gain if an item became K× faster");
    Param top = integer_param("top", "Items per window to print (default 15)", 15);
    top.minimum = 0;
    Param gantt =
        integer_param("gantt_columns", "Width of the text Gantt (default 80; 0: none)", 80);
    gantt.minimum = 0;
    std::vector<Param> params{
        required(positional(list_param(
            "files", "Kineto traces (.json/.json.gz, one per rank) or an nsys .sqlite export"))),
        string_param("window",
                     "Annotation/NVTX range whose occurrences are the windows (trailing "
                     "* = prefix); default: the whole trace"),
        speedup,
        integer_param("device", "Only this GPU"),
        integer_param("rank", "Only this rank (distributedInfo.rank)"),
        top,
        gantt,
        string_param("tool_version",
                     "torch version that wrote the traces (they do not record it)")};
    params = with_evidence_params(std::move(params));
    // Not read-only: with --root it writes a profile record.
    table.push_back(Verb{{"map"},
                         "Where the time goes: GPU busy/idle, idle attribution, overlap, exposed "
                         "time per item",
                         RequestDef{params},
                         &map,
                         false});
}

}  // namespace cko::verbs
