// Triton cache reading: kernel metadata JSON (Triton 2.x and 3.x shapes), its artifacts, its cubin.
#include "cko/compiler/triton_cache.hpp"

#include "cko/compiler/sass_signatures.hpp"
#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::compiler {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMetadataCap = std::uint64_t{4} << 20;
constexpr std::string_view kStages[] = {"source", "ttir",  "ttgir",  "llir",
                                        "ptx",    "cubin", "amdgcn", "hsaco"};

std::optional<std::int64_t> integer_field(const Json& meta, const char* key,
                                          const std::string& file, bool required) {
    const auto it = meta.find(key);
    if (it == meta.end() || it->is_null()) {
        if (required) {
            throw Error(ErrorCode::missing_field,
                        fmt::format("{}: Triton metadata without \"{}\"", file, key),
                        Json{{"path", file}, {"field", key}});
        }
        return std::nullopt;
    }
    if (!it->is_number_integer()) {
        throw Error(ErrorCode::malformed_input,
                    fmt::format("{}: \"{}\" must be an integer, got {}", file, key, it->dump()),
                    Json{{"path", file}, {"field", key}});
    }
    return it->get<std::int64_t>();
}

std::string string_field(const Json& meta, const char* key) {
    const auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? valid_utf8(it->get<std::string>()) : std::string();
}

// Triton 3.x: "target": {"backend": "cuda", "arch": 90, "warp_size": 32}; 2.x: "target": "cuda:90"
// or a top-level "arch"/"compute_capability".
void read_target(const Json& meta, TritonKernel& k) {
    const auto t = meta.find("target");
    Json arch;
    if (t != meta.end() && t->is_object()) {
        k.backend = string_field(*t, "backend");
        arch = t->value("arch", Json());
        if (const auto w = t->find("warp_size"); w != t->end() && w->is_number_integer()) {
            k.warp_size = w->get<std::int64_t>();
        }
    } else if (t != meta.end() && t->is_string()) {
        const std::string s = t->get<std::string>();
        const std::size_t colon = s.find(':');
        k.backend = s.substr(0, colon);
        if (colon != std::string::npos) {
            arch = s.substr(colon + 1);
        }
    } else {
        arch = meta.value("compute_capability", meta.value("arch", Json()));
    }
    if (arch.is_number_integer()) {
        k.arch = fmt::format("sm_{}", arch.get<std::int64_t>());
    } else if (arch.is_string()) {
        const std::string a = arch.get<std::string>();
        const bool digits = !a.empty() && std::all_of(a.begin(), a.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
        k.arch = digits ? "sm_" + a : valid_utf8(a);
    }
    if (k.warp_size == std::nullopt) {
        if (const auto w = meta.find("warp_size"); w != meta.end() && w->is_number_integer()) {
            k.warp_size = w->get<std::int64_t>();
        }
    }
}

void read_ptx_header(const fs::path& ptx, TritonKernel& k) {
    const std::string text = valid_utf8(read_file_capped(ptx, std::uint64_t{64} << 20));
    for_each_line(text, [&](std::string_view line, std::size_t) {
        const std::string_view s = trim(line);
        if (k.ptx_target.empty() && s.starts_with(".target")) {
            k.ptx_target = std::string(trim(s.substr(7)));
        } else if (k.ptx_version.empty() && s.starts_with(".version")) {
            k.ptx_version = std::string(trim(s.substr(8)));
        }
    });
}

void add_fact(TritonKernel& k, const char* id, const std::optional<std::int64_t>& v,
              profile::BaseUnit unit) {
    if (!v) {
        return;
    }
    profile::Fact f;
    f.id = id;
    f.value = static_cast<double>(*v);
    f.unit = unit;
    f.scope.kernel = k.name;
    k.facts.push_back(std::move(f));
}

TritonKernel read_kernel(const fs::path& root, const fs::path& meta_path, const Json& meta,
                         const TritonOptions& options) {
    const std::string rel = fs::relative(meta_path, root).generic_string();
    TritonKernel k;
    k.name = string_field(meta, "name");
    k.metadata_path = rel;
    k.directory = fs::relative(meta_path.parent_path(), root).generic_string();
    k.hash = string_field(meta, "hash");
    k.num_warps = integer_field(meta, "num_warps", rel, true);
    k.num_stages = integer_field(meta, "num_stages", rel, false);
    k.num_ctas = integer_field(meta, "num_ctas", rel, false);
    k.shared_bytes = integer_field(meta, "shared", rel, false);
    k.maxnreg = integer_field(meta, "maxnreg", rel, false);
    k.triton_version = string_field(meta, "triton_version");
    read_target(meta, k);
    const fs::path stem = meta_path.parent_path() / meta_path.stem();
    for (std::string_view stage : kStages) {
        fs::path p = stem;
        p += "." + std::string(stage);
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) {
            continue;
        }
        TritonArtifact a;
        a.stage = std::string(stage);
        a.path = fs::relative(p, root).generic_string();
        a.size_bytes = fs::file_size(p, ec);
        a.sha256 = sha256_file_hex(p);
        k.artifacts.push_back(std::move(a));
        if (stage == "ptx") {
            read_ptx_header(p, k);
        }
        if (stage == "cubin") {
            if (!options.disassemble) {
                k.sass_note = "cubin not disassembled (--no-sass)";
            } else if (find_cuda_tool(options.sass.cuobjdump).empty()) {
                k.sass_note = fmt::format(
                    "cubin not disassembled: {} not found (install the CUDA "
                    "toolkit or pass --cuobjdump PATH)",
                    options.sass.cuobjdump);
            } else {
                k.sass = load_sass(p, options.sass);
            }
        }
    }
    if (k.sass_note.empty() && !k.sass) {
        k.sass_note = "no cubin in the cache entry";
    }
    using U = profile::BaseUnit;
    add_fact(k, "triton.num_warps", k.num_warps, U::count);
    add_fact(k, "triton.num_stages", k.num_stages, U::count);
    add_fact(k, "triton.num_ctas", k.num_ctas, U::count);
    add_fact(k, "triton.shared_bytes", k.shared_bytes, U::byte);
    return k;
}

