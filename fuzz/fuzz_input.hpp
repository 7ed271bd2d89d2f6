// Shared by the libFuzzer targets: inputs as text, or as a temporary file for importers that read
// paths.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace cko::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// One file per process, rewritten for every input (importers of .json.gz and .sqlite read paths).
class InputFile {
public:
    explicit InputFile(const char* name) {
        const char* tmp = std::getenv("TMPDIR");
        dir_ = std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
               ("cko-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        path_ = dir_ / name;
    }
    ~InputFile() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    const std::filesystem::path& write(const std::uint8_t* data, std::size_t size) {
        std::ofstream(path_, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
        return path_;
    }

private:
    std::filesystem::path dir_;
    std::filesystem::path path_;
};

}  // namespace cko::fuzz
