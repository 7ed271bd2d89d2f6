// libFuzzer: a driver's result.json against a paired request: validated or refused with cko::Error.
#include "cko/driver/protocol.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "fuzz_input.hpp"

namespace {

cko::driver::Request paired_request() {
    cko::driver::Request r;
    r.mode = cko::driver::Mode::paired;
    r.case_id = "main";
    r.subjects = {{"reference", "original", "/r"}, {"candidate", "exp-1", "/c"}};
    r.order = {"candidate", "reference"};
    r.samples = 3;
    r.primary = {"latency_us", "us"};
    r.constraints = {{"peak_mem_bytes", "byte"}};
    r.correctness_metrics = {"max_rel_err"};
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const cko::driver::Request request = paired_request();
    try {
        const cko::Json result = cko::parse_json_strict(
            cko::fuzz::as_text(data, size), cko::JsonLimits{1 << 20, 64}, "result.json");
        const cko::driver::Result validated =
            cko::driver::validate_result(request, result, {"result.json"});
        (void)validated.to_json().dump();
    } catch (const cko::Error&) {
    }
    return 0;
}
