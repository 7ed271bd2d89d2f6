// libFuzzer: a SASS text dump (cuobjdump --dump-sass or nvdisasm) goes through `load_sass` as
// `cko sass FILE` reads it (binary sniffing, the text checks, the listing, the facts), then its
// document and a diff against itself are printed, or it is refused with cko::Error. Bytes that
// look like a CUDA binary ask for a disassembler that does not exist: refused, never run.
#include "cko/compiler/sass_diff.hpp"
#include "cko/compiler/sass_input.hpp"
#include "cko/compiler/sass_report.hpp"
#include "cko/util/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static cko::fuzz::InputFile file("listing.sass");
    cko::compiler::SassInputOptions options;
    options.cuobjdump = "/nonexistent/cko-fuzz/cuobjdump";
    try {
        const cko::compiler::SassReport report =
            cko::compiler::load_sass(file.write(data, size), options);
        (void)cko::compiler::sass_report_to_json(report).dump();  // throws on invalid UTF-8
        const cko::compiler::SassDiff diff = cko::compiler::diff_sass(report, report);
        (void)cko::compiler::sass_diff_to_json(diff, report, report).dump();
    } catch (const cko::Error&) {
    }
    return 0;
}
