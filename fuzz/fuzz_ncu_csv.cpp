// libFuzzer: an NCU CSV export is parsed (and printed as text facts and as streamed JSON) or
// refused with cko::Error.
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "fuzz_input.hpp"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const cko::profile::ncu::NcuReport report =
            cko::profile::ncu::parse_ncu_csv(cko::fuzz::as_text(data, size));
        std::ostringstream out;
        cko::profile::ncu::write_report_json(report, out);
        (void)cko::Json::parse(out.str());  // the streamed document must be JSON
        for (const auto& launch : report.launches) {
            (void)cko::profile::ncu::roofline_input(launch);
        }
    } catch (const cko::Error&) {
    }
    return 0;
}
