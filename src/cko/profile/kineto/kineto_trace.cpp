// Kineto import: stream the file, parse events, keep identity, summarise; several ranks at once.
#include "cko/profile/kineto/kineto_trace.hpp"

#include "cko/profile/kineto/trace_event.hpp"
#include "cko/profile/kineto/trace_reader.hpp"
#include "cko/profile/kineto/trace_tokenizer.hpp"
#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"

#include <algorithm>
#include <set>

namespace cko::profile::kineto {
namespace {

std::optional<std::int64_t> int_member(const Json& value) {
    if (value.is_number_integer()) {
        return value.get<std::int64_t>();
    }
    return std::nullopt;
}

// Receives members and events from the tokenizer and feeds the summary.
class ImportSink : public TraceSink {
public:
    explicit ImportSink(const std::string& path) : path_(path) {}

    void on_member(std::string_view key, std::string_view raw_value) override {
        Json value;
        std::string scratch;
        std::string key_scratch;
        raw_value = repairs.repaired(raw_value, scratch);
        key = repairs.repaired(key, key_scratch);
        try {
            value = parse_json_strict(raw_value, JsonLimits{TraceTokenizer::kMaxItemBytes, 64},
                                      path_ + ":" + std::string(key));
        } catch (const Error& e) {
            throw Error(
                ErrorCode::malformed_input,
                "top-level member '" + std::string(key) + "' is not valid JSON: " + e.what(),
                {{"member", std::string(key)}});
        }
        TraceIdentity& id = identity;
        if (key == "schemaVersion") {
            saw_schema_version = true;
            id.schema_version = int_member(value).value_or(-1);
        } else if (key == "deviceProperties") {
            id.device_properties = value;
        } else if (key == "cuda_runtime_version") {
            id.cuda_runtime_version = int_member(value);
        } else if (key == "cuda_driver_version") {
            id.cuda_driver_version = int_member(value);
        } else if (key == "cupti_version") {
            id.cupti_version = int_member(value);
        } else if (key == "distributedInfo") {
            id.distributed_info = value;
            if (value.is_object()) {
                id.rank = int_member(value.value("rank", Json()));
                id.world_size = int_member(value.value("world_size", Json()));
            }
        } else if (key == "trace_id" && value.is_string()) {
            id.trace_id = value.get<std::string>();
        } else if (key == "baseTimeNanoseconds") {
            id.base_time_ns = int_member(value);
        } else if (key == "displayTimeUnit" && value.is_string()) {
            id.display_time_unit = value.get<std::string>();
        } else {
            id.other_members.emplace_back(key);
        }
    }

    void on_event(std::string_view raw_event, bool ascii) override {
        if (!ascii && !is_valid_utf8(raw_event)) {
            // Latin-1 bytes in a name or an arg: repaired to U+FFFD (the JSON stays valid, the
            // bytes were inside strings) and counted for the notes; simdjson refuses bad UTF-8.
            const std::string_view fixed = repairs.repaired(raw_event, repaired_event_);
            const std::size_t length = fixed.size();
            repaired_event_.append(TraceTokenizer::kPadding, ' ');
            parser_.parse(std::string_view(repaired_event_.data(), length), index_, event_);
        } else {
            parser_.parse(raw_event, index_, event_);
        }
        builder.add(event_, index_);
        ++index_;
    }

