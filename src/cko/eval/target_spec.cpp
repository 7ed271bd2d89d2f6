// cko.toml: closed tables, typed fields, and an error naming the field and the fix for every
// mistake.
#include "cko/eval/target_spec.hpp"

#include "cko/eval/field_problems.hpp"
#include "cko/eval/target_spec_table.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>
#include "cko/eval/toml_guard.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

namespace cko::eval {
namespace fs = std::filesystem;
using spec_detail::bad;
using spec_detail::Table;
namespace {

void spec_name(const std::string& value, const std::string& field) {
    if (!is_safe_name(value)) {
        bad(field, fmt::format("\"{}\" is not a safe name", value),
            "use 1-128 characters from [A-Za-z0-9._-], not \".\" or \"..\"");
    }
}

void positive(const std::string& field, double v, const char* what) {
    if (!(v > 0)) {
        bad(field, fmt::format("{} must be positive", v), what);
    }
}

// Relative paths inside the Target folder: no absolute paths, no "..", no link leading out.
void require_relative(const fs::path& base, const std::string& field, const std::string& path) {
    const fs::path p(path);
    const bool escapes =
        std::any_of(p.begin(), p.end(), [](const fs::path& c) { return c == ".."; });
    if (p.is_absolute() || escapes) {
        bad(field, fmt::format("\"{}\" leaves the Target folder", path),
            "give a path relative to the directory of cko.toml, without '..'");
    }
    try {
        (void)resolve_inside(base, path, field);
    } catch (const Error& e) {
        bad(field, e.what(), "copy the files into the Target folder instead of linking to them");
    }
}

std::int64_t parse_deadline(const std::string& field, const std::string& text) {
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (end == nullptr || *end != '\0') {
        bad(field, fmt::format("\"{}\" is not a UTC time", text),
            "write it as 2026-12-01T00:00:00Z");
    }
    return static_cast<std::int64_t>(::timegm(&tm));
}

PrimarySpec read_primary(Table& objective) {
    const toml::node* n = objective.node("primary");
    if (n == nullptr || !n->is_table()) {
        bad(objective.field("primary"), n == nullptr ? "missing" : "expected an inline table",
            "write primary = { name = \"latency_us\", unit = \"us\", direction = \"lower\", "
            "aggregation = \"median\" }");
    }
    Table t(n->as_table(), objective.field("primary"));
    PrimarySpec p;
    p.name = t.string("name", "name the metric the driver reports, e.g. \"latency_us\"");
    p.unit = t.string("unit", "give its unit, e.g. \"us\"");
    p.direction = closed_word<stats::Direction>(
        ErrorCode::invalid_spec, t.field("direction"),
        t.string("direction", "say which way is better: \"lower\" or \"higher\""));
    p.aggregation = t.string("aggregation", "only \"median\" is supported", std::string("median"));
    one_of(ErrorCode::invalid_spec, t.field("aggregation"), p.aggregation, {"median"});
    t.close();
    return p;
}

std::vector<ConstraintSpec> read_constraints(Table& objective, const std::string& primary_name) {
    const toml::node* n = objective.node("constraints");
    std::vector<ConstraintSpec> out;
    if (n == nullptr) {
        return out;
    }
    const toml::array* a = n->as_array();
    if (a == nullptr) {
        bad(objective.field("constraints"), "expected an array of inline tables",
            "write constraints = [ { name = \"peak_mem_bytes\", unit = \"byte\", direction = "
            "\"lower\", max_regression_pct = 2.0 } ]");
    }
    std::set<std::string> names{primary_name};
    for (std::size_t i = 0; i < a->size(); ++i) {
        const std::string field = fmt::format("{}[{}]", objective.field("constraints"), i);
        if (!a->get(i)->is_table()) {
            bad(field, "expected an inline table",
                "write { name = ..., unit = ..., direction = ..., max_regression_pct = ... }");
        }
        Table t(a->get(i)->as_table(), field);
        ConstraintSpec c;
        c.name = t.string("name", "name a metric the driver reports");
        c.unit = t.string("unit", "give its unit");
        c.direction =
            closed_word<stats::Direction>(ErrorCode::invalid_spec, t.field("direction"),
                                          t.string("direction", "\"lower\" or \"higher\""));
        c.max_regression_pct = t.number("max_regression_pct",
                                        "the largest regression tolerated, in percent, e.g. 2.0");
        if (c.max_regression_pct < 0 || c.max_regression_pct > 100) {
            bad(t.field("max_regression_pct"), "must be between 0 and 100", "give a percentage");
        }
        c.accept_per_case = t.boolean("accept_per_case",
                                      "true lets a regression on some cases be accepted by name "
                                      "while the pooled estimate holds; false (the default) never",
                                      false);
        if (!names.insert(c.name).second) {
            bad(t.field("name"),
                fmt::format("\"{}\" appears twice (or is the primary metric)", c.name),
                "give each constraint its own metric");
        }
        t.close();
        out.push_back(c);
    }
    return out;
}

}  // namespace

bool TargetSpec::can_pair_in_process() const {
    return std::find(capabilities.begin(), capabilities.end(), "paired_in_process") !=
           capabilities.end();
}

bool TargetSpec::serves_sessions() const {
    // Through Slurm every call is its own job (run/slurm_launcher.hpp); a session as one job step
    // is not built yet, so a session-capable driver is called one process per call there.
    return !uses_slurm() &&
           std::find(capabilities.begin(), capabilities.end(), "session") != capabilities.end();
}

std::string minimum_effect_problem(double pct) {
    if (pct > 0 && pct <= kMaxMinimumEffectPct) {
        return "";
    }
    return fmt::format("{} is not in (0, {}]", pct, kMaxMinimumEffectPct);
}

bool correctness_passes(const std::string& op, double value, double threshold) {
    if (!std::isfinite(value)) {
        return false;
    }
    if (op == "<=")
        return value <= threshold;
    if (op == "<")
        return value < threshold;
    if (op == ">=")
        return value >= threshold;
    if (op == ">")
        return value > threshold;
    return value == threshold;
}

CorrectnessGate parse_correctness_gate(const std::string& text, const std::string& field) {
    const auto at = text.find_first_of("<>=");
    CorrectnessGate g;
    if (at != std::string::npos) {
        const auto end = text.find_first_not_of("<>=", at);
        g.op = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        g.metric = text.substr(0, at);
        g.metric.erase(g.metric.find_last_not_of(' ') + 1);
        const std::string number = end == std::string::npos ? "" : text.substr(end);
        char* stop = nullptr;
        g.threshold = std::strtod(number.c_str(), &stop);
        const bool ok_number =
            stop != number.c_str() &&
            std::string_view(stop).find_first_not_of(' ') == std::string_view::npos &&
            std::isfinite(g.threshold);
        const bool ok_op =
            g.op == "<=" || g.op == "<" || g.op == ">=" || g.op == ">" || g.op == "==";
        if (ok_number && ok_op && is_safe_name(g.metric)) {
            return g;
        }
    }
    throw Error(
        ErrorCode::invalid_argument,
        fmt::format(
            "{}: \"{}\" is not a gate; write METRIC OP THRESHOLD, e.g. \"max_abs_err <= 1e-3\"",
            field, text),
        Json{{"field", field}, {"value", text}});
}

// [slurm]: how driver calls become Slurm jobs (docs/slurm.md). Given only with driver.launcher =
// "slurm".
void read_slurm(Table& top, TargetSpec& s) {
    Table t = top.table("slurm", false, "");
    if (!s.uses_slurm()) {
        if (t.present()) {
            bad("slurm", "given, but driver.launcher is \"local\"",
                "set driver.launcher = \"slurm\" or remove [slurm]");
        }
        return;
    }
    run::SlurmOptions& o = s.slurm;
    o.submit = t.string("submit", "\"srun\" (the default) or \"sbatch\" (sbatch --wait)",
                        std::string("srun"));
    one_of(ErrorCode::invalid_spec, "slurm.submit", o.submit, {"srun", "sbatch"});
    o.partition = t.string("partition", "the partition to run in, e.g. \"gpu\"", std::string());
    o.account = t.string("account", "the account to charge, e.g. \"proj123\"", std::string());
    o.constraint = t.string("constraint", "node features, e.g. \"h100\"", std::string());
    o.time_limit =
        t.string("time_limit", "a Slurm time such as \"30\" or \"01:00:00\"", std::string());
    if (const auto problem =
            o.time_limit.empty() ? std::nullopt : run::slurm_time_limit_problem(o.time_limit)) {
        bad("slurm.time_limit", *problem, "or leave it out: the command timeout is used");
    }
    o.gpus_per_call =
        t.integer("gpus_per_call", "the GPUs each driver call asks for (--gpus), e.g. 1", 0);
    if (o.gpus_per_call > 64) {
        bad("slurm.gpus_per_call",
            fmt::format("{} is more than one job step can use", o.gpus_per_call), "use 0 to 64");
    }
    o.extra_args = t.strings("extra_args", "list extra srun/sbatch options, e.g. [\"--exclusive\"]",
                             false, true);
    for (std::size_t i = 0; i < o.extra_args.size(); ++i) {
        if (const auto problem = run::slurm_extra_arg_problem(o.extra_args[i])) {
            bad(fmt::format("slurm.extra_args[{}]", i), *problem,
                "remove it or use an allowed option");
        }
    }
    o.cko_path = t.string("cko", "the absolute path of cko on the compute nodes", std::string());
    if (!o.cko_path.empty() && !fs::path(o.cko_path).is_absolute()) {
        bad("slurm.cko", fmt::format("\"{}\" is not an absolute path", o.cko_path),
            "give cko's absolute path on the compute nodes, e.g. \"/shared/bin/cko\"");
    }
    t.close();
}

namespace {

toml::table parse_toml(std::string_view text, const fs::path& spec_path) {
    refuse_non_ascii_outside_strings(text, spec_path);
    try {
        return toml::parse(text, spec_path.string());
    } catch (const toml::parse_error& e) {
        const auto& where = e.source().begin;
        bad(fmt::format("{}:{}:{}", spec_path.string(), where.line, where.column),
            fmt::format("not valid TOML ({})", e.description()), "fix the syntax at that line");
    }
}

// A table of the spec, or an absent one when reading it was a problem (already collected).
Table table_of(Table& top, FieldProblems& p, std::string_view key, bool required, const char* fix) {
    Table t(nullptr, std::string(key));
    if (!p.check([&] { t = top.table(key, required, fix); })) {
        return Table(nullptr, std::string(key));
    }
    return t;
}

// [target]'s mode and name, which every Target has.
void read_mode_and_name(Table& target, TargetSpec& s, FieldProblems& p) {
    p.check([&] {
        const std::string mode = target.string("mode", "\"measure\" (default) or \"diagnostic\"",
                                               std::string("measure"));
        one_of(ErrorCode::invalid_spec, "target.mode", mode, {"measure", "diagnostic"});
        s.diagnostic = mode == "diagnostic";
    });
    p.check([&] {
        s.name = target.string("name", "name the Target, e.g. name = \"softmax\"");
        spec_name(s.name, "target.name");
    });
}

// The rest of [target]: what a win claims, the original and the change scope.
void read_claim_and_scope(Table& target, TargetSpec& s, FieldProblems& p) {
    p.check([&] {
        s.claim_layer = closed_word<store::ClaimLayer>(
            ErrorCode::invalid_spec, "target.claim_layer",
            target.string("claim_layer",
                          "say what a win would claim: \"kernel\", \"workload\" or \"serving\""));
    });
    p.check([&] {
        s.original =
            target.string("original", "name the file or directory holding the original code");
        require_relative(s.base_dir, "target.original", s.original);
    });
    p.check([&] {
        s.change_scope = target.strings(
            "change_scope",
            "list the paths (globs) a candidate may change, e.g. [\"src/softmax.cu\"]", true);
        for (std::size_t i = 0; i < s.change_scope.size(); ++i) {
            require_relative(s.base_dir, fmt::format("target.change_scope[{}]", i),
                             s.change_scope[i]);
        }
    });
}

void read_cases(Table& top, TargetSpec& s, FieldProblems& p) {
    Table cases = table_of(top, p, "cases", true, "add [cases] with dir and ids");
    if (!cases.present()) {
        return;
    }
    p.check([&] {
        s.cases_dir = cases.string("dir", "name the directory holding <id>.json per case");
        require_relative(s.base_dir, "cases.dir", s.cases_dir);
    });
    p.check([&] {
        s.case_ids = cases.strings("ids", "list the case ids, e.g. [\"main\"]", true);
        std::set<std::string> ids;
        for (std::size_t i = 0; i < s.case_ids.size(); ++i) {
            spec_name(s.case_ids[i], fmt::format("cases.ids[{}]", i));
            if (!ids.insert(s.case_ids[i]).second) {
                bad(fmt::format("cases.ids[{}]", i),
                    fmt::format("\"{}\" is listed twice", s.case_ids[i]), "list each case once");
            }
        }
    });
    p.check([&] { cases.close(); });
}

void read_capabilities(Table& driver, TargetSpec& s) {
    s.capabilities = driver.strings(
        "capabilities",
        "list \"single_subject\" (required) and optionally \"paired_in_process\" and \"session\"",
        true);
    for (std::size_t i = 0; i < s.capabilities.size(); ++i) {
        one_of(ErrorCode::invalid_spec, fmt::format("driver.capabilities[{}]", i),
               s.capabilities[i], {"single_subject", "paired_in_process", "session"});
    }
    if (std::find(s.capabilities.begin(), s.capabilities.end(), "single_subject") ==
        s.capabilities.end()) {
        bad("driver.capabilities", "lacks \"single_subject\"",
            "every driver must measure one subject per call; add it");
    }
}

void read_env_allow(Table& driver, TargetSpec& s) {
    s.env_allow = driver.strings(
        "env_allow", "list the environment variables the driver may see, e.g. [\"PATH\"]", false,
        true);
    for (std::size_t i = 0; i < s.env_allow.size(); ++i) {
        const std::string& name = s.env_allow[i];
        if (name.empty() || name.find_first_of(std::string("=\0", 2)) != std::string::npos) {
            bad(fmt::format("driver.env_allow[{}]", i),
                fmt::format("\"{}\" is not a variable name", name),
                "list names only (e.g. \"PATH\"); values come from cko's environment");
        }
    }
}

// [driver], then [slurm] when its launcher is known (a [slurm] table is judged against it).
void read_driver(Table& top, TargetSpec& s, FieldProblems& p) {
    Table driver = table_of(top, p, "driver", true, "add [driver] with argv and capabilities");
    bool launcher_known = false;
    if (driver.present()) {
        p.check([&] {
            s.driver_argv = driver.strings("argv",
                                           "give the driver command as an argv array, e.g. "
                                           "[\"python3\", \"driver.py\"] (never a shell string)",
                                           true);
        });
        p.check([&] { read_capabilities(driver, s); });
        p.check([&] {
            s.identity_paths = driver.strings(
                "identity_paths",
                "list the driver's own files (hashed: editing them needs a new Target)", false,
                true);
            for (std::size_t i = 0; i < s.identity_paths.size(); ++i) {
                require_relative(s.base_dir, fmt::format("driver.identity_paths[{}]", i),
                                 s.identity_paths[i]);
            }
        });
        p.check([&] { read_env_allow(driver, s); });
        launcher_known = p.check([&] {
            s.launcher = driver.string("launcher", "\"local\" (the default) or \"slurm\"",
                                       std::string("local"));
            one_of(ErrorCode::invalid_spec, "driver.launcher", s.launcher, {"local", "slurm"});
        });
        p.check([&] { driver.close(); });
    }
    if (launcher_known) {
        p.check([&] { read_slurm(top, s); });
    } else {
        (void)top.node("slurm");  // not judged without a launcher; not unknown either
    }
}

void read_objective(Table& top, TargetSpec& s, FieldProblems& p) {
    Table objective =
        table_of(top, p, "objective", true, "add [objective] with primary and minimum_effect_pct");
    if (!objective.present()) {
        return;
    }
    p.check([&] { s.primary = read_primary(objective); });
    p.check([&] {
        s.minimum_effect_pct = objective.number(
            "minimum_effect_pct", "the smallest gain worth having, in percent, e.g. 2.0");
        if (const std::string problem = minimum_effect_problem(s.minimum_effect_pct);
            !problem.empty()) {
            bad("objective.minimum_effect_pct", problem,
                "give a positive percentage such as 0.5 or 5");
        }
    });
    p.check([&] {
        s.max_case_regression_pct = objective.number(
            "max_case_regression_pct",
            "the slowdown one case may show while the pooled effect counts, in percent, e.g. 2",
            0.0);
        if (!(s.max_case_regression_pct >= 0 && s.max_case_regression_pct < 100)) {
            bad("objective.max_case_regression_pct",
                fmt::format("{} is not in [0, 100)", s.max_case_regression_pct),
                "give 0 (no case may regress) or a small percentage");
        }
    });
    p.check([&] { s.constraints = read_constraints(objective, s.primary.name); });
    p.check([&] { objective.close(); });
}

void read_correctness(Table& top, TargetSpec& s, FieldProblems& p) {
    Table correctness =
        table_of(top, p, "correctness", true, "add [correctness] with metric, operator, threshold");
    if (!correctness.present()) {
        return;
    }
    p.check([&] {
        s.correctness_metric = correctness.string(
            "metric", "name the correctness metric the driver reports, e.g. \"max_rel_err\"");
    });
    p.check([&] {
        s.correctness_operator = correctness.string("operator", "one of <=, <, >=, >, ==");
        one_of(ErrorCode::invalid_spec, "correctness.operator", s.correctness_operator,
               {"<=", "<", ">=", ">", "=="});
    });
    p.check([&] {
        s.correctness_threshold =
            correctness.number("threshold", "the bound the metric must meet, e.g. 1e-5");
    });
    p.check([&] { correctness.close(); });
}

void read_pairs(Table& stats, TargetSpec& s) {
    s.min_pairs = stats.integer("min_pairs", "pairs below which no verdict is given, e.g. 6", 6);
    s.max_pairs = stats.integer("max_pairs", "the most pairs a comparison may take, e.g. 40", 40);
    if (s.min_pairs < 3) {
        bad("statistics.min_pairs", fmt::format("{} is below 3", s.min_pairs),
            "use at least 3 (6 is typical)");
    }
    if (s.max_pairs < s.min_pairs) {
        bad("statistics.max_pairs",
            fmt::format("{} is below min_pairs {}", s.max_pairs, s.min_pairs), "raise max_pairs");
    }
}

void read_statistics(Table& top, TargetSpec& s, FieldProblems& p) {
    Table stats = table_of(top, p, "statistics", false, "");
    p.check([&] {
        s.confidence = stats.number("confidence", "e.g. 0.95", 0.95);
        if (!(s.confidence >= 0.5 && s.confidence < 1)) {
            bad("statistics.confidence", fmt::format("{} is not in [0.5, 1)", s.confidence),
                "use e.g. 0.95");
        }
    });
    p.check([&] { read_pairs(stats, s); });
    p.check([&] {
        s.samples_per_call =
            stats.integer("samples_per_call", "samples per subject per driver call, e.g. 5", 5);
        if (s.samples_per_call < 1) {
            bad("statistics.samples_per_call", "must be at least 1", "use e.g. 5");
        }
    });
    p.check([&] {
        s.sequential =
            stats.boolean("sequential", "true to stop as soon as the verdict is decided", true);
    });
    p.check([&] { stats.close(); });
}

void read_timeouts(Table& limits, TargetSpec& s) {
    s.command_timeout_s =
        limits.number("command_timeout_s", "seconds one driver call may take", 300);
    s.operation_timeout_s =
        limits.number("operation_timeout_s", "seconds one operation may take", 3600);
    s.resource_wait_timeout_s =
        limits.number("resource_wait_timeout_s", "seconds to wait for the GPU", 120);
    s.cleanup_timeout_s =
        limits.number("cleanup_timeout_s", "seconds between SIGTERM and SIGKILL", 30);
    for (const auto& [key, v] :
         {std::pair{"limits.command_timeout_s", s.command_timeout_s},
          std::pair{"limits.operation_timeout_s", s.operation_timeout_s},
          std::pair{"limits.resource_wait_timeout_s", s.resource_wait_timeout_s},
          std::pair{"limits.cleanup_timeout_s", s.cleanup_timeout_s}}) {
        positive(key, v, "give a positive number of seconds");
    }
    if (s.command_timeout_s > s.operation_timeout_s) {
        bad("limits.command_timeout_s", "exceeds operation_timeout_s",
            "one call cannot outlast the operation; lower it");
    }
}

void read_limits(Table& top, TargetSpec& s, FieldProblems& p) {
    Table limits = table_of(top, p, "limits", false, "");
    p.check([&] { read_timeouts(limits, s); });
    p.check([&] {
        s.gpu_seconds_budget = limits.number(
            "gpu_seconds_budget", "GPU seconds this Target may spend (0 = unlimited)", 0);
        s.wall_seconds_budget = limits.number(
            "wall_seconds_budget", "wall seconds this Target may spend (0 = unlimited)", 0);
        if (s.gpu_seconds_budget < 0 || s.wall_seconds_budget < 0) {
            bad(s.gpu_seconds_budget < 0 ? "limits.gpu_seconds_budget"
                                         : "limits.wall_seconds_budget",
                "negative", "use 0 or more");
        }
    });
    p.check([&] {
        if (limits.has("farthest_stage")) {
            s.farthest_stage = closed_word<Stage>(
                ErrorCode::invalid_spec, "limits.farthest_stage",
                limits.string("farthest_stage",
                              "the farthest stage a session may run: \"screen\", \"confirm\" "
                              "or \"audit\""));
        }
        if (limits.has("deadline")) {
            s.deadline_text =
                limits.string("deadline", "an absolute UTC time such as 2026-12-01T00:00:00Z");
            s.deadline_unix_s = parse_deadline("limits.deadline", s.deadline_text);
        } else {
            (void)limits.node("deadline");
        }
    });
    p.check([&] { limits.close(); });
}

void read_observation(Table& top, TargetSpec& s, FieldProblems& p) {
    Table observation = table_of(top, p, "observation", false, "");
    p.check([&] {
        s.observation.max_host_load_per_cpu = observation.number(
            "max_host_load_per_cpu",
            "runnable tasks per CPU above which a comparison is inconclusive, e.g. 1.0", 1.0);
        positive("observation.max_host_load_per_cpu", s.observation.max_host_load_per_cpu,
                 "give a positive number of runnable tasks per CPU, e.g. 1.0");
    });
    p.check([&] {
        s.observation.max_host_steal_pct =
            observation.number("max_host_steal_pct",
                               "the CPU steal, in percent, above which a comparison is "
                               "inconclusive, e.g. 5",
                               5.0);
        if (!(s.observation.max_host_steal_pct >= 0 && s.observation.max_host_steal_pct <= 100)) {
            bad("observation.max_host_steal_pct",
                fmt::format("{} is not in [0, 100]", s.observation.max_host_steal_pct),
                "give a percentage such as 5");
        }
    });
    p.check([&] { observation.close(); });
}

void read_gpus(Table& resources, TargetSpec& s) {
    const toml::node* gpus = resources.node("gpus");
    if (gpus == nullptr || (gpus->is_string() && **gpus->as_string() == "auto")) {
        s.gpus_mode = gpus == nullptr ? "none" : "auto";
    } else if (gpus->is_array()) {
        s.gpu_uuids = resources.strings("gpus", "list GPU UUIDs like \"GPU-…\", or write \"auto\"",
                                        false, true);
        for (std::size_t i = 0; i < s.gpu_uuids.size(); ++i) {
            if (!s.gpu_uuids[i].starts_with("GPU-") && !s.gpu_uuids[i].starts_with("MIG-")) {
                bad(fmt::format("resources.gpus[{}]", i),
                    fmt::format("\"{}\" is not a GPU UUID", s.gpu_uuids[i]),
                    "copy the UUID from `cko doctor` (GPU-…)");
            }
        }
        s.gpus_mode = s.gpu_uuids.empty() ? "none" : "list";
    } else {
        bad("resources.gpus", "expected \"auto\" or an array of GPU UUIDs",
            "write gpus = \"auto\" or gpus = [\"GPU-…\"] ([] for CPU work)");
    }
}

}  // namespace

// Every table read in turn, every problem collected (each field's first), then reported at once.
TargetSpec parse_target_spec(std::string_view text, const fs::path& spec_path) {
    toml::table root = parse_toml(text, spec_path);
    TargetSpec s;
    s.spec_path = spec_path;
    s.base_dir = spec_path.has_parent_path() ? spec_path.parent_path() : fs::path(".");
    Table top(&root, "");
    FieldProblems p(ErrorCode::invalid_spec);

    Table target = table_of(top, p, "target", true,
                            "add a [target] table with name, claim_layer, original, change_scope");
    if (target.present()) {
        read_mode_and_name(target, s, p);
    }
    if (s.diagnostic) {
        p.check([&] { target.close(); });
        p.check([&] {
            top.close({"cases", "driver", "objective", "correctness", "statistics", "limits",
                       "observation", "resources", "slurm"});
        });
        p.throw_if_any();
        return s;
    }
    if (target.present()) {
        read_claim_and_scope(target, s, p);
        p.check([&] { target.close(); });
    }
    read_cases(top, s, p);
    read_driver(top, s, p);
    read_objective(top, s, p);
    read_correctness(top, s, p);
    read_statistics(top, s, p);
    read_limits(top, s, p);
    read_observation(top, s, p);
    Table resources = table_of(top, p, "resources", false, "");
    p.check([&] { read_gpus(resources, s); });
    p.check([&] { resources.close(); });
    p.check([&] { top.close(); });
    p.throw_if_any();
    return s;
}

TargetSpec read_target_spec(const fs::path& path) {
    std::string text;
    try {
        text = read_file_capped(path, 1 << 20);
    } catch (const Error& e) {
        throw Error(ErrorCode::invalid_spec,
                    fmt::format("{}: {} (write one with `cko init`)", path.string(), e.what()),
                    Json{{"field", "spec"}, {"fix", "write one with `cko init`"}});
    }
    return parse_target_spec(text, path);
}

}  // namespace cko::eval
