// The table of Kineto category spellings, current and torch 1.8-1.9 (CamelCase).
#include "cko/profile/kineto/event_category.hpp"

#include <array>
#include <string>

namespace cko::profile::kineto {
namespace {

struct Spelling {
    std::string_view text;
    EventCategory category;
    CategorySpelling spelling;
};

constexpr std::array kSpellings = {
    Spelling{"kernel", EventCategory::kernel, CategorySpelling::current},
    Spelling{"gpu_memcpy", EventCategory::gpu_memcpy, CategorySpelling::current},
    Spelling{"gpu_memset", EventCategory::gpu_memset, CategorySpelling::current},
    Spelling{"cuda_runtime", EventCategory::cuda_runtime, CategorySpelling::current},
    Spelling{"cuda_driver", EventCategory::cuda_driver, CategorySpelling::current},
    Spelling{"cpu_op", EventCategory::cpu_op, CategorySpelling::current},
    Spelling{"user_annotation", EventCategory::user_annotation, CategorySpelling::current},
    Spelling{"gpu_user_annotation", EventCategory::gpu_user_annotation, CategorySpelling::current},
    // libkineto's CuptiRangeProfiler (ActivityType CUDA_PROFILER_RANGE): counters per range.
    Spelling{"cuda_profiler_range", EventCategory::cuda_profiler_range, CategorySpelling::current},
    // torch 1.8-1.9 (libkineto before its ActivityType names were lower-cased).
    Spelling{"Kernel", EventCategory::kernel, CategorySpelling::camel_case},
    Spelling{"Memcpy", EventCategory::gpu_memcpy, CategorySpelling::camel_case},
    Spelling{"Memset", EventCategory::gpu_memset, CategorySpelling::camel_case},
    Spelling{"Runtime", EventCategory::cuda_runtime, CategorySpelling::camel_case},
    Spelling{"Driver", EventCategory::cuda_driver, CategorySpelling::camel_case},
    Spelling{"Operator", EventCategory::cpu_op, CategorySpelling::camel_case},
    Spelling{"User annotation", EventCategory::user_annotation, CategorySpelling::camel_case},
    Spelling{"GPU user annotation", EventCategory::gpu_user_annotation,
             CategorySpelling::camel_case},
};

}  // namespace

CategoryMeaning category_meaning(std::string_view cat) noexcept {
    for (const Spelling& s : kSpellings) {
        if (s.text == cat) {
            return CategoryMeaning{s.category, s.spelling};
        }
    }
    return CategoryMeaning{};
}

bool looks_like_gpu_activity(const TraceEvent& event) noexcept {
    return event.correlation.has_value() && (event.stream.has_value() || event.device.has_value());
}

bool category_names_gpu(std::string_view cat) noexcept {
    std::string lower(cat.substr(0, 64));
    for (char& c : lower) {
        c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    for (const std::string_view word : {"gpu", "cuda", "kernel", "memcpy", "memset"}) {
        if (lower.find(word) != std::string::npos) {
            return true;
        }
    }
    return false;
}

bool is_launch_flow(const TraceEvent& event) noexcept {
    return event.cat == "ac2g" || (event.cat == "async" && event.name == "launch");
}

}  // namespace cko::profile::kineto