    TraceIdentity identity;
    bool saw_schema_version = false;
    TraceSummaryBuilder builder;
    Utf8Repairs repairs;

private:
    std::string repaired_event_;
    std::string path_;
    TraceEventParser parser_;
    TraceEvent event_;
    std::uint64_t index_ = 0;
};

}  // namespace

Json TraceIdentity::to_json() const {
    const auto opt = [](const std::optional<std::int64_t>& v) { return v ? Json(*v) : Json(); };
    return Json{{"schema_version", schema_version},
                {"device_properties", device_properties},
                {"cuda_runtime_version", opt(cuda_runtime_version)},
                {"cuda_driver_version", opt(cuda_driver_version)},
                {"cupti_version", opt(cupti_version)},
                {"distributed_info", distributed_info},
                {"rank", opt(rank)},
                {"world_size", opt(world_size)},
                {"trace_id", trace_id},
                {"base_time_ns", opt(base_time_ns)},
                {"display_time_unit", display_time_unit},
                {"other_members", other_members}};
}

std::vector<Fact> KinetoTrace::kernel_facts() const {
    std::vector<Fact> facts;
    for (const auto& [name, s] : summary.kernels) {
        Scope scope;
        scope.kernel = name;
        facts.push_back(Fact{"kernel.instances", static_cast<double>(s.count), BaseUnit::count,
                             scope, "kineto:kernel"});
        facts.push_back(Fact{"kernel.duration.total", static_cast<double>(s.total_ns), BaseUnit::ns,
                             scope, "kineto:kernel.dur"});
        facts.push_back(
            Fact{"kernel.duration.mean", s.mean_ns(), BaseUnit::ns, scope, "kineto:kernel.dur"});
    }
    return facts;
}

Json KinetoTrace::to_json() const {
    Json facts = Json::array();
    for (const Fact& f : kernel_facts()) {
        facts.push_back(fact_to_json(f));
    }
    return Json{{"path", path},
                {"file_bytes", file_bytes},
                {"gzip", gzip},
                {"source", source_to_json(source)},
                {"identity", identity.to_json()},
                {"summary", summary.to_json()},
                {"notes", notes},
                {"facts", facts}};
}

namespace {

// The notes the summary's counts call for: GPU-looking rows of unmodeled categories (refused when
// they are the only GPU rows), the range profiler's rows, the torch 1.8-1.9 spelling, rounded
// timestamps.
std::vector<std::string> summary_notes(const TraceSummary& s, const std::string& path) {
    std::vector<std::string> notes;
    const bool gpu_modelled = !s.kernels.empty() || !s.memcpy.empty() || !s.memset.empty();
    if (!s.unmodeled_gpu_categories.empty()) {
        std::string list;
        std::int64_t total = 0;
        for (const auto& [cat, n] : s.unmodeled_gpu_categories) {
            list += (list.empty() ? "'" : ", '") + cat + "' (" + std::to_string(n) + ")";
            total += n;
        }
        if (!gpu_modelled && s.gpu_activity_rows > 0) {
            // Principle 4: an empty GPU table would be a silent miscount. Refuse instead.
            throw Error(ErrorCode::unsupported_format,
                        path + " holds " + std::to_string(total) +
                            " events that look like GPU work (a correlation id with a device or "
                            "stream) under categories cko does not model: " +
                            list +
                            "; no kernel, memcpy or memset category it knows is present, so a "
                            "summary would report an idle GPU. Categories read: see "
                            "docs/profile-traces.md",
                        {{"path", path},
                         {"field", "cat"},
                         {"gpu_like_categories", s.unmodeled_gpu_categories}});
        }
        notes.push_back(std::to_string(total) +
                        " GPU-looking events under categories cko does not model are not in "
                        "the kernel, stream or memory tables: " +
                        list);
    }
    if (s.profiler_range_rows > 0) {
        // libkineto's CuptiRangeProfiler gives each range an even share of the profiling span as
        // ts/dur ("the actual times do not really matter here"), and it runs only without the
        // CUDA activity tracer: so no kernel time can be read from this trace.
        notes.push_back(
            std::to_string(s.profiler_range_rows) + " CUPTI range-profiler rows (cat " +
            "'cuda_profiler_range') for " + std::to_string(s.profiler_ranges.size()) +
            " names are counted in profiler_ranges, not as kernels: their ts/dur are the "
            "profiling span split evenly among the ranges, not GPU time" +
            (gpu_modelled ? std::string()
                          : std::string("; this trace has no kernel timing: record with "
                                        "ProfilerActivity.CUDA (without the range profiler) for "
                                        "kernel durations")));
    }
    if (s.camel_case_events > 0) {
        notes.push_back(
            "categories spelled as torch 1.8-1.9 wrote them (Kernel, Memcpy, Memset, Runtime, "
            "Operator, ...): read as kernel, gpu_memcpy, gpu_memset, cuda_runtime, cpu_op");
    }
    if (s.rounded_timestamps > 0) {
        notes.push_back(std::to_string(s.rounded_timestamps) +
                        " ts/dur values had more than 3 fraction digits of microseconds "
                        "(sub-nanosecond, e.g. a trace rewritten with float arithmetic); "
                        "each was rounded to the nearest nanosecond");
    }
    return notes;
}

}  // namespace

KinetoTrace import_kineto_trace(const std::filesystem::path& path,
                                const std::string& tool_version) {
    ImportSink sink(path.string());
    TraceTokenizer tokenizer(sink);
    const ReadResult read = stream_trace_file(path, tokenizer);
    if (!sink.saw_schema_version) {
        throw Error(ErrorCode::missing_field, path.string() + " has no top-level schemaVersion",
                    {{"path", path.string()}, {"field", "schemaVersion"}});
    }
    if (sink.identity.schema_version != 1) {
        throw Error(ErrorCode::unsupported_format,
                    path.string() + " has schemaVersion " +
                        std::to_string(sink.identity.schema_version) + "; cko reads version 1",
                    {{"path", path.string()}, {"schema_version", sink.identity.schema_version}});
    }
    if (!tokenizer.saw_trace_events()) {
        throw Error(ErrorCode::missing_field, path.string() + " has no traceEvents array",
                    {{"path", path.string()}, {"field", "traceEvents"}});
    }
    KinetoTrace trace;
    trace.summary = sink.builder.finish();
    const TraceSummary& s = trace.summary;
    trace.notes = summary_notes(s, path.string());
    if (const std::string note = sink.repairs.note(); !note.empty()) {
        trace.notes.push_back(note);
    }
    trace.path = path.string();
    trace.file_bytes = read.file_bytes;
    trace.gzip = read.gzip;
    trace.source = Source{read.sha256, "kineto", tool_version,
                          s.camel_case_events > 0 ? kDialectCamelCase : kDialect, kParserVersion};
    trace.identity = std::move(sink.identity);
    return trace;
}

std::vector<KinetoTrace> import_kineto_traces(const std::vector<std::filesystem::path>& paths,
                                              const std::string& tool_version) {
    std::vector<KinetoTrace> traces;
    traces.reserve(paths.size());
    for (const auto& path : paths) {
        traces.push_back(import_kineto_trace(path, tool_version));
    }
    if (traces.size() > 1) {
        std::set<std::int64_t> ranks;
        for (const auto& t : traces) {
            if (!t.identity.rank) {
                throw Error(ErrorCode::missing_field,
                            t.path +
                                " has no distributedInfo.rank; with several traces each "
                                "must say which rank it is",
                            {{"path", t.path}, {"field", "distributedInfo.rank"}});
            }
            if (!ranks.insert(*t.identity.rank).second) {
                throw Error(ErrorCode::invalid_argument,
                            "two traces claim rank " + std::to_string(*t.identity.rank),
                            {{"path", t.path}, {"rank", *t.identity.rank}});
            }
        }
        std::stable_sort(traces.begin(), traces.end(), [](const auto& a, const auto& b) {
            return *a.identity.rank < *b.identity.rank;
        });
    }
    return traces;
}

Json kineto_traces_to_json(const std::vector<KinetoTrace>& traces) {
    Json out = Json{{"format_version", "cko/profile-torch-v1"}, {"traces", Json::array()}};
    for (const auto& t : traces) {
        out["traces"].push_back(t.to_json());
    }
    return out;
}

}  // namespace cko::profile::kineto
