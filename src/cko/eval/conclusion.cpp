// Lowered conclusions: the rules of `cko conclusion lower` and how a lowering is stated.
#include "cko/eval/conclusion.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/field_problems.hpp"
#include "cko/eval/target.hpp"
#include "cko/store/records.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

namespace cko::eval {
namespace {

// The audit a lowering cites: it must be a finished audit of this store that did not say
// `improved` (an improved audit upholds the champion: there is nothing to lower on it).
store::ConclusionRecord::Audit cited_audit(const store::Store& store, const std::string& id) {
    require_safe_name(id, "audit");
    if (!id.starts_with("inv-") || !store.exists(store::layout::invocation_request(id))) {
        throw Error(ErrorCode::not_found,
                    fmt::format("audit: \"{}\" is no invocation of this store; cite the audit "
                                "invocation (inv-…, see cko ls) or leave --audit out",
                                id),
                    Json{{"field", "audit"}, {"id", id}});
    }
    const store::InvocationRecord request = store::read_invocation_record(store, id);
    if (request.kind != "audit") {
        field_error(ErrorCode::invalid_argument, "audit",
                    fmt::format("{} is a {} invocation, not an audit", id, request.kind),
                    "cite an audit invocation (cko audit --root R), or leave --audit out");
    }
    if (!store.exists(store::layout::invocation_result(id))) {
        field_error(ErrorCode::invalid_argument, "audit",
                    fmt::format("audit {} has not finished", id),
                    fmt::format("wait for it (cko wait {}) and cite it then", id));
    }
    const store::InvocationResultRecord result = store::read_invocation_result_record(store, id);
    const std::string verdict = result.outputs.value("verdict", "");
    if (verdict == "improved") {
        field_error(ErrorCode::invalid_argument, "audit",
                    fmt::format("audit {} says `improved`: the champion still beats the original, "
                                "so it gives no ground to lower the conclusion",
                                id),
                    "cite an audit that did not uphold the champion, or leave --audit out and "
                    "give the reason alone");
    }
    return {id, verdict};
}

}  // namespace

int claim_rank(store::ClaimLayer layer) {
    return static_cast<int>(layer);
}

int claim_rank(store::LoweredTo word) {
    return word == store::LoweredTo::kernel ? claim_rank(store::ClaimLayer::kernel) : -1;
}

std::string StatedClaim::word() const {
    return lowered ? std::string(store::lowered_to_name(lowered->lowered_to))
                   : std::string(store::claim_layer_name(target_layer));
}

int StatedClaim::rank() const {
    return lowered ? claim_rank(lowered->lowered_to) : claim_rank(target_layer);
}

StatedClaim stated_claim(const store::Store& store, store::ClaimLayer target_layer) {
    StatedClaim claim{target_layer, std::nullopt};
    // Each lowering goes lower than the one before, so the latest is the lowest.
    std::vector<store::ConclusionRecord> all = store::list_conclusions(store);
    if (!all.empty()) {
        claim.lowered = std::move(all.back());
    }
    return claim;
}

Json lower_conclusion(const Target& target, const LowerOptions& o) {
    const store::Store& store = target.store();
    store::LoweredTo to = store::LoweredTo::unconfirmed;
    FieldProblems problems(ErrorCode::invalid_argument);
    problems.check(
        [&] { to = closed_word<store::LoweredTo>(ErrorCode::invalid_argument, "to", o.to); });
    problems.check([&] {
        if (o.reason.empty()) {
            field_error(ErrorCode::invalid_argument, "reason", "missing",
                        "say why the conclusion is lowered (--reason TEXT)");
        }
        require_free_text(o.reason, "reason");
    });
    problems.throw_if_any();
    std::optional<store::ConclusionRecord::Audit> audit;
    if (!o.audit.empty()) {
        audit = cited_audit(store, o.audit);
    }
    const store::StoreLock lock = store.lock_named("conclusion");
    const StatedClaim now = stated_claim(store, target.spec().claim_layer);
    if (claim_rank(to) >= now.rank()) {
        field_error(ErrorCode::invalid_argument, "to",
                    fmt::format("the conclusion states {} now{}; lowering it to {} would not "
                                "lower it",
                                now.word(),
                                now.lowered ? " (lowered by " + now.lowered->id + ")"
                                            : std::string(" (the Target's claim layer)"),
                                o.to),
                    now.rank() > claim_rank(store::LoweredTo::kernel)
                        ? "choose kernel or unconfirmed"
                        : (now.rank() == claim_rank(store::LoweredTo::kernel)
                               ? "choose unconfirmed"
                               : "it is unconfirmed already: nothing is below it"));
    }
    store::ConclusionRecord record;
    // `now.rank() > -1` here, so the claim stated now is a layer.
    record.lowered_from = static_cast<store::ClaimLayer>(now.rank());
    record.lowered_to = to;
    record.reason = o.reason;
    record.audit = audit;
    record.champion = read_champion(store).experiment_id.value_or("original");
    record.lowered_unix_ns = unix_nanoseconds_now();
    record.id = content_id("low", record.to_json());
    const Json written = record.to_json();
    (void)store.write_record(store::layout::conclusion_record(record.id), written);
    return written;
}

Json lowering_history_entry(const store::ConclusionRecord& r) {
    return Json{{"type", "lower"},
                {"id", r.id},
                {"t_unix_s", r.lowered_unix_ns / 1000000000},
                {"t_unix_ns", r.lowered_unix_ns},
                {"lowered_from", store::claim_layer_name(r.lowered_from)},
                {"lowered_to", store::lowered_to_name(r.lowered_to)},
                {"reason", r.reason},
                {"audit", r.audit ? r.audit->id : std::string()},
                {"audit_verdict", r.audit ? r.audit->verdict : std::string()},
                {"champion", r.champion}};
}

std::string lowering_text(const Json& e) {
    const std::string audit = e.value("audit", "");
    const std::string verdict = e.value("audit_verdict", "");
    return fmt::format("lowered from {} to {} ({}): {}{}", e.value("lowered_from", ""),
                       e.value("lowered_to", ""), e.value("id", ""), e.value("reason", ""),
                       audit.empty()
                           ? std::string()
                           : fmt::format("; cites audit {} ({})", audit,
                                         verdict.empty() ? std::string("no verdict") : verdict));
}

std::string lowering_history_line(const std::string& when, const Json& e) {
    return fmt::format(
        "{:<9} {:<10} {:<22} conclusion {} -> {} (champion {}){} — {}\n", when, "lower",
        e.value("id", ""), e.value("lowered_from", ""), e.value("lowered_to", ""),
        e.value("champion", ""),
        e.value("audit", "").empty() ? std::string() : " on audit " + e.value("audit", ""),
        e.value("reason", ""));
}

}  // namespace cko::eval
