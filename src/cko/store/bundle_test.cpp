// A bundle of a small store: verified after the root is gone, the same bytes twice, a changed
// byte inside named, redactions told from damage, bad requests and hostile archives refused.
#include "cko/store/bundle.hpp"

#include "cko/store/bundle_check.hpp"
#include "cko/store/records.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/tar.hpp"
#include "cko/util/zstd_stream.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

namespace cko::store {
namespace {
namespace fs = std::filesystem;

const std::string kInv = "inv-0123456789abcdef";

// Every file under `dir` with its bytes: what "the store did not change" compares.
std::map<std::string, std::string> tree_of(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file()) {
            out[e.path().lexically_relative(dir).string()] = test::read_file(e.path());
        }
    }
    return out;
}

std::string unzstd(const std::string& bytes) {
    std::size_t at = 0;
    ZstdDecompressor d(
        [&](char* b, std::size_t n) {
            const std::size_t k = std::min(n, bytes.size() - at);
            std::memcpy(b, bytes.data() + at, k);
            at += k;
            return k;
        },
        "bundle");
    std::string out;
    std::array<char, 4096> buffer{};
    for (std::size_t n = d.read(buffer.data(), buffer.size()); n > 0;
         n = d.read(buffer.data(), buffer.size())) {
        out.append(buffer.data(), n);
    }
    return out;
}

std::string zstd(const std::string& bytes) {
    std::string out;
    ZstdCompressor c([&](std::string_view b) { out.append(b); }, 3);
    c.write(bytes);
    c.finish();
    return out;
}

class BundleTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        put(dir_ / "src" / "k.cu", "kernel");
        store_ = std::make_unique<Store>(Store::create(dir_ / "art"));
        const Snapshot snap = take_snapshot(*store_, dir_ / "src");
        TargetRecord t;
        t.id = "tgt-0123456789abcdef";
        t.spec = Json{{"name", "bundle-test"}};
        t.spec_sha256 = std::string(64, 'a');
        t.spec_dir = (dir_ / "src").string();
        t.environment = Json::object();
        t.created_by = "cko test";
        store_->write_record(layout::kTarget, t.to_json());
        store_->write_record(layout::invocation_request(kInv),
                             Json{{"format_version", "cko/t-v1"}, {"id", kInv}});
        stderr_ = layout::call_stderr(layout::call_dir(kInv, 1));
        put(store_->root() / stderr_, "secret-host.example: driver says hello\n");
        store_->ledger_file(stderr_);
        put(store_->root() / layout::kHandoff, "my notes\n");
        snapshot_file_ = layout::snapshot_files(snap.digest) + "/k.cu";
    }

    fs::path bundle(const std::string& name, const BundleOptions& options = {}) {
        const fs::path out = dir_ / name;
        (void)write_bundle(*store_, out, options);
        return out;
    }
    // The bundle's bytes decompressed, edited and compressed again (a tamperer's tools).
    void edit_bundle(const fs::path& path, const std::function<void(std::string&)>& edit) {
        std::string tar = unzstd(slurp(path));
        edit(tar);
        fs::remove(path);
        put(path, zstd(tar));
    }
    static bool names(const FsckReport& r, const std::string& kind, const std::string& path,
                      bool damage) {
        return std::any_of(r.findings.begin(), r.findings.end(), [&](const FsckFinding& f) {
            return f.kind == kind && f.path == path && f.damage == damage;
        });
    }

    std::unique_ptr<Store> store_;
    std::string stderr_;
    std::string snapshot_file_;
};

TEST_F(BundleTest, ABundleVerifiesWithItsRootGoneAndTheRootIsNeverWritten) {
    const auto before = tree_of(store_->root());
    const fs::path out = dir_ / "case.tar.zst";
    const BundleWritten w = write_bundle(*store_, out, {});
    EXPECT_EQ(tree_of(store_->root()), before);
    EXPECT_EQ(w.manifest.id, w.manifest.content_digest());
    EXPECT_EQ(w.manifest.target_id, "tgt-0123456789abcdef");
    EXPECT_EQ(w.bytes, fs::file_size(out));
    std::vector<std::string> paths;
    for (const auto& f : w.manifest.files) {
        paths.push_back(f.path);
    }
    EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
    for (const std::string& p : {std::string(layout::kTarget), std::string(kLedger),
                                 std::string(kStoreMarker), stderr_, snapshot_file_}) {
        EXPECT_TRUE(std::binary_search(paths.begin(), paths.end(), p)) << p;
    }
    ASSERT_EQ(w.manifest.left_out.size(), 1U);
    EXPECT_EQ(w.manifest.left_out[0].path, layout::kHandoff);

    remove_tree_forcibly(store_->root());
    const OpenedBundle opened(out);
    EXPECT_FALSE(opened.report().damaged()) << opened.report().to_text();
    EXPECT_EQ(opened.report().bundle["id"], w.manifest.id);
    EXPECT_EQ(read_target_record(opened.store()).id, "tgt-0123456789abcdef");
    EXPECT_NE(opened.report().to_text().find("the bundle is consistent"), std::string::npos);
}

