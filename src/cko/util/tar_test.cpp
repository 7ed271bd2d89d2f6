// The ustar writer and reader: a round trip through zstd, the same bytes for the same files, and
// every hostile entry refused by name before anything lands outside the extraction directory.
#include "cko/util/tar.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/stream_file.hpp"
#include "cko/util/zstd_stream.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>

namespace cko {
namespace fs = std::filesystem;
namespace {

// A source over bytes in memory, handing them out in pieces of at most `piece` bytes (a reader
// must not assume a whole block per call).
ByteSource memory_source(const std::string& bytes, std::size_t piece = 1000) {
    auto at = std::make_shared<std::size_t>(0);
    return [&bytes, at, piece](char* buffer, std::size_t size) {
        const std::size_t n = std::min({size, piece, bytes.size() - *at});
        std::memcpy(buffer, bytes.data() + *at, n);
        *at += n;
        return n;
    };
}

std::string archive_of(const std::map<std::string, std::string>& files) {
    std::string out;
    TarWriter w([&](std::string_view b) { out.append(b); });
    for (const auto& [path, bytes] : files) {
        w.add_file(path, bytes);
    }
    w.finish();
    return out;
}

std::map<std::string, std::string> read_all(const std::string& archive, TarLimits limits = {}) {
    TarReader r(memory_source(archive), "test.tar", limits);
    std::map<std::string, std::string> files;
    while (auto e = r.next()) {
        std::string body;
        r.read_body([&](std::string_view b) { body.append(b); });
        files[e->path] = body;
    }
    return files;
}

// A raw ustar header, written here independently of the writer (a hostile archive's bytes).
std::string raw_header(const std::string& name, std::uint64_t size, char type,
                       const std::string& prefix = "") {
    std::array<char, 512> b{};
    std::memcpy(b.data(), name.data(), std::min<std::size_t>(name.size(), 100));
    std::memcpy(b.data() + 100, "0000644", 7);
    std::memcpy(b.data() + 108, "0000000", 7);
    std::memcpy(b.data() + 116, "0000000", 7);
    const std::string sz = fmt::format("{:011o}", size);
    std::memcpy(b.data() + 124, sz.data(), 11);
    std::memcpy(b.data() + 136, "00000000000", 11);
    b[156] = type;
    std::memcpy(b.data() + 257,
                "ustar\0"
                "00",
                8);
    std::memcpy(b.data() + 345, prefix.data(), std::min<std::size_t>(prefix.size(), 155));
    std::memset(b.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char c : b) {
        sum += static_cast<unsigned char>(c);
    }
    const std::string ck = fmt::format("{:06o}", sum);
    std::memcpy(b.data() + 148, ck.data(), 6);
    b[154] = '\0';
    return std::string(b.data(), b.size());
}

std::string padded(const std::string& body) {
    return body + std::string((512 - body.size() % 512) % 512, '\0');
}

// A pax record "<len> key=value\n" whose length counts its own digits.
std::string pax_record(const std::string& key_value) {
    std::size_t length = key_value.size() + 3;
    while (std::to_string(length).size() + key_value.size() + 2 != length) {
        length = std::to_string(length).size() + key_value.size() + 2;
    }
    return fmt::format("{} {}\n", length, key_value);
}

std::string pax_header(const std::string& key_value) {
    const std::string record = pax_record(key_value);
    return raw_header("././@PaxHeader", record.size(), 'x') + padded(record);
}

std::string end_blocks() {
    return std::string(1024, '\0');
}

class TarTest : public test::ScratchTest {
protected:
    // Extracts `archive` into dir_/x; returns the error code it was refused with.
    ErrorCode refusal(const std::string& archive, TarLimits limits = {}) {
        fs::remove_all(dir_ / "x");
        fs::create_directories(dir_ / "x");
        TarReader r(memory_source(archive), "hostile.tar", limits);
        const test::CaughtError e =
            test::error_thrown_by([&] { (void)extract_tar(r, dir_ / "x"); });
        if (e) {
            message_ = e->what();
        }
        return e->code();  // `internal`: accepted
    }

