// The report verbs: `cko report` (HTML or Markdown), `cko handoff` (the skeleton), `cko stop --reason`.
#include "cko/cli/command.hpp"
#include "cko/cli/operation.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/report/handoff.hpp"
#include "cko/report/html_printer.hpp"
#include "cko/report/markdown_printer.hpp"
#include "cko/report/report_model.hpp"
#include "cko/report/termination.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <memory>
#include <unistd.h>

namespace cko::cli {
namespace fs = std::filesystem;
namespace {

struct Options {
    std::string root;
    std::string out;
    std::string format;
    std::string reason;
    bool force = false;
};

// A derived view may be regenerated: written whole beside the old one, then renamed over it.
void write_view(const fs::path& path, const std::string& bytes, bool replace) {
    if (!replace) {
        write_file_create_once(path, bytes);
        return;
    }
    const fs::path temp = path.parent_path() / fmt::format(".{}.new-{}", path.filename().string(), ::getpid());
    write_file_create_once(temp, bytes);
    std::error_code ec;
    fs::rename(temp, path, ec);
    if (ec) {
        fs::remove(temp);
        throw Error(ErrorCode::io_error, fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
}

fs::path absolute_out(const std::string& out) {
    const fs::path p = fs::absolute(out);
    if (!fs::is_directory(p.parent_path())) {
        throw Error(ErrorCode::not_found, fmt::format("--out {}: the directory {} does not exist", out,
                                                      p.parent_path().string()));
    }
    return p;
}

CommandResult report(const Options& o) {
    std::string format = o.format;
    if (format.empty()) {
        format = o.out.empty() ? "md" : (o.out.ends_with(".md") ? "md" : "html");
    }
    if (format != "html" && format != "md") {
        throw Error(ErrorCode::usage, fmt::format("--format {}: choose html or md", format));
    }
    if (format == "html" && o.out.empty()) {
        throw Error(ErrorCode::usage, "an HTML report is one file: give --out report.html (or --format md for stdout)");
    }
    const Json model = report::build_report_model(store::Store::open(o.root), unix_seconds_now());
    const std::string bytes = format == "html" ? report::render_html(model) : report::render_markdown(model);
    if (o.out.empty()) {
        return CommandResult{bytes, Json{{"format", format}, {"out", Json()}, {"report", model}}, 0};
    }
    const fs::path out = absolute_out(o.out);
    write_view(out, bytes, true);
    return CommandResult{fmt::format("report ({}, {} bytes, {} comparisons): {}\n", format, bytes.size(),
                                     model["comparisons"].size(), out.string()),
                         Json{{"format", format}, {"out", out.string()}, {"bytes", bytes.size()}, {"report", model}}, 0};
}

CommandResult handoff(const Options& o) {
    const Json model = report::build_report_model(store::Store::open(o.root), unix_seconds_now());
    const std::string text = report::render_handoff(model);
    if (o.out.empty()) {
        return CommandResult{text, Json{{"out", Json()}, {"markdown", text}}, 0};
    }
    const fs::path out = absolute_out(o.out);
    if (fs::exists(out) && !o.force) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} exists and may hold the decision maker's writing; choose another --out, or "
                                "--force to replace it", out.string()),
                    Json{{"out", out.string()}});
    }
    write_view(out, text, o.force);
    return CommandResult{fmt::format("handoff skeleton: {} (the sections marked \"{}\" are yours to write)\n",
                                     out.string(), report::kWriteHere),
                         Json{{"out", out.string()}, {"markdown", text}}, 0};
}

}  // namespace

void register_report(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* rep = add_verb(app, "report", "The report of a Target: HTML (one self-contained file) or Markdown", [o] {
        return report(*o);
    });
    add_root_option(rep, o->root);
    rep->add_option("--out", o->out, "Write the report here (HTML by default; .md means Markdown)");
    rep->add_option("--format", o->format, "html or md (default: md on stdout, html with --out)");

    auto* hand = add_verb(app, "handoff", "A Markdown handoff skeleton filled from the evidence", [o] {
        return handoff(*o);
    });
    add_root_option(hand, o->root);
    hand->add_option("--out", o->out, "Write the skeleton here (default: stdout)");
    hand->add_flag("--force", o->force, "Replace an existing --out file");

    auto* stop = add_verb(app, "stop", "Record why the optimization ended (written once; the handoff cites it)", [o] {
        const Json rec = report::record_stop(store::Store::open(o->root), o->reason);
        return CommandResult{fmt::format("stopped ({}): {}\n", rec.value("id", ""), rec.value("reason", "")), rec, 0};
    });
    add_root_option(stop, o->root);
    stop->add_option("--reason", o->reason, "Why it ends: goal reached, budget spent, no direction left...")->required();
}

}  // namespace cko::cli
