// Checking a bundle: the tar reader refuses hostile entries, each file is compared with the
// manifest as it is extracted, then the extracted store gets the store's own fsck.
#include "cko/store/bundle_check.hpp"

#include "cko/store/records.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/stream_file.hpp"
#include "cko/util/tar.hpp"
#include "cko/util/zstd_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kManifestCap = std::uint64_t{64} << 20;

BundleManifest read_manifest(TarReader& tar) {
    const auto first = tar.next();
    if (!first || first->kind != TarEntryKind::file || first->path != kBundleManifestName) {
        throw Error(ErrorCode::malformed_input,
                    fmt::format("{}: not a cko bundle: its first entry is {}, not {}", tar.name(),
                                first ? fmt::format("\"{}\"", first->path) : "missing",
                                kBundleManifestName),
                    Json{{"file", tar.name()}});
    }
    if (first->size > kManifestCap) {
        throw Error(ErrorCode::file_too_large,
                    fmt::format("{}: its {} has {} bytes, more than the {}-byte limit", tar.name(),
                                kBundleManifestName, first->size, kManifestCap),
                    Json{{"file", tar.name()}});
    }
    std::string text;
    tar.read_body([&](std::string_view piece) { text.append(piece); });
    return BundleManifest::from_json(parse_json_strict(text, {}, kBundleManifestName),
                                     kBundleManifestName);
}

// Every entry after the manifest: a listed file of the store is extracted and compared with the
// manifest; anything else is reported and left in the archive.
void extract_store(TarReader& tar, const fs::path& dir, const BundleManifest& manifest,
                   FsckReport& report) {
    std::map<std::string, const BundleManifest::File*> listed;
    for (const auto& f : manifest.files) {
        listed[f.path] = &f;
    }
    const std::string prefix = fmt::format("{}/", kBundleStoreDir);
    std::set<std::string> seen;
    while (const auto entry = tar.next()) {
        if (entry->kind == TarEntryKind::directory) {
            continue;  // directories follow from the files
        }
        const auto it = entry->path.starts_with(prefix)
                            ? listed.find(entry->path.substr(prefix.size()))
                            : listed.end();
        if (it == listed.end()) {
            report.findings.push_back({"extra_file", entry->path,
                                       "in the bundle, not in its manifest (not extracted)", true});
            continue;
        }
        const BundleManifest::File& file = *it->second;
        seen.insert(file.path);
        if (entry->size != file.size) {
            report.findings.push_back(
                {"altered", file.path,
                 fmt::format("{} bytes in the bundle != manifest {}", entry->size, file.size),
                 true});
            continue;
        }
        const std::string got = extract_tar_entry(tar, *entry, dir);
        ++report.files_checked;
        report.bytes_hashed += file.size;
        if (got != file.sha256) {
            report.findings.push_back(
                {"altered", file.path,
                 fmt::format("sha256 {} != bundle manifest {}", got, file.sha256), true});
        }
    }
    for (const auto& f : manifest.files) {
        if (!seen.contains(f.path)) {
            report.findings.push_back(
                {"missing", f.path, "in the bundle's manifest, not in the bundle", true});
        }
    }
}

// Whether `digest` is what the store recorded for `rel`: the ledger's first digest for a ledgered
// file, the snapshot manifest's for a snapshot's file; true for a file neither records.
bool recorded_as(const Store& store, const std::string& rel, const std::string& digest) {
    if (layout::is_snapshot_file(rel)) {
        const std::string rest = rel.substr(layout::kObjectsDir.size() + 1);
        const std::string snapshot = rest.substr(0, rest.find('/'));
        const std::string files = layout::snapshot_files(snapshot);
        try {
            const Snapshot snap = load_snapshot(store, snapshot);
            for (const auto& e : snap.entries) {
                if ((snap.kind == "file" ? files : files + "/" + e.path) == rel) {
                    return e.sha256 == digest;
                }
            }
        } catch (const Error&) {
            return false;  // its manifest is damaged: fsck says so
        }
        return false;
    }
    try {
        store.check_ledgered(rel, digest);
        return true;
    } catch (const Error&) {
        return false;
    }
}

