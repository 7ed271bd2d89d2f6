// SHA-256 through OpenSSL's EVP interface.
#include "cko/util/sha256.hpp"

#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace cko {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
    bool finished = false;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
    impl_->ctx = EVP_MD_CTX_new();
    if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
        throw Error(ErrorCode::internal, "cannot initialise SHA-256 (OpenSSL EVP)");
    }
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(impl_->ctx);
}

void Sha256::update(std::string_view bytes) {
    if (impl_->finished) {
        throw Error(ErrorCode::internal, "SHA-256 updated after finish");
    }
    if (EVP_DigestUpdate(impl_->ctx, bytes.data(), bytes.size()) != 1) {
        throw Error(ErrorCode::internal, "SHA-256 update failed");
    }
}

std::array<std::uint8_t, 32> Sha256::finish() {
    std::array<std::uint8_t, 32> out{};
    unsigned int len = 0;
    if (impl_->finished || EVP_DigestFinal_ex(impl_->ctx, out.data(), &len) != 1 || len != 32) {
        throw Error(ErrorCode::internal, "SHA-256 finish failed");
    }
    impl_->finished = true;
    return out;
}

std::string Sha256::finish_hex() {
    const auto digest = finish();
    return hex_encode(digest);
}

std::string hex_encode(std::span<const std::uint8_t> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (std::uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xF]);
    }
    return out;
}

std::string sha256_hex(std::string_view bytes) {
    Sha256 h;
    h.update(bytes);
    return h.finish_hex();
}

std::string sha256_hex(std::istream& in) {
    Sha256 h;
    std::string buffer(std::size_t{1} << 16, '\0');
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        h.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
    }
    if (in.bad()) {
        throw Error(ErrorCode::io_error, "read error while hashing a stream");
    }
    return h.finish_hex();
}

std::string sha256_fd_hex(int fd) {
    Sha256 h;
    std::string buffer(std::size_t{1} << 16, '\0');
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int err = errno;
            throw Error(ErrorCode::io_error,
                        fmt::format("read error while hashing: {}", std::strerror(err)),
                        nlohmann::json{{"errno", err}});
        }
        if (n == 0) {
            break;
        }
        h.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    }
    return h.finish_hex();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw Error(
            err == ENOENT ? ErrorCode::not_found : ErrorCode::io_error,
            fmt::format("cannot open {} for hashing: {}", path.string(), std::strerror(err)),
            nlohmann::json{{"path", path.string()}});
    }
    try {
        std::string hex = sha256_fd_hex(fd);
        ::close(fd);
        return hex;
    } catch (const Error& e) {
        ::close(fd);
        throw Error(ErrorCode::io_error, fmt::format("{}: {}", path.string(), e.what()),
                    nlohmann::json{{"path", path.string()}});
    }
}

std::string content_id(std::string_view prefix, const nlohmann::json& value) {
    return fmt::format("{}-{}", prefix, sha256_hex(canonical_json(value)).substr(0, 16));
}

}  // namespace cko
