// Feeds a Kineto trace's intervals into the one timeline model, streamed, without a summary.
#pragma once

#include "cko/profile/fact.hpp"
#include "cko/timeline/timeline.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::profile::kineto {

struct KinetoTimelineFeed {
    Source source;  // sha256 of the file, tool "kineto", dialect
    std::uint64_t file_bytes = 0;
    std::optional<std::int64_t> rank;  // distributedInfo.rank
    std::int64_t intervals = 0;
    std::vector<std::string> notes;  // what was left out, and why
};

// Streams the trace (plain or gzip) into `sink` as one source: kernels, memcpy (by kind from
// Kineto's name: HtoD, DtoH, DtoD, PtoP), memset on GPU lanes (device, stream); CUDA runtime and
// driver calls (sync split out by name), cpu_op and user_annotation on CPU lanes (pid, tid). Left
// out, and counted in notes: python_function rows, gpu_user_annotation (a GPU-side copy of the
// CPU range), cuda_profiler_range (CUPTI range-profiler counters, whose ts/dur are made up), other
// categories, negative durations, CPU rows without integer pid/tid. When no GPU interval was fed
// but GPU-like rows were left out, a note says so (the map would show an idle GPU). Errors as
// import_kineto_trace (schemaVersion, traceEvents, ts/dur, malformed JSON).
KinetoTimelineFeed feed_kineto_timeline(const std::filesystem::path& path,
                                        timeline::TimelineSink& sink,
                                        const std::string& tool_version = "");

}  // namespace cko::profile::kineto
