// `cko driver run`: one driver call as a recorded Invocation (for writing and debugging drivers).
#include "cko/driver/call_builder.hpp"
#include "cko/eval/standalone_call.hpp"
#include "cko/stats/descriptive.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <utility>

namespace cko::verbs {
namespace {

// The verb's request, typed: driver::build_call holds the rules.
eval::StandaloneCall build_call(const Request& req) {
    driver::CallOptions o;
    o.argv = req.list("argv");
    o.capabilities = req.list("capability");
    o.env_allow = req.list("env_allow");
    o.mode = req.text("mode");
    o.case_id = req.text("case");
    o.case_file = req.text("case_file");
    o.reference = req.text("reference");
    o.candidate = req.text("candidate");
    o.samples = req.integer("samples");
    o.seed = req.unsigned_integer("seed");
    o.primary = req.text("primary");
    o.constraints = req.list("constraint");
    o.correctness_metrics = req.list("correctness_metric");
    o.command_timeout_s = req.number("command_timeout");
    o.operation_timeout_s = req.number("operation_timeout");
    o.resource_wait_s = req.number("resource_wait");
    o.cleanup_timeout_s = req.number("cleanup_timeout");
    driver::BuiltCall built = driver::build_call(o);
    eval::StandaloneCall call;
    call.driver = std::move(built.driver);
    call.request = std::move(built.request);
    call.limits = built.limits;
    call.gpu_uuid = req.text("gpu");
    return call;
}

std::string summary(const eval::StandaloneOutcome& out) {
    std::string text = fmt::format("invocation {}: {}\n", out.invocation_id, out.state);
    if (out.result) {
        for (const auto& s : out.result->subjects) {
            const double median = s.primary.empty() ? std::nan("") : stats::median(s.primary);
            text +=
                fmt::format("  {:<10} correctness {:<7} {} samples, median {:.6g}\n", s.role,
                            driver::correctness_status_name(s.status), s.primary.size(), median);
        }
    }
    return text;  // an error is the outcome's failure, which the adapter prints
}

Outcome driver_run(const Request& r, Context& context) {
    const eval::StandaloneCall call = build_call(r);
    const store::Store store = store::Store::open_or_create(r.text("root"));
    context.report_progress("running the driver…");
    const eval::StandaloneOutcome out = eval::run_standalone_call(
        store, call, context.cancel,
        [&context](const std::string& id) { context.announce_invocation(id); });
    context.report_progress("");
    Outcome outcome{summary(out), out.status.to_json(), out.exit_code, {}};
    outcome.failure = out.error;
    return outcome;
}

}  // namespace

void add_driver_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back({{"driver"}, "Drive a workload driver directly (write and debug drivers)"});
    Param seed =
        integer_param("seed", "Seed handed to the driver; its parity picks the paired order", 0);
    seed.minimum = 0;
    Param capability =
        list_param("capability", "Driver capability (single_subject, paired_in_process)");
    capability.default_value = Json::array({"single_subject"});
    Verb v{
        {"driver", "run"},
        "One driver call, recorded as an Invocation",
        RequestDef{{
            root_param(),
            string_param("mode", "smoke (2 samples), single, or paired", "smoke"),
            string_param("case", "Case id ([A-Za-z0-9._-])", "main"),
            string_param("case_file",
                         "The case's input description (frozen, handed to the driver)"),
            string_param("reference", "The original's file or directory (snapshotted)"),
            string_param("candidate", "The candidate's file or directory (paired mode)"),
            integer_param("samples", "Samples per subject (smoke: always 2)", 5),
            seed,
            string_param("primary", "Primary metric NAME:UNIT", "latency_us:us"),
            list_param("constraint", "Constraint metric NAME:UNIT (repeatable)"),
            list_param("correctness_metric", "Correctness metric the driver reports (repeatable)"),
            capability,
            list_param(
                "env_allow",
                "Extra environment variable passed to the driver (repeatable; PATH, HOME, "
                "LANG, TMPDIR, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, PYTHONPATH always are)"),
            string_param("gpu",
                         "GPU UUID to lock for the call (serializes measurements on that GPU)"),
            number_param("command_timeout", "Seconds one driver call may run", 300.0),
            number_param("operation_timeout", "Seconds the invocation may run", 3600.0),
            number_param("resource_wait", "Seconds to wait for the GPU lock", 120.0),
            number_param("cleanup_timeout", "Seconds between SIGTERM and SIGKILL", 10.0),
            detach_param(),
            positional(list_param("argv", "The driver command (after --)")),
        }},
        &driver_run};
    v.cancellable = true;
    v.detachable = true;
    table.push_back(std::move(v));
}

}  // namespace cko::verbs