TEST_F(BundleTest, TheSameStoreGivesTheSameBytes) {
    const fs::path one = bundle("one.tar.zst");
    const fs::path two = bundle("two.tar.zst");
    EXPECT_EQ(slurp(one), slurp(two));
}

TEST_F(BundleTest, AChangedByteInARecordInsideIsDamageNamingTheFile) {
    const fs::path out = bundle("case.tar.zst");
    edit_bundle(out, [](std::string& tar) {
        const std::size_t at = tar.find("\"name\":\"bundle-test\"");
        ASSERT_NE(at, std::string::npos);
        tar[at + 9] = 'B';  // bundle-test -> Bundle-test; the tar header's checksum still holds
    });
    const FsckReport r = fsck_bundle(out);
    EXPECT_TRUE(r.damaged());
    EXPECT_TRUE(names(r, "altered", std::string(layout::kTarget), true)) << r.to_text();
    EXPECT_NE(r.to_text().find("the bundle is damaged"), std::string::npos);
}

TEST_F(BundleTest, AnEditedManifestNoLongerMatchesItsId) {
    const fs::path out = bundle("case.tar.zst");
    edit_bundle(out, [](std::string& tar) {
        const std::size_t at = tar.find("\"cko_version\":\"");
        ASSERT_NE(at, std::string::npos);
        tar[at + 15] = tar[at + 15] == '9' ? '8' : '9';
    });
    const FsckReport r = fsck_bundle(out);
    EXPECT_TRUE(names(r, "altered", std::string(kBundleManifestName), true)) << r.to_text();
}

TEST_F(BundleTest, ARedactedFileIsANoteWithItsOriginalDigest) {
    const fs::path out = bundle("case.tar.zst", {{stderr_, snapshot_file_}, "customer hostnames"});
    const std::string tar = unzstd(slurp(out));
    EXPECT_EQ(tar.find("secret-host"), std::string::npos);
    EXPECT_EQ(tar.find("kernel"), std::string::npos);
    const FsckReport r = fsck_bundle(out);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    EXPECT_TRUE(names(r, "redacted", stderr_, false)) << r.to_text();
    EXPECT_TRUE(names(r, "redacted", snapshot_file_, false)) << r.to_text();
    EXPECT_EQ(r.bundle["redacted"], 2);
}

// A forger who redacts a file they altered, naming the altered bytes' digest as the original and
// making the manifest and its id agree, is caught: the original is not what the ledger recorded.
TEST_F(BundleTest, ARedactionCannotHideAnAlteredFile) {
    const fs::path out = bundle("case.tar.zst", {{stderr_}, "customer hostnames"});
    std::vector<std::pair<std::string, std::string>> entries;
    {
        const std::string tar = unzstd(slurp(out));
        std::size_t at = 0;
        TarReader r(
            [&](char* b, std::size_t n) {
                const std::size_t k = std::min(n, tar.size() - at);
                std::memcpy(b, tar.data() + at, k);
                at += k;
                return k;
            },
            "case.tar.zst");
        while (const auto e = r.next()) {
            std::string body;
            r.read_body([&](std::string_view piece) { body.append(piece); });
            entries.emplace_back(e->path, body);
        }
    }
    BundleManifest m = BundleManifest::from_json(parse_json_strict(entries[0].second), "x");
    ASSERT_EQ(m.redacted.size(), 1U);
    m.redacted[0].original_sha256 = sha256_hex("what the forger says was there");
    const std::string marker = redaction_marker(m.redacted[0]);
    for (auto& f : m.files) {
        if (f.path == stderr_) {
            f.sha256 = sha256_hex(marker);
            f.size = marker.size();
        }
    }
    m.id = m.content_digest();
    std::string tar;
    TarWriter w([&](std::string_view b) { tar.append(b); });
    w.add_file(entries[0].first, canonical_json(m.to_json()));
    for (std::size_t i = 1; i < entries.size(); ++i) {
        w.add_file(entries[i].first,
                   entries[i].first == "store/" + stderr_ ? marker : entries[i].second);
    }
    w.finish();
    fs::remove(out);
    put(out, zstd(tar));
    const FsckReport r = fsck_bundle(out);
    EXPECT_TRUE(names(r, "altered", stderr_, true)) << r.to_text();
    EXPECT_FALSE(names(r, "redacted", stderr_, false)) << r.to_text();
}

