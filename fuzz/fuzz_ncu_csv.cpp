// libFuzzer: an NCU CSV export is parsed (and printed as text facts and as streamed JSON) or
// refused with cko::Error; a parsed export's document must be JSON that gives back every metric
// of every launch as the text holds it.
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_document.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "fuzz_input.hpp"

#include <cstdlib>
#include <optional>
#include <sstream>

namespace {

// The document's metrics of each launch are for_each_metric's, in order (std::abort otherwise:
// a cko::Error here is a bug too, not a refusal).
void check_metrics(const cko::profile::ncu::NcuReport& report, const cko::Json& doc) {
    try {
        const cko::profile::ncu::NcuDocumentMetrics metrics(doc);
        for (std::size_t i = 0; i < report.launches.size(); ++i) {
            const auto got = metrics.metrics(i);
            std::size_t n = 0;
            cko::profile::ncu::for_each_metric(
                report, report.launches[i], [&](const cko::profile::ncu::MetricView& m) {
                    if (n >= got.size() || got[n].value != m.value || got[n].name != m.name) {
                        std::abort();
                    }
                    ++n;
                });
            if (n != got.size()) {
                std::abort();
            }
        }
    } catch (const cko::Error&) {
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::optional<cko::profile::ncu::NcuReport> report;
    std::ostringstream out;
    try {
        report = cko::profile::ncu::parse_ncu_csv(cko::fuzz::as_text(data, size));
        cko::profile::ncu::write_report_json(*report, out);
        for (const auto& launch : report->launches) {
            (void)cko::profile::ncu::roofline_input(launch);
        }
    } catch (const cko::Error&) {
        return 0;
    }
    check_metrics(*report, cko::Json::parse(out.str()));  // the streamed document must be JSON
    return 0;
}
