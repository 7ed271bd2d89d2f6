// Kineto → timeline: the category table decides each event's lane and interval category.
#include "cko/profile/kineto/timeline_feeder.hpp"

#include "cko/profile/kineto/event_category.hpp"
#include "cko/profile/kineto/kineto_trace.hpp"
#include "cko/profile/kineto/trace_event.hpp"
#include "cko/profile/kineto/trace_reader.hpp"
#include "cko/profile/kineto/trace_tokenizer.hpp"
#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace cko::profile::kineto {
namespace {

namespace tl = timeline;

tl::Category memcpy_category(std::string_view name) {
    if (name.find("HtoD") != std::string_view::npos) {
        return tl::Category::memcpy_h2d;
    }
    if (name.find("DtoH") != std::string_view::npos) {
        return tl::Category::memcpy_d2h;
    }
    if (name.find("DtoD") != std::string_view::npos) {
        return tl::Category::memcpy_d2d;
    }
    if (name.find("PtoP") != std::string_view::npos) {
        return tl::Category::memcpy_p2p;
    }
    return tl::Category::memcpy_other;
}

class FeedSink : public TraceSink {
public:
    FeedSink(const std::string& path, tl::TimelineSink& out) : path_(path), out_(out) {
        source_ = out_.begin_source(path);
    }

    void on_member(std::string_view key, std::string_view raw_value) override {
        // Only the two members the timeline needs are parsed; the rest is not read.
        if (key != "schemaVersion" && key != "distributedInfo") {
            return;
        }
        std::string scratch;
        raw_value = repairs.repaired(raw_value, scratch);
        Json value;
        try {
            value = parse_json_strict(raw_value, JsonLimits{TraceTokenizer::kMaxItemBytes, 64},
                                      path_ + ":" + std::string(key));
        } catch (const Error& e) {
            throw Error(
                ErrorCode::malformed_input,
                "top-level member '" + std::string(key) + "' is not valid JSON: " + e.what(),
                {{"member", std::string(key)}});
        }
        if (key == "schemaVersion") {
            saw_schema_version = true;
            schema_version = value.is_number_integer() ? value.get<std::int64_t>() : -1;
        } else if (value.is_object() && value.contains("rank") &&
                   value["rank"].is_number_integer()) {
            rank = value["rank"].get<std::int64_t>();
        }
    }

    void on_event(std::string_view raw_event, bool ascii) override {
        if (!ascii && !is_valid_utf8(raw_event)) {
            const std::string_view fixed = repairs.repaired(raw_event, repaired_event_);
            const std::size_t length = fixed.size();
            repaired_event_.append(TraceTokenizer::kPadding, ' ');
            parser_.parse(std::string_view(repaired_event_.data(), length), index_, event_);
        } else {
            parser_.parse(raw_event, index_, event_);
        }
        add(event_);
        ++index_;
    }

    void finish() { out_.end_source(source_, rank); }

    bool saw_schema_version = false;
    std::int64_t schema_version = 0;
    std::optional<std::int64_t> rank;
    std::int64_t intervals = 0;
    std::int64_t gpu_intervals = 0;
    std::int64_t camel_case = 0;
    // Left-out rows that look like GPU work (see event_category.hpp), by category.
    std::map<std::string, std::int64_t, std::less<>> gpu_like_left_out;
    std::map<std::string, std::int64_t, std::less<>> left_out;  // why → count
    Utf8Repairs repairs;

private:
    void add(const TraceEvent& e) {
        if (e.ph != "X") {
            return;
        }
        if (!e.ts_ns || !e.dur_ns) {
            throw Error(ErrorCode::missing_field,
                        "complete event #" + std::to_string(index_) + " ('" + std::string(e.name) +
                            "') lacks ts or dur",
                        {{"event_index", index_}, {"field", !e.ts_ns ? "ts" : "dur"}});
        }
        if (*e.dur_ns < 0) {
            ++left_out["negative durations"];
            return;
        }
        const CategoryMeaning meaning = category_meaning(e.cat);
        camel_case += meaning.spelling == CategorySpelling::camel_case;
        const std::optional<Placed> placed = place(e, meaning.category);
        if (!placed) {
            return;
        }
        const bool gpu = placed->gpu;
        tl::LaneKey key;
        if (gpu) {
            key = tl::LaneKey{tl::LaneKind::gpu_stream, e.device.value_or(e.pid.value_or(-1)),
                              e.stream.value_or(e.tid.value_or(-1))};
        } else {
            if (!e.pid || !e.tid) {
                ++left_out["CPU rows without integer pid/tid"];
                return;
            }
            key = tl::LaneKey{tl::LaneKind::cpu_thread, *e.pid, *e.tid};
        }
        tl::Interval iv;
        iv.start_ns = *e.ts_ns;
        iv.end_ns = *e.ts_ns + *e.dur_ns;
        iv.correlation = e.correlation.value_or(-1);
        iv.lane = out_.lane(source_, key);
        iv.name = placed->name ? *placed->name : out_.name(e.name);
        iv.category = placed->category;
        out_.interval(iv);
        ++intervals;
        gpu_intervals += gpu ? 1 : 0;
    }

