// libFuzzer: the strict JSON reader either parses or throws cko::Error; nothing else escapes.
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const cko::Json value = cko::parse_json_strict(cko::fuzz::as_text(data, size),
                                                       cko::JsonLimits{1 << 20, 64}, "fuzz");
        (void)value.dump();  // what it accepted must print
    } catch (const cko::Error&) {
    }
    return 0;
}
