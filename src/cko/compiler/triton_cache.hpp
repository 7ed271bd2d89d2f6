// `cko triton DIR`: the kernels of a Triton cache directory (metadata JSON +
// ttir/ttgir/llir/ptx/cubin).
#pragma once

#include "cko/compiler/sass_input.hpp"
#include "cko/profile/fact.hpp"
#include "cko/util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::compiler {

struct TritonArtifact {
    std::string stage;  // ttir, ttgir, llir, ptx, cubin, amdgcn, hsaco, source
    std::string path;   // relative to the cache directory
    std::uint64_t size_bytes = 0;
    std::string sha256;
};

struct TritonKernel {
    std::string name;
    std::string directory;  // relative to the cache directory (the cache key)
    std::string metadata_path;
    std::string hash;
    std::optional<std::int64_t> num_warps;
    std::optional<std::int64_t> num_stages;
    std::optional<std::int64_t> num_ctas;
    std::optional<std::int64_t> shared_bytes;
    std::optional<std::int64_t> maxnreg;
    std::string backend;  // "cuda", "hip"
    std::string arch;     // "sm_90" from target.arch 90, or the backend's own spelling ("gfx942")
    std::optional<std::int64_t> warp_size;
    std::string triton_version;
    std::string
        ptx_target;  // `.target` of the PTX (sm_90a when Triton used arch-specific features)
    std::string ptx_version;  // `.version`
    std::vector<TritonArtifact> artifacts;
    std::optional<SassReport> sass;  // the cubin through the SASS path
    std::string sass_note;           // why there is no SASS summary, when there is none
    std::vector<profile::Fact> facts;
};

struct TritonCache {
    std::string directory;
    std::vector<TritonKernel> kernels;  // sorted by name, then directory
    std::size_t other_json_files = 0;   // JSON that is not kernel metadata (__grp__ files ...)
};

struct TritonOptions {
    bool disassemble = true;  // run cuobjdump on cubins when it exists
    SassInputOptions sass;
};

// Throws not_found (not a directory) or missing_field (no kernel metadata under it), with the fix;
// malformed_input naming the file and field for metadata whose num_warps is not an integer.
[[nodiscard]] TritonCache read_triton_cache(const std::filesystem::path& dir,
                                            const TritonOptions& options);

// {"format_version":"cko/triton-cache-v1", "kernels":[...]}
[[nodiscard]] Json triton_cache_to_json(const TritonCache& cache);

}  // namespace cko::compiler