    // Where a complete event goes on the timeline: its category, whether it is GPU work, and its
    // name where the category needed it interned; none for the rows the timeline leaves out
    // (each counted by why).
    struct Placed {
        tl::Category category = tl::Category::cpu_op;
        bool gpu = false;
        std::optional<tl::NameId> name;
    };
    std::optional<Placed> place(const TraceEvent& e, EventCategory category) {
        Placed p;
        switch (category) {
        case EventCategory::kernel:
            p.name = out_.name(e.name);
            p.category = kernel_category(*p.name, e.name);
            p.gpu = true;
            break;
        case EventCategory::gpu_memcpy:
            p.category = memcpy_category(e.name);
            p.gpu = true;
            break;
        case EventCategory::gpu_memset:
            p.category = tl::Category::memset;
            p.gpu = true;
            break;
        case EventCategory::cuda_runtime:
            p.category = tl::api_call_category(e.name, tl::Category::cuda_runtime);
            break;
        case EventCategory::cuda_driver:
            p.category = tl::api_call_category(e.name, tl::Category::cuda_driver);
            break;
        case EventCategory::cpu_op:
            p.category = tl::Category::cpu_op;
            break;
        case EventCategory::user_annotation:
            p.category = tl::Category::annotation;
            break;
        case EventCategory::gpu_user_annotation:
            ++left_out["gpu_user_annotation rows (GPU-side copies of CPU ranges)"];
            return std::nullopt;
        case EventCategory::cuda_profiler_range:
            ++left_out
                ["cuda_profiler_range rows (CUPTI range-profiler counters; their ts/dur "
                 "split the profiling span evenly, not GPU time)"];
            ++gpu_like_left_out["cuda_profiler_range"];
            return std::nullopt;
        case EventCategory::other:
            ++left_out[e.cat == "python_function"
                           ? std::string("python_function rows")
                           : "rows of category '" + std::string(e.cat) + "'"];
            if (looks_like_gpu_activity(e) || category_names_gpu(e.cat)) {
                ++gpu_like_left_out[std::string(e.cat)];
            }
            return std::nullopt;
        }
        return p;
    }

    // A kernel's category is a function of its name, looked at once per name (names run to
    // hundreds of bytes and repeat for every launch).
    tl::Category kernel_category(tl::NameId name, std::string_view text) {
        if (name >= kernel_category_.size()) {
            kernel_category_.resize(name + 1, kUnknown);
        }
        std::uint8_t& known = kernel_category_[name];
        if (known == kUnknown) {
            known = static_cast<std::uint8_t>(tl::kernel_category(text));
        }
        return static_cast<tl::Category>(known);
    }
    static constexpr std::uint8_t kUnknown = 0xff;
    std::vector<std::uint8_t> kernel_category_;  // by name id

    std::string path_;
    tl::TimelineSink& out_;
    tl::SourceId source_ = 0;
    std::string repaired_event_;
    TraceEventParser parser_;
    TraceEvent event_;
    std::uint64_t index_ = 0;
};

}  // namespace

KinetoTimelineFeed feed_kineto_timeline(const std::filesystem::path& path,
                                        timeline::TimelineSink& sink,
                                        const std::string& tool_version) {
    FeedSink feed(path.string(), sink);
    TraceTokenizer tokenizer(feed);
    const ReadResult read = stream_trace_file(path, tokenizer);
    if (!feed.saw_schema_version) {
        throw Error(ErrorCode::missing_field, path.string() + " has no top-level schemaVersion",
                    {{"path", path.string()}, {"field", "schemaVersion"}});
    }
    if (feed.schema_version != 1) {
        throw Error(ErrorCode::unsupported_format,
                    path.string() + " has schemaVersion " + std::to_string(feed.schema_version) +
                        "; cko reads version 1",
                    {{"path", path.string()}, {"schema_version", feed.schema_version}});
    }
    if (!tokenizer.saw_trace_events()) {
        throw Error(ErrorCode::missing_field, path.string() + " has no traceEvents array",
                    {{"path", path.string()}, {"field", "traceEvents"}});
    }
    feed.finish();
    KinetoTimelineFeed out;
    out.source = Source{read.sha256, "kineto", tool_version,
                        feed.camel_case > 0 ? kDialectCamelCase : kDialect, kParserVersion};
    out.file_bytes = read.file_bytes;
    out.rank = feed.rank;
    out.intervals = feed.intervals;
    for (const auto& [why, n] : feed.left_out) {
        out.notes.push_back(path.string() + ": " + std::to_string(n) + " " + why +
                            " are not in the timeline");
    }
    if (feed.gpu_intervals == 0 && !feed.gpu_like_left_out.empty()) {
        // Without this the map shows a GPU idle from end to end and attributes that idle time
        // to whatever the CPU did, a verdict on rows it never placed.
        std::int64_t total = 0;
        std::string list;
        for (const auto& [cat, n] : feed.gpu_like_left_out) {
            total += n;
            list += (list.empty() ? "" : ", ") + cat + ": " + std::to_string(n);
        }
        out.notes.push_back(
            path.string() + ": no GPU interval (no kernel, memcpy or memset row), but " +
            std::to_string(total) + " GPU-like rows were left out (" + list +
            "): the map's GPU idle time and its attribution describe rows cko could not place "
            "on the GPU, not an idle GPU");
    }
    if (const std::string note = feed.repairs.note(); !note.empty()) {
        out.notes.push_back(path.string() + ": " + note);
    }
    return out;
}

}  // namespace cko::profile::kineto
