// Writing a bundle: plan which files go in (ledgered records, snapshots, the few unledgered files a
// reader needs), hash them into the manifest, then stream manifest and files through tar and zstd.
#include "cko/store/bundle.hpp"

#include "cko/store/fsck.hpp"
#include "cko/store/records.hpp"
#include "cko/util/build_info.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/stream_file.hpp"
#include "cko/util/tar.hpp"
#include "cko/util/utf8.hpp"
#include "cko/util/zstd_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kLedgerCap = std::uint64_t{1} << 30;

// The ledger as read once: its bytes (bundled as read), the paths it lists, where its chain
// begins and ends.
struct LedgerCopy {
    std::string bytes;
    std::set<std::string> paths;
    std::string first_line_sha256;
    std::string last_line_sha256;
};

LedgerCopy copy_ledger(const Store& store) {
    LedgerCopy copy;
    copy.bytes = read_file_capped(store.real_path_of(kLedger), kLedgerCap);
    std::size_t begin = 0;
    std::size_t number = 0;
    while (begin < copy.bytes.size()) {
        const std::size_t nl = copy.bytes.find('\n', begin);
        if (nl == std::string::npos) {
            break;  // a torn tail (fsck notes it): not a line yet
        }
        const std::string_view line(copy.bytes.data() + begin, nl - begin);
        const Json j = parse_json_strict(line, {}, fmt::format("{} line {}", kLedger, ++number));
        copy.paths.insert(j.at("path").get<std::string>());
        copy.last_line_sha256 = sha256_hex(line);
        if (copy.first_line_sha256.empty()) {
            copy.first_line_sha256 = copy.last_line_sha256;
        }
        begin = nl + 1;
    }
    return copy;
}

struct Plan {
    std::vector<std::string> files;  // sorted
    std::vector<BundleManifest::LeftOut> left_out;
};

// Why a directory is left out whole, or "" to descend into it.
std::string left_out_directory(const std::string& rel, const std::string& name) {
    if (name.starts_with(".staging-")) {
        return "a directory staged by an interrupted operation, never published";
    }
    if (layout::is_invocation_workspace(rel)) {
        return "an invocation's workspace: materialized subjects, not evidence";
    }
    return "";
}

// Why a regular file stays out of the bundle, or "" when it goes in.
std::string left_out_file(const std::string& rel, const LedgerCopy& ledger) {
    if (layout::is_snapshot_file(rel) || ledger.paths.contains(rel) ||
        layout::is_bundled_unledgered(rel)) {
        return "";
    }
    if (rel == layout::kHandoff) {
        return "the decision maker's own handoff: never read by cko, not evidence";
    }
    return "not in the ledger: not evidence (cko fsck notes it)";
}

Plan plan_bundle(const Store& store, const LedgerCopy& ledger) {
    Plan plan;
    const fs::path root = store.root();
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const std::string rel = it->path().lexically_relative(root).string();
        std::error_code ec;
        const auto status = it->symlink_status(ec);
        std::string why;
        if (layout::is_lock(rel)) {
            it.disable_recursion_pending();
            continue;
        }
        if (fs::is_directory(status)) {
            why = left_out_directory(rel, it->path().filename().string());
            if (!why.empty()) {
                it.disable_recursion_pending();
            }
        } else if (fs::is_symlink(status)) {
            why = "a symbolic link: never followed";
        } else if (!fs::is_regular_file(status)) {
            why = "not a regular file";
        } else {
            why = left_out_file(rel, ledger);
            if (why.empty()) {
                plan.files.push_back(rel);
            }
        }
        if (!why.empty()) {
            plan.left_out.push_back({rel, why});
        }
    }
    std::sort(plan.files.begin(), plan.files.end());
    std::sort(plan.left_out.begin(), plan.left_out.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    return plan;
}

