// libFuzzer: bytes as a tar archive (through zstd first when they start with its magic), read and
// extracted by util/tar's checking reader: it extracts or throws cko::Error, and what it extracts
// is only regular files and directories inside its directory.
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/tar.hpp"
#include "cko/util/zstd_stream.hpp"
#include "fuzz_input.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

namespace {
namespace fs = std::filesystem;

// One directory per process; each input is extracted into base/x, which is emptied first.
struct Scratch {
    fs::path base = cko::make_temp_dir("cko-fuzz-tar");
    ~Scratch() { cko::remove_tree_forcibly(base); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Scratch scratch;
    const fs::path dir = scratch.base / "x";
    cko::remove_tree_forcibly(dir);
    fs::create_directories(dir);
    const std::string_view bytes = cko::fuzz::as_text(data, size);
    std::size_t at = 0;
    const cko::ByteSource raw = [&](char* buffer, std::size_t n) {
        const std::size_t k = std::min(n, bytes.size() - at);
        std::memcpy(buffer, bytes.data() + at, k);
        at += k;
        return k;
    };
    const bool zstd = bytes.starts_with(std::string_view("\x28\xb5\x2f\xfd", 4));
    try {
        std::optional<cko::ZstdDecompressor> z;
        if (zstd) {
            z.emplace(raw, "fuzz.tar.zst");
        }
        const cko::TarLimits limits{std::uint64_t{1} << 20, std::uint64_t{4} << 20, 1000};
        cko::TarReader reader(
            zstd ? cko::ByteSource([&](char* b, std::size_t n) { return z->read(b, n); }) : raw,
            "fuzz.tar", limits);
        (void)cko::extract_tar(reader, dir);
    } catch (const cko::Error&) {
    }
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const auto status = e.symlink_status();
        if (!fs::is_regular_file(status) && !fs::is_directory(status)) {
            __builtin_trap();  // a link or a special file was extracted
        }
    }
    for (const auto& e : fs::directory_iterator(scratch.base)) {
        if (e.path() != dir) {
            __builtin_trap();  // something landed beside the extraction directory
        }
    }
    return 0;
}
