// SHA-256 (OpenSSL libcrypto) of bytes, files and streams, hex encoding, and content ids.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace cko {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(std::string_view bytes);
    // Finishes the digest; the object cannot be updated afterwards.
    [[nodiscard]] std::array<std::uint8_t, 32> finish();
    [[nodiscard]] std::string finish_hex();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

[[nodiscard]] std::string hex_encode(std::span<const std::uint8_t> bytes);
[[nodiscard]] std::string sha256_hex(std::string_view bytes);
[[nodiscard]] std::string sha256_hex(std::istream& in);
[[nodiscard]] std::string sha256_file_hex(const std::filesystem::path& path);
// Hashes what is left to read from an open descriptor (the caller keeps and closes it).
[[nodiscard]] std::string sha256_fd_hex(int fd);

// "<prefix>-<first 16 hex digits of sha256(canonical_json(value))>": the same record content
// always gets the same id.
[[nodiscard]] std::string content_id(std::string_view prefix, const nlohmann::json& value);

}  // namespace cko
