// The report verbs: `cko report` (HTML or Markdown, of a root or a bundle), `cko handoff` (the
// skeleton), `cko stop --reason`.
#include "cko/report/handoff.hpp"
#include "cko/report/html_printer.hpp"
#include "cko/report/markdown_printer.hpp"
#include "cko/report/report_model.hpp"
#include "cko/report/termination.hpp"
#include "cko/store/bundle_check.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <memory>
#include <string>
#include <vector>

namespace cko::verbs {
namespace fs = std::filesystem;
namespace {

// A derived view may be regenerated: written whole beside the old one, then renamed over it.
void write_view(const fs::path& path, const std::string& bytes, bool replace) {
    if (!replace) {
        write_file_create_once(path, bytes);
        return;
    }
    const fs::path temp =
        path.parent_path() / fmt::format(".{}.new-{}", path.filename().string(), ::getpid());
    write_file_create_once(temp, bytes);
    std::error_code ec;
    fs::rename(temp, path, ec);
    if (ec) {
        fs::remove(temp);
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
}

fs::path absolute_out(const std::string& out) {
    const fs::path p = fs::absolute(out);
    if (!fs::is_directory(p.parent_path())) {
        throw Error(ErrorCode::not_found, fmt::format("--out {}: the directory {} does not exist",
                                                      out, p.parent_path().string()));
    }
    return p;
}

// The model of a root, or of a bundle verified first (a damaged one is refused); a bundle's header
// names the bundle's id where a root's names its path, so nothing in it depends on where it was
// extracted.
Json report_model_of(const std::string& root, const std::string& bundle) {
    if (bundle.empty()) {
        return report::build_report_model(store::Store::open(root), unix_seconds_now());
    }
    const store::OpenedBundle opened{fs::path(bundle)};
    if (opened.report().damaged()) {
        std::vector<std::string> damage;
        for (const auto& f : opened.report().findings) {
            if (f.damage) {
                damage.push_back(fmt::format("{} {}", f.kind, f.path));
            }
        }
        throw Error(ErrorCode::tampered_record,
                    fmt::format("bundle {} is damaged ({}); nothing is rendered from it: cko fsck "
                                "--bundle {} says more",
                                bundle, fmt::join(damage, ", "), bundle),
                    Json{{"bundle", bundle}, {"damage", damage}});
    }
    Json model = report::build_report_model(opened.store(), unix_seconds_now());
    model["root"] = fmt::format("bundle {}", opened.manifest().id);
    return model;
}

Outcome report(const Request& r, Context& /*context*/) {
    const struct {
        std::string root, out, format, bundle;
    } o{r.text("root"), r.text("out"), r.text("format"), r.text("bundle")};
    std::string format = o.format;
    if (format.empty()) {
        format = o.out.empty() ? "md" : (o.out.ends_with(".md") ? "md" : "html");
    }
    if (format != "html" && format != "md") {
        throw Error(ErrorCode::usage, fmt::format("--format {}: choose html or md", format));
    }
    if (format == "html" && o.out.empty()) {
        throw Error(
            ErrorCode::usage,
            "an HTML report is one file: give --out report.html (or --format md for stdout)");
    }
    const Json model = report_model_of(o.root, o.bundle);
    const std::string bytes =
        format == "html" ? report::render_html(model) : report::render_markdown(model);
    if (o.out.empty()) {
        return Outcome{bytes, Json{{"format", format}, {"out", Json()}, {"report", model}}, 0, {}};
    }
    const fs::path out = absolute_out(o.out);
    write_view(out, bytes, true);
    return Outcome{
        fmt::format("report ({}, {} bytes, {} comparisons): {}\n", format, bytes.size(),
                    model["comparisons"].size(), out.string()),
        Json{{"format", format}, {"out", out.string()}, {"bytes", bytes.size()}, {"report", model}},
        0,
        {}};
}

Outcome handoff(const Request& r, Context& /*context*/) {
    const struct {
        std::string root, out;
        bool force;
    } o{r.text("root"), r.text("out"), r.flag("force")};
    const Json model = report::build_report_model(store::Store::open(o.root), unix_seconds_now());
    const std::string text = report::render_handoff(model);
    if (o.out.empty()) {
        return Outcome{text, Json{{"out", Json()}, {"markdown", text}}, 0, {}};
    }
    const fs::path out = absolute_out(o.out);
    if (fs::exists(out) && !o.force) {
        throw Error(
            ErrorCode::already_exists,
            fmt::format(
                "{} exists and may hold the decision maker's writing; choose another --out, or "
                "--force to replace it",
                out.string()),
            Json{{"out", out.string()}});
    }
    write_view(out, text, o.force);
    return Outcome{
        fmt::format("handoff skeleton: {} (the sections marked \"{}\" are yours to write)\n",
                    out.string(), report::kWriteHere),
        Json{{"out", out.string()}, {"markdown", text}},
        0,
        {}};
}

Outcome stop(const Request& r, Context& /*context*/) {
    const Json rec = report::record_stop(store::Store::open(r.text("root")), r.text("reason"));
    return Outcome{fmt::format("stopped ({}): {}\n", rec.value("id", ""), rec.value("reason", "")),
                   rec,
                   0,
                   {}};
}

}  // namespace

void add_report_verbs(std::vector<Verb>& table) {
    table.push_back(Verb{
        {"report"},
        "The report of a Target: HTML (one self-contained file) or Markdown",
        RequestDef{
            {root_param(),
             string_param("out", "Write the report here (HTML by default; .md means Markdown)"),
             string_param("format", "html or md (default: md on stdout, html with --out)"),
             string_param("bundle",
                          "Render this bundle (cko bundle), verified first, instead of the root")}},
        &report});
    table.push_back(Verb{
        {"handoff"},
        "A Markdown handoff skeleton filled from the evidence",
        RequestDef{{root_param(), string_param("out", "Write the skeleton here (default: stdout)"),
                    flag_param("force", "Replace an existing --out file")}},
        &handoff});
    table.push_back(
        Verb{{"stop"},
             "Record why the optimization ended (written once; the handoff cites it)",
             RequestDef{
                 {root_param(),
                  required(string_param(
                      "reason", "Why it ends: goal reached, budget spent, no direction left..."))}},
             &stop});
}

}  // namespace cko::verbs