Json optional_json(const std::optional<std::int64_t>& v) {
    return v ? Json(*v) : Json();
}

}  // namespace

TritonCache read_triton_cache(const fs::path& dir, const TritonOptions& options) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("'{}' is not a directory: pass a Triton cache directory "
                                "($TRITON_CACHE_DIR, by default ~/.triton/cache)",
                                dir.string()),
                    Json{{"path", dir.string()}});
    }
    TritonCache cache;
    cache.directory = dir.string();
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(
             dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) {
            break;
        }
        if (it.depth() > 4) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec) && it->path().extension() == ".json") {
            files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        if (f.filename().string().starts_with("__grp__")) {
            ++cache.other_json_files;
            continue;
        }
        const Json meta = read_json_file(f, JsonLimits{kMetadataCap, 64});
        if (!meta.is_object() || !meta.contains("name") || !meta.contains("num_warps")) {
            ++cache.other_json_files;
            continue;
        }
        cache.kernels.push_back(read_kernel(dir, f, meta, options));
    }
    if (cache.kernels.empty()) {
        throw Error(
            ErrorCode::missing_field,
            fmt::format("no Triton kernel metadata (a JSON with \"name\" and \"num_warps\") "
                        "under '{}': pass the cache directory Triton wrote "
                        "($TRITON_CACHE_DIR, by default ~/.triton/cache) after a run",
                        dir.string()),
            Json{{"path", dir.string()}});
    }
    std::stable_sort(cache.kernels.begin(), cache.kernels.end(),
                     [](const TritonKernel& a, const TritonKernel& b) {
                         return std::tie(a.name, a.directory) < std::tie(b.name, b.directory);
                     });
    return cache;
}

Json triton_cache_to_json(const TritonCache& cache) {
    Json kernels = Json::array();
    for (const TritonKernel& k : cache.kernels) {
        Json artifacts = Json::array();
        for (const TritonArtifact& a : k.artifacts) {
            artifacts.push_back(Json{{"stage", a.stage},
                                     {"path", a.path},
                                     {"size_bytes", a.size_bytes},
                                     {"sha256", a.sha256}});
        }
        Json facts = Json::array();
        for (const profile::Fact& f : k.facts) {
            facts.push_back(profile::fact_to_json(f));
        }
        Json sass;
        if (k.sass) {
            sass = sass_report_to_json(*k.sass);
        }
        kernels.push_back(Json{{"name", k.name},
                               {"directory", k.directory},
                               {"metadata", k.metadata_path},
                               {"hash", k.hash},
                               {"num_warps", optional_json(k.num_warps)},
                               {"num_stages", optional_json(k.num_stages)},
                               {"num_ctas", optional_json(k.num_ctas)},
                               {"shared_bytes", optional_json(k.shared_bytes)},
                               {"maxnreg", optional_json(k.maxnreg)},
                               {"backend", k.backend},
                               {"arch", k.arch},
                               {"warp_size", optional_json(k.warp_size)},
                               {"triton_version", k.triton_version},
                               {"ptx_target", k.ptx_target},
                               {"ptx_version", k.ptx_version},
                               {"artifacts", artifacts},
                               {"sass", sass},
                               {"sass_note", k.sass_note},
                               {"facts", facts}});
    }
    return Json{{"format_version", "cko/triton-cache-v1"},
                {"evidence_stage", "compiler_metadata"},
                {"directory", cache.directory},
                {"kernels", kernels},
                {"other_json_files", cache.other_json_files}};
}

}  // namespace cko::compiler