fs::path checked_out(const Store& store, const fs::path& out) {
    const fs::path absolute = fs::absolute(out);
    if (!absolute.filename().string().ends_with(".tar.zst")) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("out: {} does not end in .tar.zst; name the bundle case.tar.zst "
                                "(a zstd-compressed tar)",
                                out.string()),
                    Json{{"field", "out"}, {"out", out.string()}});
    }
    std::error_code ec;
    if (!fs::is_directory(absolute.parent_path(), ec)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("out: the folder {} does not exist; create it or choose another",
                                absolute.parent_path().string()),
                    Json{{"field", "out"}, {"out", out.string()}});
    }
    const fs::path real = fs::weakly_canonical(absolute, ec);
    const std::string root = store.root().string() + "/";
    if ((real.string() + "/").starts_with(root)) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("out: {} lies inside the artifact root {}; cko never writes into "
                                "the store it bundles: choose a path outside it",
                                out.string(), store.root().string()),
                    Json{{"field", "out"}, {"out", out.string()}});
    }
    if (fs::exists(fs::symlink_status(absolute, ec))) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("out: {} already exists; a bundle is written once: choose another "
                                "path or remove it",
                                out.string()),
                    Json{{"field", "out"}, {"out", out.string()}});
    }
    return absolute;
}

void refuse_damaged(const Store& store) {
    const FsckReport health = fsck_store(store);
    if (!health.damaged()) {
        return;
    }
    std::vector<std::string> damage;
    for (const auto& f : health.findings) {
        if (f.damage) {
            damage.push_back(fmt::format("{} {}", f.kind, f.path));
        }
    }
    throw Error(ErrorCode::tampered_record,
                fmt::format("{} is damaged ({}); a bundle of it would not verify: run cko fsck "
                            "--root {} and repair it first",
                            store.root().string(), fmt::join(damage, ", "), store.root().string()),
                Json{{"root", store.root().string()}, {"damage", damage}});
}

// The redactions asked for, each checked: bundled, redactable, with a reason.
std::map<std::string, std::string> checked_redactions(const Plan& plan,
                                                      const BundleOptions& options) {
    if (options.redact.empty() != options.redact_reason.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    options.redact.empty()
                        ? "redact_reason: given without a file to redact; add --redact PATH"
                        : "redact_reason: --redact needs a reason (--redact-reason TEXT), recorded "
                          "in the manifest for each file withheld",
                    Json{{"field", "redact_reason"}});
    }
    require_free_text(options.redact_reason, "redact_reason");
    std::map<std::string, std::string> out;
    for (const std::string& path : options.redact) {
        if (!std::binary_search(plan.files.begin(), plan.files.end(), path)) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("redact: {} is not a file of the bundle; give a path relative "
                                    "to the root, as `cko bundle --json` lists them under "
                                    "manifest.files",
                                    path),
                        Json{{"field", "redact"}, {"path", path}});
        }
        if (!layout::is_redactable(path)) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("redact: {} is a record the report or fsck reads; only a "
                                    "driver call's captures and outputs (not its request or "
                                    "result.json), an invocation's profiler files and monitor "
                                    "log, and a snapshot's files may be redacted",
                                    path),
                        Json{{"field", "redact"}, {"path", path}});
        }
        out[path] = utf8_or_replaced(options.redact_reason);
    }
    return out;
}

// sha256 and size of one file of the store, read piece by piece without following a link.
std::pair<std::string, std::uint64_t> hash_store_file(const Store& store, const std::string& rel) {
    FileStream in(store.real_path_of(rel), true);
    Sha256 hash;
    std::array<char, 64 * 1024> buffer{};
    std::uint64_t size = 0;
    for (std::size_t n = in.read(buffer.data(), buffer.size()); n > 0;
         n = in.read(buffer.data(), buffer.size())) {
        hash.update(std::string_view(buffer.data(), n));
        size += n;
    }
    return {hash.finish_hex(), size};
}

