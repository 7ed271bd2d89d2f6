// SHA-256 against the FIPS 180-2 vectors, streams and files agree with bytes, ids are stable.
#include "cko/util/sha256.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace cko {
namespace {

TEST(Sha256, FipsVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAsInPiecesEqualsOneShot) {
    Sha256 h;
    const std::string chunk(1000, 'a');
    for (int i = 0; i < 1000; ++i) {
        h.update(chunk);
    }
    EXPECT_EQ(h.finish_hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, StreamAndFileAgreeWithBytes) {
    const std::string data(200000, 'q');
    std::istringstream in(data);
    EXPECT_EQ(sha256_hex(in), sha256_hex(data));
    const test::TempDir dir;
    const auto path = dir / "data";
    write_file_create_once(path, data);
    EXPECT_EQ(sha256_file_hex(path), sha256_hex(data));
    std::filesystem::remove(path);
    EXPECT_THROW((void)sha256_file_hex(path), Error);
}

TEST(Sha256, HexEncoding) {
    const std::uint8_t bytes[] = {0x00, 0x0f, 0xa5, 0xff};
    EXPECT_EQ(hex_encode(bytes), "000fa5ff");
}

TEST(ContentId, DependsOnContentNotKeyOrder) {
    const nlohmann::json a{{"x", 1}, {"y", "z"}};
    const nlohmann::json b = nlohmann::json::parse(R"({"y":"z","x":1})");
    EXPECT_EQ(content_id("exp", a), content_id("exp", b));
    EXPECT_NE(content_id("exp", a), content_id("exp", nlohmann::json{{"x", 2}, {"y", "z"}}));
    const std::string id = content_id("exp", a);
    EXPECT_EQ(id.size(), 4 + 16u);
    EXPECT_EQ(id.substr(0, 4), "exp-");
    EXPECT_EQ(id.substr(4), sha256_hex(R"({"x":1,"y":"z"})").substr(0, 16));
}

}  // namespace
}  // namespace cko
