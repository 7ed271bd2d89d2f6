// libFuzzer: an NCU CSV export is parsed (and printed as text facts and as streamed JSON) or
// refused with cko::Error; a parsed export's document must be JSON that gives back every metric
// of every launch as the text holds it. Its raw rows shared with a second thread at a guessed row
// start (row_split.hpp) must give the same document, or the same error.
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_document.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/profile/ncu/row_split.hpp"
#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "fuzz_input.hpp"

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

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

// The document of `text` parsed with `split`, or "error: " and the error's message.
std::string document_or_error(std::string_view text, cko::profile::ncu::RowSplit& split) {
    try {
        std::ostringstream out;
        cko::profile::ncu::write_report_json(
            cko::profile::ncu::parse_ncu_text_split(text, nullptr, {}, split), out);
        return out.str();
    } catch (const cko::Error& e) {
        return std::string("error: ") + e.what();
    }
}

// A tail at the first line break followed by a quote from a point the first byte chooses: the
// same document or error as the rows read by one thread.
void check_split(std::string_view text) {
    std::string repaired;  // as parse_ncu_text reads it: invalid UTF-8 replaced first
    if (!cko::profile::is_valid_utf8(text)) {
        (void)cko::profile::repair_utf8(text, repaired);
        text = repaired;
    }
    if (text.size() < 2) {
        return;
    }
    const std::size_t from = text.size() * static_cast<unsigned char>(text[0]) / 256;
    const std::size_t nl = text.find("\n\"", from);
    if (nl == std::string_view::npos) {
        return;
    }
    cko::profile::ncu::RowSplit none;
    const std::string one = document_or_error(text, none);
    cko::profile::ncu::RowSplit split(/*wait_for_pick=*/true);
    std::thread tail([&] {
        split.wait_until_open_or_closed();
        split.pick_at(nl + 1);
        cko::profile::ncu::read_raw_tail(text, {}, split);
    });
    const std::string two = document_or_error(text, split);
    tail.join();
    if (two != one) {
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
        check_split(cko::fuzz::as_text(data, size));
        return 0;
    }
    if (report->layout == cko::profile::ncu::NcuLayout::raw) {  // only a raw page's rows are shared
        check_split(cko::fuzz::as_text(data, size));
    }
    check_metrics(*report, cko::Json::parse(out.str()));  // the streamed document must be JSON
    return 0;
}