BundleManifest manifest_of(const Store& store, const LedgerCopy& ledger, const Plan& plan,
                           const std::map<std::string, std::string>& redactions) {
    BundleManifest m;
    m.cko_version = build_version();
    m.store_id = ledger.first_line_sha256;
    m.ledger_head = ledger.last_line_sha256;
    m.target_id = read_target_record(store).id;
    m.left_out = plan.left_out;
    for (const std::string& rel : plan.files) {
        auto [digest, size] =
            rel == kLedger ? std::pair{sha256_hex(ledger.bytes), std::uint64_t{ledger.bytes.size()}}
                           : hash_store_file(store, rel);
        if (const auto r = redactions.find(rel); r != redactions.end()) {
            const BundleManifest::Redaction redaction{rel, digest, size, r->second};
            const std::string marker = redaction_marker(redaction);
            m.redacted.push_back(redaction);
            digest = sha256_hex(marker);
            size = marker.size();
        }
        m.files.push_back({rel, digest, size});
    }
    m.id = m.content_digest();
    return m;
}

// One store file into the archive, hashed again on the way: a file that changed since the
// manifest was made is refused rather than bundled under a digest it no longer has.
void archive_store_file(TarWriter& tar, const Store& store, const BundleManifest::File& file) {
    FileStream in(store.real_path_of(file.path), true);
    const std::string name = fmt::format("{}/{}", kBundleStoreDir, file.path);
    tar.begin_file(name, file.size);
    Sha256 hash;
    std::array<char, 64 * 1024> buffer{};
    std::uint64_t size = 0;
    for (std::size_t n = in.read(buffer.data(), buffer.size()); n > 0 && size + n <= file.size;
         n = in.read(buffer.data(), buffer.size())) {
        hash.update(std::string_view(buffer.data(), n));
        tar.write(std::string_view(buffer.data(), n));
        size += n;
    }
    if (size != file.size || hash.finish_hex() != file.sha256) {
        throw Error(ErrorCode::tampered_record,
                    fmt::format("{} changed while it was bundled; nothing was written: run cko "
                                "bundle again when no operation writes to the store",
                                file.path),
                    Json{{"path", file.path}});
    }
    tar.end_file();
}

}  // namespace

BundleWritten write_bundle(const Store& store, const fs::path& out, const BundleOptions& options) {
    const fs::path target = checked_out(store, out);
    if (!store.exists(layout::kTarget)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("no Target is frozen in {}: nothing to bundle (cko target freeze "
                                "first)",
                                store.root().string()),
                    Json{{"root", store.root().string()}});
    }
    refuse_damaged(store);
    const LedgerCopy ledger = copy_ledger(store);
    const Plan plan = plan_bundle(store, ledger);
    const auto redactions = checked_redactions(plan, options);
    BundleWritten written{manifest_of(store, ledger, plan, redactions), target, 0, 0};

    CreateOnceStream file(target);
    ZstdCompressor zstd(file.sink(), kBundleZstdLevel);
    TarWriter tar([&zstd](std::string_view bytes) { zstd.write(bytes); });
    tar.add_file(kBundleManifestName, canonical_json(written.manifest.to_json()));
    std::map<std::string, const BundleManifest::Redaction*> redacted;
    for (const auto& r : written.manifest.redacted) {
        redacted[r.path] = &r;
    }
    for (const BundleManifest::File& f : written.manifest.files) {
        const std::string name = fmt::format("{}/{}", kBundleStoreDir, f.path);
        if (const auto r = redacted.find(f.path); r != redacted.end()) {
            tar.add_file(name, redaction_marker(*r->second));
        } else if (f.path == kLedger) {
            tar.add_file(name, ledger.bytes);
        } else {
            archive_store_file(tar, store, f);
        }
        written.store_bytes += f.size;
    }
    tar.finish();
    zstd.finish();
    file.commit();
    written.bytes = file.bytes_written();
    return written;
}

}  // namespace cko::store
