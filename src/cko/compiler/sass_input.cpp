// Binary or text: sniffing the magic, running cuobjdump, and parsing what it printed.
#include "cko/compiler/sass_input.hpp"

#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/process.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <cstdlib>
#include <fstream>

namespace cko::compiler {
namespace {

namespace fs = std::filesystem;

std::string first_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Error(ErrorCode::not_found, fmt::format("cannot open '{}'", path.string()),
                    Json{{"path", path.string()}});
    }
    std::string head(8, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    return head;
}

std::vector<std::string> tool_environment() {
    std::string path;
    if (const char* p = std::getenv("PATH"); p != nullptr) {  // NOLINT(concurrency-mt-unsafe)
        path = p;
    }
    if (const char* h = std::getenv("CUDA_HOME"); h != nullptr && *h != '\0') {  // NOLINT
        path += std::string(path.empty() ? "" : ":") + h + "/bin";
    }
    path += std::string(path.empty() ? "" : ":") + "/usr/local/cuda/bin";
    return {"PATH=" + path};
}

[[noreturn]] void tool_missing(const std::string& tool, const fs::path& input) {
    throw Error(
        ErrorCode::tool_failed,
        fmt::format("'{}' is a CUDA binary, and {} was not found (PATH, $CUDA_HOME/bin, "
                    "/usr/local/cuda/bin): install the CUDA toolkit, pass --cuobjdump PATH, "
                    "or pass a text dump made with `cuobjdump --dump-sass {}`",
                    input.string(), tool, input.filename().string()),
        Json{{"path", input.string()}, {"tool", tool}});
}

struct ToolRun {
    std::string stdout_text;
    std::string stderr_text;
    ProcessResult result;
};

ToolRun run_tool(const std::vector<std::string>& argv, const SassInputOptions& options) {
    const fs::path dir = make_temp_dir("cko-sass");  // cuobjdump's output
    ToolRun run;
    try {
        ProcessSpec spec;
        spec.argv = argv;
        spec.env_set = {{"PATH", tool_environment().front().substr(5)}};
        spec.env_allow = {"HOME", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "TMPDIR"};
        spec.stdout_path = dir / "stdout";
        spec.stderr_path = dir / "stderr";
        spec.output_cap_bytes = options.max_text_bytes;
        spec.timeout = options.timeout;
        run.result = run_process(spec);
        run.stdout_text = read_file_capped(spec.stdout_path, options.max_text_bytes);
        run.stderr_text = read_file_capped(spec.stderr_path, 1 << 20);
    } catch (...) {
        remove_tree_forcibly(dir);
        throw;
    }
    remove_tree_forcibly(dir);
    if (run.result.timed_out) {
        throw Error(ErrorCode::timed_out,
                    fmt::format("'{}' did not finish within {} s", argv.front(),
                                options.timeout.count() / 1000.0),
                    Json{{"argv", argv}});
    }
    if (run.result.stdout_truncated) {
        throw Error(
            ErrorCode::file_too_large,
            fmt::format("'{}' printed more than {} bytes", argv.front(), options.max_text_bytes),
            Json{{"argv", argv}});
    }
    return run;
}

// "Cuda compilation tools, release 13.0, V13.0.85" -> "13.0.85"
std::string tool_version(const std::string& tool, const SassInputOptions& options) {
    const ToolRun run = run_tool({tool, "--version"}, options);
    const std::size_t v = run.stdout_text.find(", V");
    if (v == std::string::npos) {
        return {};
    }
    const std::size_t end = run.stdout_text.find_first_of(" \r\n", v + 3);
    return run.stdout_text.substr(v + 3,
                                  end == std::string::npos ? std::string::npos : end - v - 3);
}

}  // namespace

BinaryKind sniff_binary(std::string_view head) noexcept {
    if (head.starts_with("\x7f"
                         "ELF")) {
        return BinaryKind::elf;
    }
    if (head.starts_with("\x50\xed\x55\xba")) {  // fatbin magic 0xBA55ED50, little-endian
        return BinaryKind::fatbin;
    }
    return BinaryKind::not_binary;
}

std::string find_cuda_tool(const std::string& name) {
    const std::string found = find_program(name, tool_environment()).value_or("");
    std::error_code ec;
    if (found.empty() || !fs::is_regular_file(found, ec) || ::access(found.c_str(), X_OK) != 0) {
        return {};
    }
    return found;
}

SassReport load_sass(const fs::path& path, const SassInputOptions& options) {
    const BinaryKind kind = sniff_binary(first_bytes(path));
    profile::Source source;
    source.parser_version = "cko-sass-1";
    if (kind == BinaryKind::not_binary) {
        const TextInput in = read_text_input(path, options.max_text_bytes, "SASS dump");
        SassListing listing = parse_sass_text(in.text, in.path);
        source.report_sha256 = in.sha256;
        source.tool = std::string(sass_dialect_name(listing.dialect));
        source.dialect = source.tool + "-sass-text";
        return make_sass_report(std::move(listing), std::move(source), "text");
    }
    const std::string tool = find_cuda_tool(options.cuobjdump);
    if (tool.empty()) {
        tool_missing(options.cuobjdump, path);
    }
    const std::string version = tool_version(tool, options);
    const std::vector<std::string> argv = {tool, "--dump-sass", fs::absolute(path).string()};
    const ToolRun run = run_tool(argv, options);
    if (!run.result.exited || run.result.exit_code != 0) {
        throw Error(ErrorCode::tool_failed,
                    fmt::format("'{} --dump-sass {}' failed ({}): {}", tool, path.string(),
                                run.result.exited ? fmt::format("exit {}", run.result.exit_code)
                                                  : fmt::format("signal {}", run.result.signal),
                                valid_utf8(run.stderr_text.substr(0, 512))),
                    Json{{"argv", argv}, {"process", run.result.to_json()}});
    }
    SassListing listing = parse_sass_text(valid_utf8(run.stdout_text), path.string());
    source.report_sha256 = sha256_file_hex(path);
    source.tool = "cuobjdump";
    source.tool_version = version;
    source.dialect = fmt::format("cuobjdump-sass-of-{}", binary_kind_name(kind));
    return make_sass_report(std::move(listing), std::move(source), "binary");
}

}  // namespace cko::compiler
