// What a Kineto event category means, whichever torch release spelled it, and what GPU work looks
// like.
#pragma once

#include "cko/profile/kineto/trace_event.hpp"
#include "cko/util/closed_enum.hpp"

#include <string_view>

namespace cko::profile::kineto {

#define CKO_KINETO_CATEGORIES(X) \
    X(kernel)                    \
    X(gpu_memcpy)                \
    X(gpu_memset)                \
    X(cuda_runtime)              \
    X(cuda_driver)               \
    X(cpu_op)                    \
    X(user_annotation)           \
    X(gpu_user_annotation)       \
    X(cuda_profiler_range)       \
    X(other)
CKO_CLOSED_ENUM(EventCategory, CKO_KINETO_CATEGORIES, category_name, category_from_name)
#undef CKO_KINETO_CATEGORIES

// Which torch generation's spelling a category used.
enum class CategorySpelling {
    current,     // torch 1.10+: "kernel", "gpu_memcpy", "cuda_runtime", "cpu_op", ...
    camel_case,  // torch 1.8-1.9: "Kernel", "Memcpy", "Memset", "Runtime", "Operator", ...
    unknown,
};

struct CategoryMeaning {
    EventCategory category = EventCategory::other;
    CategorySpelling spelling = CategorySpelling::unknown;
};

// Looks `cat` up in the one table of spellings (see docs/profile-traces.md).
[[nodiscard]] CategoryMeaning category_meaning(std::string_view cat) noexcept;

// Whether a complete event carries what Kineto writes for GPU activity whatever its category:
// a CUPTI correlation id together with the device or stream it ran on. Runtime/driver calls
// carry a correlation but no stream or device; CPU ops carry neither.
[[nodiscard]] bool looks_like_gpu_activity(const TraceEvent& event) noexcept;

// Whether a category cko does not model names the GPU side ("gpu", "cuda", "kernel", "memcpy",
// "memset" in any case, e.g. "cuda_sync", "gpu_hw_counter"): rows a reader would take for GPU
// work, so they are counted, never dropped silently.
[[nodiscard]] bool category_names_gpu(std::string_view cat) noexcept;

// Whether a flow event links a launch to its GPU activity: "ac2g" (torch 1.10+), or the
// "async"/"launch" pair of torch 1.8-1.9.
[[nodiscard]] bool is_launch_flow(const TraceEvent& event) noexcept;

}  // namespace cko::profile::kineto
