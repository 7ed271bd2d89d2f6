// `cko ptxas LOG`, `cko sass FILE`, `cko sass diff A B`, `cko triton DIR`: compiler evidence verbs
// (with --root the first, second and last keep their document as a profile record).
#include "cko/compiler/ptxas_log.hpp"
#include "cko/compiler/sass_diff.hpp"
#include "cko/compiler/sass_input.hpp"
#include "cko/compiler/sass_signatures.hpp"
#include "cko/compiler/text_input.hpp"
#include "cko/compiler/triton_cache.hpp"
#include "cko/util/demangled.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/text_table.hpp"
#include "cko/verbs/evidence.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace cko::verbs {
namespace {

using compiler::PtxasFunction;
using compiler::SassReport;

void require_value(const std::string& value, const char* name, const char* usage) {
    if (value.empty()) {
        throw Error(ErrorCode::usage, fmt::format("{} is required: {}", name, usage));
    }
}

std::string shorten(const std::string& name, std::size_t width) {
    const std::string base(without_parameter_list(name));
    return base.size() > width ? base.substr(0, width - 1) + "~" : base;
}

std::string opt_text(const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : "-";
}

std::string ptxas_text(const compiler::PtxasReport& r) {
    std::string out =
        fmt::format("{}: {} functions (sha256 {})\n",
                    r.source.dialect == "cuobjdump-res-usage" ? "cuobjdump -res-usage" : "ptxas -v",
                    r.functions.size(), r.source.report_sha256.substr(0, 12));
    const TextTable table({{28},
                           {8},
                           {5, Align::right},
                           {4, Align::right},
                           {6, Align::right},
                           {7, Align::right},
                           {7, Align::right},
                           {7, Align::right},
                           {6, Align::right}});
    out += table.row(
               {"function", "arch", "regs", "bar", "stack", "spill-s", "spill-l", "smem", "cmem"}) +
           "\n";
    for (const PtxasFunction& f : r.functions) {
        std::int64_t cmem = 0;
        for (const auto& [bank, bytes] : f.constant_bytes) {
            cmem += bytes;
        }
        out += table.row({shorten(f.name, 28), f.arch, opt_text(f.registers), opt_text(f.barriers),
                          opt_text(f.stack_frame_bytes), opt_text(f.spill_stores_bytes),
                          opt_text(f.spill_loads_bytes), opt_text(f.shared_bytes),
                          f.constant_bytes.empty() ? "-" : std::to_string(cmem)}) +
               (f.entry ? "" : "  (device function)") + "\n";
    }
    for (const std::string& w : r.warnings) {
        out += "warning: " + w + "\n";
    }
    for (const std::string& e : r.errors) {
        out += "error: " + e + "\n";
    }
    return out;
}

std::string signature_list(const compiler::SassKernel& k) {
    std::string out;
    for (const compiler::SassSignature& sig : compiler::sass_signatures()) {
        const std::uint64_t n = compiler::signature_count(sig, k);
        if (n > 0 && sig.name != "tensor_core") {
            out += fmt::format("{}{}={}", out.empty() ? "" : " ", sig.name, n);
        }
    }
    return out.empty() ? "-" : out;
}

std::string sass_text(const SassReport& r) {
    std::string out =
        fmt::format("SASS ({}, {}{}): {} kernels, architectures {}\n", r.source.dialect,
                    r.input_kind == "binary" ? "disassembled by cuobjdump " : "text",
                    r.input_kind == "binary" ? r.source.tool_version : "", r.listing.kernels.size(),
                    fmt::join(r.listing.architectures, ", "));
    TextTable table({{28}, {8}, {6, Align::right}, {0, Align::left, "  "}});
    table.add({"kernel", "arch", "insts", "signatures"});
    for (const compiler::SassKernel& k : r.listing.kernels) {
        table.add({shorten(k.name, 28), k.arch.empty() ? "-" : k.arch,
                   std::to_string(k.instructions), signature_list(k)});
    }
    out += table.render();
    if (r.listing.unrecognized_lines > 0) {
        out += fmt::format("{} lines not recognised (kept out of every count), first: {}\n",
                           r.listing.unrecognized_lines, r.listing.first_unrecognized.front());
    }
    return out;
}

std::string diff_text(const compiler::SassDiff& d) {
    std::string out = fmt::format("{} kernels in both, {} only in A, {} only in B\n",
                                  d.kernels.size(), d.only_in_a.size(), d.only_in_b.size());
    for (const compiler::SassKernelDiff& k : d.kernels) {
        out += fmt::format("  {} [{}]: {} -> {} instructions", shorten(k.name, 40), k.arch,
                           k.instructions_a, k.instructions_b);
        for (const compiler::CountChange& c : k.signatures) {
            out += fmt::format("; {} {} -> {}", c.name, c.a, c.b);
        }
        out += "\n";
    }
    for (const auto& [symbol, arch] : d.only_in_a) {
        out += fmt::format("  only in A: {} [{}]\n", shorten(compiler::demangle(symbol), 40), arch);
    }
    for (const auto& [symbol, arch] : d.only_in_b) {
        out += fmt::format("  only in B: {} [{}]\n", shorten(compiler::demangle(symbol), 40), arch);
    }
    return out;
}

std::string triton_text(const compiler::TritonCache& c) {
    std::string out = fmt::format("Triton cache {}: {} kernels\n", c.directory, c.kernels.size());
    const TextTable table({{24},
                           {5, Align::right},
                           {6, Align::right},
                           {4, Align::right},
                           {7, Align::right},
                           {8},
                           {8},
                           {}});
    out += table.row({"kernel", "warps", "stages", "ctas", "shared", "arch", "ptx", "artifacts"}) +
           "\n";
    for (const compiler::TritonKernel& k : c.kernels) {
        std::string stages;
        for (const compiler::TritonArtifact& a : k.artifacts) {
            stages += stages.empty() ? "" : ",";
            stages += a.stage;
        }
        out += table.row({shorten(k.name, 24), opt_text(k.num_warps), opt_text(k.num_stages),
                          opt_text(k.num_ctas), opt_text(k.shared_bytes),
                          k.arch.empty() ? "-" : k.arch, k.ptx_target.empty() ? "-" : k.ptx_target,
                          stages.empty() ? "-" : stages}) +
               "\n";
        if (k.sass) {
            for (const compiler::SassKernel& s : k.sass->listing.kernels) {
                out += fmt::format("    SASS {} [{}]: {} instructions; {}\n", shorten(s.name, 24),
                                   s.arch, s.instructions, signature_list(s));
            }
        } else {
            out += "    " + k.sass_note + "\n";
        }
    }
    return out;
}

// What a stored Triton profile came from: each kernel's metadata file and every artifact beside it
// (ttir ... cubin), each with its SHA-256 and the Triton version the metadata states.
Json triton_sources(const compiler::TritonCache& c) {
    Json sources = Json::array();
    const std::filesystem::path dir(c.directory);
    for (const compiler::TritonKernel& k : c.kernels) {
        const std::filesystem::path meta = dir / k.metadata_path;
        sources.push_back(Json{{"path", meta.string()},
                               {"report_sha256", sha256_file_hex(meta)},
                               {"tool", "triton"},
                               {"tool_version", k.triton_version},
                               {"dialect", "triton-metadata"},
                               {"parser_version", "cko-triton-1"}});
        for (const compiler::TritonArtifact& a : k.artifacts) {
            sources.push_back(Json{{"path", (dir / a.path).string()},
                                   {"report_sha256", a.sha256},
                                   {"tool", "triton"},
                                   {"tool_version", k.triton_version},
                                   {"dialect", "triton-" + a.stage},
                                   {"parser_version", "cko-triton-1"}});
        }
    }
    return sources;
}

compiler::SassInputOptions sass_options(const Request& r) {
    compiler::SassInputOptions o;
    o.cuobjdump = r.text("cuobjdump");
    return o;
}

Outcome ptxas(const Request& req, Context& /*context*/) {
    const std::string log = req.text("log");
    require_value(log, "LOG", "cko ptxas LOG (the stderr of nvcc -Xptxas -v)");
    const compiler::TextInput in = compiler::read_text_input(log, 64 << 20, "ptxas log");
    compiler::PtxasReport r = compiler::parse_resource_report(in.text, in.sha256, in.path);
    take_stated_version(r.source, req.text("tool_version"), log);
    Outcome out{ptxas_text(r), compiler::ptxas_report_to_json(r), 0, {}};
    store_if_asked(req, "ptxas", Json::array({source_with_path(r.source, log)}), out);
    return out;
}

Outcome sass(const Request& req, Context& /*context*/) {
    const std::string file = req.text("file");
    require_value(file, "FILE",
                  "cko sass FILE (a cuobjdump/nvdisasm dump, a cubin, a fatbin or an executable)");
    SassReport r = compiler::load_sass(file, sass_options(req));
    take_stated_version(r.source, req.text("tool_version"), file);
    Outcome out{sass_text(r), compiler::sass_report_to_json(r), 0, {}};
    store_if_asked(req, "sass", Json::array({source_with_path(r.source, file)}), out);
    return out;
}

Outcome sass_diff(const Request& req, Context& /*context*/) {
    require_value(req.text("a"), "A", "cko sass diff A B");
    require_value(req.text("b"), "B", "cko sass diff A B");
    const SassReport a = compiler::load_sass(req.text("a"), sass_options(req));
    const SassReport b = compiler::load_sass(req.text("b"), sass_options(req));
    const compiler::SassDiff d = compiler::diff_sass(a, b);
    return Outcome{diff_text(d), compiler::sass_diff_to_json(d, a, b), 0, {}};
}

Outcome triton(const Request& req, Context& /*context*/) {
    const std::string dir = req.text("dir");
    require_value(dir, "DIR",
                  "cko triton DIR (a Triton cache: $TRITON_CACHE_DIR, ~/.triton/cache)");
    compiler::TritonOptions o;
    o.disassemble = !req.flag("no_sass");
    o.sass = sass_options(req);
    const compiler::TritonCache c = compiler::read_triton_cache(dir, o);
    Outcome out{triton_text(c), compiler::triton_cache_to_json(c), 0, {}};
    store_if_asked(req, "triton", req.text("root").empty() ? Json::array() : triton_sources(c),
                   out);
    return out;
}

}  // namespace

