// libFuzzer: a (mutated) Nsight Systems SQLite export is summarised, printed, or refused with
// cko::Error; the bytes go to a temporary file, as the importer reads paths.
#include "cko/profile/nsys/nsys_export.hpp"
#include "cko/util/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static cko::fuzz::InputFile file("export.sqlite");
    try {
        const auto e = cko::profile::nsys::import_nsys_export(file.write(data, size));
        (void)e.to_json().dump();
    } catch (const cko::Error&) {
    }
    return 0;
}
