// A scratch directory per test, removed afterwards even where files were made read-only.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

namespace cko::store::testing {

inline void make_writable_and_remove(const std::filesystem::path& p) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) {
        return;
    }
    ::chmod(p.c_str(), 0755);
    for (auto it = std::filesystem::recursive_directory_iterator(p, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_symlink()) {
            ::chmod(it->path().c_str(), 0755);
        }
    }
    std::filesystem::remove_all(p, ec);
}

class ScratchTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "cko-store-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { make_writable_and_remove(dir_); }

    void put(const std::filesystem::path& p, const std::string& text) {
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
    }
    static std::string slurp(const std::filesystem::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    // Flips one bit of byte `offset` of a (possibly read-only) file.
    static void flip_byte(const std::filesystem::path& p, std::size_t offset) {
        ::chmod(p.c_str(), 0644);
        std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(static_cast<std::streamoff>(offset));
        char c = 0;
        f.get(c);
        f.seekp(static_cast<std::streamoff>(offset));
        f.put(static_cast<char>(c ^ 0x01));
    }

    std::filesystem::path dir_;
};

}  // namespace cko::store::testing
