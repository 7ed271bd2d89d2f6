// SASS facts per kernel: instruction and opcode counts, signature presence and counts.
#include "cko/compiler/sass_report.hpp"

#include "cko/compiler/sass_signatures.hpp"

namespace cko::compiler {
namespace {

profile::Fact count_fact(const SassKernel& k, std::string id, std::uint64_t n) {
    profile::Fact f;
    f.id = std::move(id);
    f.value = static_cast<double>(n);
    f.unit = profile::BaseUnit::count;
    f.scope.kernel = k.name;
    f.scope.kernel_mangled = k.symbol;
    return f;
}

}  // namespace

SassReport make_sass_report(SassListing listing, profile::Source source, std::string input_kind) {
    SassReport report;
    report.listing = std::move(listing);
    report.source = std::move(source);
    report.input_kind = std::move(input_kind);
    for (std::size_t i = 0; i < report.listing.kernels.size(); ++i) {
        const SassKernel& k = report.listing.kernels[i];
        SassKernelFacts kf;
        kf.index = i;
        kf.facts.push_back(count_fact(k, "sass.instructions", k.instructions));
        for (const SassSignature& sig : sass_signatures()) {
            const std::uint64_t n = signature_count(sig, k);
            kf.facts.push_back(count_fact(k, "sass.has." + std::string(sig.name), n > 0 ? 1 : 0));
            kf.facts.push_back(count_fact(k, "sass.count." + std::string(sig.name), n));
        }
        for (const auto& [opcode, n] : k.opcode_counts) {
            kf.facts.push_back(count_fact(k, "sass.opcode." + opcode, n));
        }
        report.kernels.push_back(std::move(kf));
    }
    return report;
}

Json sass_report_to_json(const SassReport& report) {
    Json kernels = Json::array();
    for (const SassKernelFacts& kf : report.kernels) {
        const SassKernel& k = report.listing.kernels[kf.index];
        Json signatures = Json::object();
        for (const SassSignature& sig : sass_signatures()) {
            signatures[std::string(sig.name)] = signature_count(sig, k);
        }
        Json facts = Json::array();
        for (const profile::Fact& f : kf.facts) {
            facts.push_back(profile::fact_to_json(f));
        }
        kernels.push_back(Json{{"symbol", k.symbol},
                               {"name", k.name},
                               {"arch", k.arch.empty() ? Json() : Json(k.arch)},
                               {"instructions", k.instructions},
                               {"opcode_counts", k.opcode_counts},
                               {"mnemonic_counts", k.mnemonic_counts},
                               {"signatures", signatures},
                               {"facts", facts}});
    }
    return Json{{"format_version", "cko/sass-report-v1"},
                {"evidence_stage", "lowered_code"},
                {"source", profile::source_to_json(report.source)},
                {"input_kind", report.input_kind},
                {"dialect", std::string(sass_dialect_name(report.listing.dialect))},
                {"architectures", report.listing.architectures},
                {"kernels", kernels},
                {"unrecognized_lines", report.listing.unrecognized_lines},
                {"first_unrecognized", report.listing.first_unrecognized}};
}

}  // namespace cko::compiler