TEST_F(BundleTest, RedactionsAreRefusedWithoutAReasonOrOfARecordTheReportReads) {
    const auto refused = [&](const BundleOptions& o) {
        const test::CaughtError e =
            test::error_thrown_by([&] { (void)write_bundle(*store_, dir_ / "r.tar.zst", o); });
        if (!e) {
            return std::string("accepted");
        }
        EXPECT_FALSE(fs::exists(dir_ / "r.tar.zst"));
        return e->details().value("field", "");
    };
    EXPECT_EQ(refused({{stderr_}, ""}), "redact_reason");
    EXPECT_EQ(refused({{}, "why"}), "redact_reason");
    EXPECT_EQ(refused({{std::string(layout::kTarget)}, "why"}), "redact");
    EXPECT_EQ(refused({{layout::invocation_request(kInv)}, "why"}), "redact");
    EXPECT_EQ(refused({{"no/such/file"}, "why"}), "redact");
    EXPECT_TRUE(layout::is_redactable(layout::call_process(layout::call_dir(kInv, 2))));
    EXPECT_TRUE(layout::is_redactable(layout::call_output_dir(layout::call_dir(kInv, 2)) + "/x"));
    EXPECT_FALSE(layout::is_redactable(
        layout::driver_result(layout::call_output_dir(layout::call_dir(kInv, 2)))));
    EXPECT_FALSE(layout::is_redactable(layout::call_request(layout::call_dir(kInv, 2))));
    EXPECT_FALSE(layout::is_redactable(layout::invocation_result(kInv)));
}

TEST_F(BundleTest, AnOutThatExistsLiesInsideTheRootOrIsMisnamedIsRefused) {
    const auto field_of = [&](const fs::path& out) {
        const test::CaughtError e =
            test::error_thrown_by([&] { (void)write_bundle(*store_, out, {}); });
        return e ? std::string(error_code_name(e->code())) : std::string("accepted");
    };
    put(dir_ / "taken.tar.zst", "mine");
    EXPECT_EQ(field_of(dir_ / "taken.tar.zst"), "already_exists");
    EXPECT_EQ(slurp(dir_ / "taken.tar.zst"), "mine");
    EXPECT_EQ(field_of(store_->root() / "case.tar.zst"), "invalid_argument");
    EXPECT_EQ(field_of(dir_ / "case.zip"), "invalid_argument");
    EXPECT_EQ(field_of(dir_ / "nowhere" / "case.tar.zst"), "not_found");
    // A damaged store is refused before anything is written.
    flip_byte(store_->root() / layout::kTarget, 5);
    EXPECT_EQ(field_of(dir_ / "case.tar.zst"), "tampered_record");
    EXPECT_FALSE(fs::exists(dir_ / "case.tar.zst"));
}

TEST_F(BundleTest, AHostileBundleIsRefusedAndNothingLandsOutside) {
    std::string tar;
    TarWriter w([&](std::string_view b) { tar.append(b); });
    w.add_file("bundle.json", "{}");
    w.finish();
    put(dir_ / "empty.tar.zst", zstd(tar));
    EXPECT_CKO_ERROR((void)fsck_bundle(dir_ / "empty.tar.zst"), ErrorCode::invalid_record);
    // A valid bundle with an entry climbing out appended before its end blocks.
    const fs::path out = bundle("case.tar.zst");
    edit_bundle(out, [](std::string& t) {
        std::string evil;
        std::array<char, 512> h{};
        const std::string name = "store/../../escaped.txt";
        std::memcpy(h.data(), name.data(), name.size());
        std::memcpy(h.data() + 100, "0000644", 7);
        std::memcpy(h.data() + 124, "00000000001", 11);
        h[156] = '0';
        std::memcpy(h.data() + 257,
                    "ustar\0"
                    "00",
                    8);
        std::memset(h.data() + 148, ' ', 8);
        unsigned sum = 0;
        for (char c : h) {
            sum += static_cast<unsigned char>(c);
        }
        const std::string ck = fmt::format("{:06o}", sum);
        std::memcpy(h.data() + 148, ck.data(), 6);
        evil = std::string(h.data(), h.size()) + "x" + std::string(511, '\0');
        t.insert(t.size() - 1024, evil);
    });
    EXPECT_CKO_ERROR((void)fsck_bundle(out), ErrorCode::unsafe_path, "store/../../escaped.txt");
    EXPECT_FALSE(fs::exists(dir_ / "escaped.txt"));
    EXPECT_FALSE(fs::exists(fs::temp_directory_path() / "escaped.txt"));
}

}  // namespace
}  // namespace cko::store