    std::string message_;
};

TEST_F(TarTest, FilesComeBackWithTheirBytesThroughZstd) {
    const std::string deep = "objects/" + std::string(120, 'd') + "/" + std::string(150, 'e') +
                             "/" + std::string(90, 'f') + ".txt";  // needs a pax path record
    const std::map<std::string, std::string> files{
        {"bundle.json", "{\"a\":1}"},
        {"store/empty", ""},
        {"store/block", std::string(512, 'b')},
        {"store/odd", std::string(1000, 'o')},
        {"store/long/" + std::string(90, 'n') + ".json", "split into prefix and name"},
        {deep, "deep"},
    };
    const std::string tar = archive_of(files);
    EXPECT_EQ(tar.size() % 512, 0U);
    std::string zst;
    ZstdCompressor c([&](std::string_view b) { zst.append(b); }, 10);
    for (std::size_t at = 0; at < tar.size(); at += 777) {
        c.write(std::string_view(tar).substr(at, 777));
    }
    c.finish();
    EXPECT_LT(zst.size(), tar.size());
    ZstdDecompressor d(memory_source(zst, 100), "test.tar.zst");
    TarReader r([&](char* b, std::size_t n) { return d.read(b, n); }, "test.tar.zst");
    std::map<std::string, std::string> back;
    while (auto e = r.next()) {
        std::string body;
        r.read_body([&](std::string_view b) { body.append(b); });
        EXPECT_EQ(e->size, body.size());
        back[e->path] = body;
    }
    EXPECT_EQ(back, files);
}

TEST_F(TarTest, TheSameFilesGiveTheSameBytesWithFixedOwnerModeAndTime) {
    const std::map<std::string, std::string> files{{"a/b.json", "{}"}, {"c.txt", "hello\n"}};
    const std::string one = archive_of(files);
    EXPECT_EQ(one, archive_of(files));
    EXPECT_EQ(one.substr(100, 7), "0000644");  // mode
    EXPECT_EQ(one.substr(108, 16), std::string("0000000\0"
                                               "0000000\0",
                                               16));        // uid, gid
    EXPECT_EQ(one.substr(136, 11), "00000000000");          // mtime
    EXPECT_EQ(one.substr(265, 64), std::string(64, '\0'));  // no owner names
    std::string z1;
    std::string z2;
    for (std::string* out : {&z1, &z2}) {
        ZstdCompressor c([out](std::string_view b) { out->append(b); }, 10);
        c.write(one);
        c.finish();
    }
    EXPECT_EQ(z1, z2);
}

TEST_F(TarTest, ExtractionWritesFilesAndDirectoriesInside) {
    const std::string archive =
        raw_header("d/", 0, '5') + raw_header("d/f.txt", 3, '0') + padded("abc") + end_blocks();
    TarReader r(memory_source(archive), "ok.tar");
    const auto entries = extract_tar(r, dir_);
    ASSERT_EQ(entries.size(), 2U);
    EXPECT_EQ(entries[0].path, "d");
    EXPECT_EQ(entries[0].kind, TarEntryKind::directory);
    EXPECT_EQ(test::read_file(dir_ / "d" / "f.txt"), "abc");
}

TEST_F(TarTest, PathsThatLeadOutAreRefusedNamingTheEntry) {
    const fs::path outside = dir_ / "outside.txt";
    for (const std::string name :
         {"/etc/cko-tar-test", "../outside.txt", "a/../../outside.txt", "./a", "a//b", ""}) {
        EXPECT_EQ(refusal(raw_header(name, 1, '0') + padded("x") + end_blocks()),
                  ErrorCode::unsafe_path)
            << name;
        EXPECT_NE(message_.find("\"" + name + "\""), std::string::npos) << message_;
    }
    // A prefix field that climbs out, and a control character.
    EXPECT_EQ(refusal(raw_header("x", 1, '0', "..") + padded("x") + end_blocks()),
              ErrorCode::unsafe_path);
    EXPECT_EQ(refusal(raw_header("a\nb", 1, '0') + padded("x") + end_blocks()),
              ErrorCode::unsafe_path);
    EXPECT_FALSE(fs::exists(outside));
    EXPECT_FALSE(fs::exists("/etc/cko-tar-test"));
    EXPECT_TRUE(fs::is_empty(dir_ / "x"));
}

TEST_F(TarTest, LinksDevicesAndFifosAreRefused) {
    for (const char type : {'1', '2', '3', '4', '6'}) {
        EXPECT_EQ(refusal(raw_header("evil", 0, type) + end_blocks()), ErrorCode::special_file)
            << type;
        EXPECT_NE(message_.find("\"evil\""), std::string::npos) << message_;
    }
    // GNU long names, global pax headers and pax records other than `path`.
    EXPECT_EQ(refusal(raw_header("././@LongLink", 5, 'L') + padded("evil") + end_blocks()),
              ErrorCode::unsupported_format);
    EXPECT_EQ(refusal(raw_header("g", 20, 'g') + padded("20 path=/etc/passwd\n") + end_blocks()),
              ErrorCode::unsupported_format);
    EXPECT_EQ(refusal(pax_header("linkpath=/etc/passwd") + raw_header("f", 0, '0') + end_blocks()),
              ErrorCode::unsupported_format);
    // A pax path is checked like any other; a well-formed one is read.
    EXPECT_EQ(refusal(pax_header("path=../../evil") + raw_header("f", 0, '0') + end_blocks()),
              ErrorCode::unsafe_path);
    EXPECT_NE(message_.find("\"../../evil\""), std::string::npos) << message_;
    EXPECT_EQ(read_all(pax_header("path=ok/name") + raw_header("f", 2, '0') + padded("hi") +
                       end_blocks()),
              (std::map<std::string, std::string>{{"ok/name", "hi"}}));
    EXPECT_TRUE(fs::is_empty(dir_ / "x"));
}

TEST_F(TarTest, DuplicatesAndFilesUnderFilesAreRefused) {
    EXPECT_EQ(refusal(raw_header("a", 1, '0') + padded("1") + raw_header("a", 1, '0') +
                      padded("2") + end_blocks()),
              ErrorCode::malformed_input);
    EXPECT_NE(message_.find("entry 2 \"a\""), std::string::npos) << message_;
    EXPECT_EQ(refusal(raw_header("f", 1, '0') + padded("1") + raw_header("f/g", 1, '0') +
                      padded("2") + end_blocks()),
              ErrorCode::malformed_input);
    EXPECT_NE(message_.find("\"f/g\""), std::string::npos) << message_;
}

TEST_F(TarTest, OversizeEntriesAndTotalsAreRefusedBeforeTheirBody) {
    TarLimits small;
    small.max_entry_bytes = 100;
    small.max_total_bytes = 150;
    // The header claims more than the limit: refused without reading (or needing) the body.
    EXPECT_EQ(refusal(raw_header("big", 101, '0') + end_blocks(), small),
              ErrorCode::file_too_large);
    EXPECT_NE(message_.find("\"big\""), std::string::npos) << message_;
    EXPECT_EQ(refusal(raw_header("a", 100, '0') + padded(std::string(100, 'a')) +
                          raw_header("b", 100, '0') + padded(std::string(100, 'b')) + end_blocks(),
                      small),
              ErrorCode::file_too_large);
    small = TarLimits{};
    small.max_entries = 1;
    EXPECT_EQ(refusal(raw_header("a", 0, '0') + raw_header("b", 0, '0') + end_blocks(), small),
              ErrorCode::file_too_large);
}

TEST_F(TarTest, DamagedCutShortOrExtendedArchivesAreRefused) {
    std::string bad = raw_header("a", 1, '0') + padded("x") + end_blocks();
    bad[3] = 'Z';  // the name changes, the checksum does not
    EXPECT_EQ(refusal(bad), ErrorCode::malformed_input);
    const std::string good = raw_header("a", 600, '0') + padded(std::string(600, 'a'));
    EXPECT_EQ(refusal(good.substr(0, 700)), ErrorCode::truncated_input);
    EXPECT_EQ(refusal(good), ErrorCode::truncated_input);  // no end-of-archive blocks
    EXPECT_EQ(refusal(raw_header("b", 1, '0') + padded("x") + end_blocks() +
                      raw_header("later", 1, '0') + padded("y")),
              ErrorCode::malformed_input);
    EXPECT_NE(message_.find("after the end-of-archive"), std::string::npos) << message_;
}

TEST_F(TarTest, ZstdRefusesAChangedByteAndACutStream) {
    std::string zst;
    ZstdCompressor c([&](std::string_view b) { zst.append(b); }, 3);
    c.write(archive_of({{"a", std::string(5000, 'a') + "tail"}}));
    c.finish();
    const auto drain = [](const std::string& bytes) {
        ZstdDecompressor d(memory_source(bytes), "t.tar.zst");
        std::array<char, 4096> buf{};
        while (d.read(buf.data(), buf.size()) > 0) {
        }
    };
    drain(zst);
    std::string changed = zst;
    changed[changed.size() / 2] ^= 0x20;
    EXPECT_THROW(drain(changed), Error);
    EXPECT_CKO_ERROR(drain(zst.substr(0, zst.size() - 3)), ErrorCode::truncated_input);
    EXPECT_CKO_ERROR(drain(""), ErrorCode::truncated_input);
}

TEST_F(TarTest, ACreateOnceStreamAppearsWholeOrNotAtAll) {
    const fs::path path = dir_ / "case.tar.zst";
    {
        CreateOnceStream s(path);
        s.write("part");
        EXPECT_FALSE(fs::exists(path));
    }  // never committed
    EXPECT_TRUE(fs::is_empty(dir_));
    CreateOnceStream s(path);
    s.write("whole");
    s.commit();
    FileStream in(path);
    std::array<char, 16> buf{};
    EXPECT_EQ(std::string(buf.data(), in.read(buf.data(), buf.size())), "whole");
    EXPECT_THROW(CreateOnceStream again(path), Error);
}

}  // namespace
}  // namespace cko
