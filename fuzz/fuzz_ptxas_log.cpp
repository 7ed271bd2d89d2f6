// libFuzzer: compiler resource output (`ptxas -v` log or `cuobjdump -res-usage`) is read as the
// `cko ptxas` verb reads it (a file, checked as text), parsed, and its document printed, or it is
// refused with cko::Error.
#include "cko/compiler/ptxas_log.hpp"
#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static cko::fuzz::InputFile file("ptxas.txt");
    try {
        const cko::compiler::TextInput in =
            cko::compiler::read_text_input(file.write(data, size), 64 << 20, "ptxas log");
        const cko::compiler::PtxasReport report =
            cko::compiler::parse_resource_report(in.text, in.sha256, in.path);
        (void)cko::compiler::ptxas_report_to_json(report).dump();  // throws on invalid UTF-8
    } catch (const cko::Error&) {
    }
    return 0;
}