void add_compiler_verbs(std::vector<Verb>& table) {
    // Positionals are checked in run(), not marked required: the message names the usage.
    table.push_back(
        Verb{{"ptxas"},
             "Resource usage per function from ptxas -v or cuobjdump -res-usage output",
             RequestDef{with_evidence_params(
                 {positional(string_param("log",
                                          "stderr of nvcc -Xptxas -v (or ptxas -v), CUDA "
                                          "11-13, or cuobjdump -res-usage output")),
                  string_param("tool_version",
                               "The ptxas (CUDA) version that wrote the log (it does not say)")})},
             &ptxas,
             false});  // with --root it writes a profile record
    table.push_back(
        Verb{{"sass"},
             "Instruction mix and signatures of SASS (text or binary)",
             RequestDef{with_evidence_params(
                 {positional(string_param(
                      "file", "cuobjdump --dump-sass / nvdisasm text, or a CUDA binary")),
                  string_param("cuobjdump", "The disassembler for binaries (default: cuobjdump)",
                               "cuobjdump"),
                  string_param("tool_version",
                               "The cuobjdump/nvdisasm version that wrote a text dump (a binary is "
                               "disassembled by --cuobjdump, whose version is read)")})},
             &sass,
             false});  // with --root it writes a profile record
    table.push_back(Verb{
        {"sass", "diff"},
        "Compare the SASS of two builds kernel by kernel",
        RequestDef{{positional(string_param("a", "SASS text or binary of the reference build")),
                    positional(string_param("b", "SASS text or binary of the candidate build")),
                    string_param("cuobjdump", "The disassembler for binaries (default: cuobjdump)",
                                 "cuobjdump")}},
        &sass_diff,
        true});
    table.push_back(
        Verb{{"triton"},
             "Kernels of a Triton cache directory",
             RequestDef{with_evidence_params(
                 {positional(string_param("dir", "The cache directory")),
                  string_param("cuobjdump", "The disassembler for cubins (default: cuobjdump)",
                               "cuobjdump"),
                  flag_param("no_sass", "Do not disassemble cubins")})},
             &triton,
             false});  // with --root it writes a profile record
}

}  // namespace cko::verbs
