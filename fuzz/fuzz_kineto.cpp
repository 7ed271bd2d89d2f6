// libFuzzer: a Kineto trace (plain or gzip) is summarised, its document printed, or it is refused
// with cko::Error.
#include "cko/profile/kineto/kineto_trace.hpp"
#include "cko/util/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static cko::fuzz::InputFile file("trace.json");
    try {
        const auto trace = cko::profile::kineto::import_kineto_trace(file.write(data, size));
        (void)cko::profile::kineto::kineto_traces_to_json({trace}).dump();
    } catch (const cko::Error&) {
    }
    return 0;
}
