// libFuzzer: a Target spec (cko.toml) is read or refused with cko::Error naming the field.
#include "cko/eval/target_spec.hpp"
#include "cko/util/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        (void)cko::eval::parse_target_spec(cko::fuzz::as_text(data, size), "/fuzz/target/cko.toml");
    } catch (const cko::Error&) {
    }
    return 0;
}
