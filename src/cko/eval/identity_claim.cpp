// The lowering table of identity gaps, and what it reads of a Target's environment and history.
#include "cko/eval/identity_claim.hpp"

#include "cko/eval/conclusion.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

namespace cko::eval {
namespace {

// A verdict that says something about performance; `inconclusive` and `invalid` claim nothing, so
// a window behind one cannot lower a claim.
bool firm(const std::string& verdict) {
    return verdict == "improved" || verdict == "mixed" || verdict == "regressed" ||
           verdict == "equivalent" || verdict == "below_minimum";
}

std::string text_or_empty(const Json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::size_t count_of(const Json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) {
        return 0;
    }
    return static_cast<std::size_t>(it->get<std::int64_t>());
}

// Why a comparison's window did not verify the target GPUs, or "" when it did.
std::string unverified_because(const Json& observation) {
    if (!observation.is_object()) {
        return "its record holds no observation of the target GPUs";
    }
    if (!observation.value("applied", true)) {
        return "the driver ran on a node this host's monitor does not observe";
    }
    const Json gpu = observation.value("gpu", Json());
    if (!gpu.is_object()) {
        return "no target GPU was observed";
    }
    if (const std::size_t n = count_of(gpu, "calls_without_reader"); n > 0) {
        return fmt::format("no GPU reader in {} call(s)", n);
    }
    if (const std::size_t n = count_of(gpu, "readings_missing"); n > 0) {
        return fmt::format("a target GPU was missing from {} of {} readings", n,
                           count_of(gpu, "readings"));
    }
    return "";
}

}  // namespace

int IdentityClaim::rank() const {
    int r = claim_rank(target_layer);
    for (const auto& g : gaps) {
        r = std::min(r, claim_rank(g.caps_at));
    }
    return r;
}

std::string IdentityClaim::word() const {
    return claim_word(rank());
}

bool IdentityClaim::lowers() const {
    return rank() < claim_rank(target_layer);
}

Json IdentityClaim::to_json() const {
    Json list = Json::array();
    for (const auto& g : gaps) {
        list.push_back(Json{{"gap", identity_gap_name(g.gap)},
                            {"caps_at", store::lowered_to_name(g.caps_at)},
                            {"reason", g.reason}});
    }
    return Json{{"supports", word()}, {"lowers", lowers()}, {"gaps", list}};
}

IdentityClaim identity_claim(const MeasuredIdentity& id, store::ClaimLayer target_layer) {
    IdentityClaim claim{target_layer, {}};
    if (!id.machine_id_known) {
        claim.gaps.push_back({IdentityGap::no_machine_id, store::LoweredTo::kernel,
                              "no machine id was recorded (host.machine_id is null), so the "
                              "evidence names no machine and cannot be told apart from another "
                              "host with the same CPU and GPUs: kernel at most"});
    }
    if (id.in_container) {
        const std::string hints = id.container_hints.empty()
                                      ? std::string("host.in_container")
                                      : fmt::format("{}", fmt::join(id.container_hints, "; "));
        claim.gaps.push_back(
            {IdentityGap::container, store::LoweredTo::kernel,
             fmt::format("measured inside a container ({}), whose host's other tenants and CPU "
                         "and memory limits cko could not see, while a whole workload's time "
                         "depends on them: kernel at most",
                         hints)});
    }
    if (!id.unverified_gpu_windows.empty()) {
        claim.gaps.push_back(
            {IdentityGap::gpu_unverified, store::LoweredTo::unconfirmed,
             fmt::format("the target GPUs were not verified during {}, so a foreign process or a "
                         "held-low clock could not be excluded: unconfirmed",
                         fmt::join(id.unverified_gpu_windows, "; "))});
    }
    return claim;
}

int combined_claim_rank(int stated_rank, const IdentityClaim& identity) {
    return std::min(stated_rank, identity.rank());
}

std::string claim_word(int rank) {
    if (rank < claim_rank(store::ClaimLayer::kernel)) {
        return std::string(store::lowered_to_name(store::LoweredTo::unconfirmed));
    }
    return std::string(store::claim_layer_name(
        static_cast<store::ClaimLayer>(std::min(rank, claim_rank(store::ClaimLayer::serving)))));
}

MeasuredIdentity measured_identity(const Json& environment, bool gpu_target,
                                   const Json& comparisons) {
    MeasuredIdentity id;
    const Json host = environment.value("host", Json::object());
    id.machine_id_known = !text_or_empty(host, "machine_id").empty();
    id.in_container = host.value("in_container", Json(false)) == Json(true);
    for (const auto& hint : host.value("container_hints", Json::array())) {
        if (hint.is_string()) {
            id.container_hints.push_back(hint.get<std::string>());
        }
    }
    if (!gpu_target) {
        return id;
    }
    for (const auto& c : comparisons) {
        const std::string type = text_or_empty(c, "type");
        const std::string verdict = text_or_empty(c, "verdict");
        if ((type != "confirm" && type != "audit") || text_or_empty(c, "state") != "succeeded" ||
            !firm(verdict)) {
            continue;
        }
        const std::string why = unverified_because(c.value("observation", Json()));
        if (!why.empty()) {
            id.unverified_gpu_windows.push_back(
                fmt::format("{} {} ({}): {}", type, text_or_empty(c, "id"), verdict, why));
        }
    }
    return id;
}

}  // namespace cko::eval
