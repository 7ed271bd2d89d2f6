// Lowered conclusions: the strict reader and writer of conclusion-v1 and their listing.
#include "cko/store/conclusion_record.hpp"

#include "cko/store/record_fields.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <algorithm>

namespace cko::store {

inline constexpr std::string_view kConclusionFormat = "cko/conclusion-v1";

ConclusionRecord ConclusionRecord::from_json(const Json& j, std::string_view file) {
    const detail::Fields f(j, file, "$");
    f.only({"format_version", "id", "lowered_from", "lowered_to", "reason", "audit", "champion",
            "lowered_unix_ns"});
    f.format_version(kConclusionFormat);
    ConclusionRecord c;
    c.id = f.text("id");
    c.lowered_from = f.word<ClaimLayer>("lowered_from");
    c.lowered_to = f.word<LoweredTo>("lowered_to");
    c.reason = f.text("reason");
    if (c.reason.empty()) {
        f.fail("reason", "is empty");
    }
    if (f.has("audit")) {
        const detail::Fields a = f.child("audit");
        a.only({"id", "verdict"});
        c.audit = Audit{a.text("id"), a.text("verdict")};
    }
    c.champion = f.text("champion");
    c.lowered_unix_ns = f.integer("lowered_unix_ns");
    return c;
}

Json ConclusionRecord::to_json() const {
    Json j{{"format_version", kConclusionFormat},
           {"lowered_from", claim_layer_name(lowered_from)},
           {"lowered_to", lowered_to_name(lowered_to)},
           {"reason", reason},
           {"champion", champion},
           {"lowered_unix_ns", lowered_unix_ns}};
    if (!id.empty()) {
        j["id"] = id;
    }
    if (audit) {
        j["audit"] = Json{{"id", audit->id}, {"verdict", audit->verdict}};
    }
    return j;
}

ConclusionRecord read_conclusion_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "conclusion id");
    const std::string rel = layout::conclusion_record(id);
    if (!store.exists(rel)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("no lowered conclusion {} in {}", id, store.root().string()),
                    Json{{"id", std::string(id)}, {"path", rel}});
    }
    return ConclusionRecord::from_json(store.read_record(rel), rel);
}

std::vector<ConclusionRecord> list_conclusions(const Store& store) {
    std::vector<ConclusionRecord> out;
    for (const auto& id : store.record_ids(layout::kConclusionsDir, "low")) {
        out.push_back(read_conclusion_record(store, id));
    }
    std::sort(out.begin(), out.end(), [](const ConclusionRecord& a, const ConclusionRecord& b) {
        return a.lowered_unix_ns != b.lowered_unix_ns ? a.lowered_unix_ns < b.lowered_unix_ns
                                                      : a.id < b.id;
    });
    return out;
}

}  // namespace cko::store