// A redacted file is a note, not damage, when its bytes are exactly its marker and the original
// digest it names is the one the store recorded; the store fsck's `altered` for it is replaced.
void check_redactions(const Store& store, const BundleManifest& manifest, FsckReport& report) {
    for (const auto& r : manifest.redacted) {
        const auto file =
            std::find_if(manifest.files.begin(), manifest.files.end(),
                         [&](const BundleManifest::File& f) { return f.path == r.path; });
        std::string problem;
        if (file == manifest.files.end() || file->sha256 != sha256_hex(redaction_marker(r))) {
            problem =
                "listed as redacted, but its bytes are not the redaction marker the "
                "manifest describes";
        } else if (!layout::is_redactable(r.path)) {
            problem = "listed as redacted, but it is a record no bundle may redact";
        } else if (!recorded_as(store, r.path, r.original_sha256)) {
            problem = fmt::format(
                "redacted, but the original sha256 it names ({}) is not the one the store "
                "recorded",
                r.original_sha256);
        }
        if (problem.empty()) {
            std::erase_if(report.findings, [&](const FsckFinding& f) {
                return f.path == r.path && f.kind == "altered";
            });
        }
        report.findings.push_back(
            {problem.empty() ? "redacted" : "altered", r.path,
             problem.empty() ? fmt::format("withheld ({}); the original had sha256 {}, {} bytes",
                                           r.reason, r.original_sha256, r.original_size)
                             : problem,
             !problem.empty()});
    }
}

std::string first_line_sha256(const fs::path& ledger) {
    const std::string text = read_file_capped(ledger, std::uint64_t{1} << 30);
    const std::size_t nl = text.find('\n');
    return nl == std::string::npos ? "" : sha256_hex(std::string_view(text).substr(0, nl));
}

// The manifest's own claims: its id, and the store, ledger state and Target it names.
void check_manifest_claims(const Store& store, const BundleManifest& m, FsckReport& report) {
    const std::string content = m.content_digest();
    if (content != m.id) {
        report.findings.push_back(
            {"altered", std::string(kBundleManifestName),
             fmt::format("its id {} is not the sha256 of its content ({}): the manifest was "
                         "changed",
                         m.id, content),
             true});
    }
    if (report.ledger_head != m.ledger_head ||
        first_line_sha256(store.root() / kLedger) != m.store_id) {
        report.findings.push_back(
            {"altered", std::string(kLedger),
             fmt::format("its first and last lines are not the store_id {} and ledger_head {} "
                         "the manifest names",
                         m.store_id, m.ledger_head),
             true});
    }
    try {
        if (read_target_record(store).id != m.target_id) {
            report.findings.push_back(
                {"altered", std::string(layout::kTarget),
                 fmt::format("not the Target {} the manifest names", m.target_id), true});
        }
    } catch (const Error&) {
        // A damaged target.json is already an `altered` finding of the store's fsck.
    }
}

void extract_and_check(const fs::path& bundle, const fs::path& dir, BundleManifest& manifest,
                       FsckReport& report) {
    std::error_code ec;
    if (!fs::is_regular_file(bundle, ec)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("bundle: {} is not a file; give the .tar.zst `cko bundle` wrote",
                                bundle.string()),
                    Json{{"field", "bundle"}, {"bundle", bundle.string()}});
    }
    FileStream in(bundle);
    ZstdDecompressor zstd(in.source(), bundle.string());
    TarReader tar([&zstd](char* b, std::size_t n) { return zstd.read(b, n); }, bundle.string());
    manifest = read_manifest(tar);
    FsckReport extraction;
    extract_store(tar, dir, manifest, extraction);
    const fs::path root = dir / kBundleStoreDir;
    for (const std::string_view d : layout::layout_dirs()) {
        make_directories(root / d);  // an empty one has no file in the archive
    }
    if (!fs::exists(root / kStoreMarker) || !fs::exists(root / kLedger)) {
        report = extraction;
    } else {
        const Store store = Store::open(root);
        report = fsck_store(store);
        report.findings.insert(report.findings.begin(), extraction.findings.begin(),
                               extraction.findings.end());
        check_manifest_claims(store, manifest, report);
        check_redactions(store, manifest, report);
    }
    report.bundle = Json{{"id", manifest.id},
                         {"cko_version", manifest.cko_version},
                         {"store_id", manifest.store_id},
                         {"target_id", manifest.target_id},
                         {"ledger_head", manifest.ledger_head},
                         {"files", manifest.files.size()},
                         {"redacted", manifest.redacted.size()},
                         {"left_out", manifest.left_out.size()}};
}

}  // namespace

OpenedBundle::OpenedBundle(const fs::path& bundle) : dir_(make_temp_dir("cko-bundle")) {
    try {
        extract_and_check(bundle, dir_, manifest_, report_);
    } catch (...) {
        remove_tree_forcibly(dir_);
        throw;
    }
}

OpenedBundle::~OpenedBundle() {
    remove_tree_forcibly(dir_);
}

Store OpenedBundle::store() const {
    return Store::open(dir_ / kBundleStoreDir);
}

FsckReport fsck_bundle(const fs::path& bundle) {
    const OpenedBundle opened(bundle);
    return opened.report();
}

}  // namespace cko::store
