// fsck: every ledgered file re-hashed, every snapshot payload checked against its manifest.
#include "cko/store/fsck.hpp"

#include "cko/store/snapshot.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <sstream>

namespace cko::store {
namespace fs = std::filesystem;
namespace {

struct LedgerLine {
    std::string sha256;
    std::uint64_t size = 0;
};

// Files that are mutable by design or live outside the ledger's scope.
bool is_unledgered_by_design(const std::string& rel) {
    return rel == ".lock" || rel == std::string(kLedger) || rel == std::string(kStoreMarker) ||
           rel == "champion/current.json" || rel == "handoff.md" || rel.ends_with("/events.jsonl") ||
           rel.ends_with("/monitor.jsonl") || rel.find("/workspace/") != std::string::npos;
}

void check_snapshot(const Store& store, const std::string& digest, FsckReport& report) {
    const std::string dir = snapshot_dir(digest);
    Snapshot snap;
    try {
        snap = load_snapshot(store, digest);
    } catch (const Error& e) {
        report.findings.push_back({"altered", dir + "/manifest.json", e.what(), true});
        return;
    }
    std::set<std::string> listed;
    for (const auto& e : snap.entries) {
        const std::string rel = snap.kind == "file" ? dir + "/files" : dir + "/files/" + e.path;
        listed.insert(rel);
        const fs::path p = store.root() / rel;
        std::error_code ec;
        if (!fs::is_regular_file(fs::symlink_status(p, ec))) {
            report.findings.push_back({"missing", rel, "listed in the manifest, not on disk", true});
            continue;
        }
        const std::string got = sha256_file_hex(p);
        ++report.files_checked;
        report.bytes_hashed += fs::file_size(p);
        if (got != e.sha256) {
            report.findings.push_back({"altered", rel, fmt::format("sha256 {} != manifest {}", got, e.sha256), true});
        }
    }
    if (snap.kind == "directory") {
        for (const auto& entry : fs::recursive_directory_iterator(store.root() / dir / "files")) {
            const std::string rel = fs::relative(entry.path(), store.root()).string();
            if (!entry.is_directory() && !listed.contains(rel)) {
                report.findings.push_back({"extra_file", rel, "not in the snapshot manifest", true});
            }
        }
    }
}

}  // namespace

bool FsckReport::damaged() const {
    for (const auto& f : findings) {
        if (f.damage) {
            return true;
        }
    }
    return false;
}

Json FsckReport::to_json() const {
    Json list = Json::array();
    for (const auto& f : findings) {
        list.push_back(Json{{"kind", f.kind}, {"path", f.path}, {"detail", f.detail}, {"damage", f.damage}});
    }
    return Json{{"format_version", "cko/fsck-v1"}, {"files_checked", files_checked},
                {"bytes_hashed", bytes_hashed}, {"damaged", damaged()}, {"findings", list}};
}

std::string FsckReport::to_text() const {
    std::string out = fmt::format("checked {} files ({} bytes)\n", files_checked, bytes_hashed);
    for (const auto& f : findings) {
        out += fmt::format("  {:<7} {:<11} {}  {}\n", f.damage ? "DAMAGE" : "note", f.kind, f.path, f.detail);
    }
    out += damaged() ? "the store is damaged\n" : "the store is consistent\n";
    return out;
}

FsckReport fsck_store(const Store& store) {
    FsckReport report;
    const fs::path root = store.root();
    // The ledger: one canonical line per create-once file.
    std::map<std::string, LedgerLine> ledger;
    const std::string text = read_file_capped(root / kLedger, std::uint64_t{1} << 30);
    std::istringstream lines(text);
    std::string line;
    std::size_t number = 0;
    while (std::getline(lines, line)) {
        ++number;
        try {
            const Json j = parse_json_strict(line, {}, fmt::format("{} line {}", kLedger, number));
            ledger[j.at("path").get<std::string>()] = {j.at("sha256").get<std::string>(), j.at("size").get<std::uint64_t>()};
        } catch (const std::exception& e) {
            report.findings.push_back({"unparsable", std::string(kLedger), fmt::format("line {}: {}", number, e.what()), true});
        }
    }
    for (const auto& [rel, expected] : ledger) {
        const fs::path p = root / rel;
        std::error_code ec;
        if (!fs::is_regular_file(fs::symlink_status(p, ec))) {
            report.findings.push_back({"missing", rel, "in the ledger, not on disk", true});
            continue;
        }
        const std::string got = sha256_file_hex(p);
        ++report.files_checked;
        report.bytes_hashed += fs::file_size(p);
        if (got != expected.sha256) {
            report.findings.push_back({"altered", rel, fmt::format("sha256 {} != ledger {}", got, expected.sha256), true});
        }
    }
    // Snapshots carry their own manifest; everything else must be in the ledger or mutable by design.
    for (const auto& entry : fs::directory_iterator(root / "objects" / "sha256")) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(".staging-")) {
            report.findings.push_back({"stale_temp", "objects/sha256/" + name, "left by an interrupted snapshot", false});
            continue;
        }
        check_snapshot(store, name, report);
    }
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const std::string rel = fs::relative(it->path(), root).string();
        if (rel == "objects") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory() || ledger.contains(rel) || is_unledgered_by_design(rel)) {
            continue;
        }
        if (it->path().filename().string().find(".tmp-") != std::string::npos) {
            report.findings.push_back({"stale_temp", rel, "left by an interrupted write", false});
            continue;
        }
        // A record renamed into place whose ledger line a crash prevented: still checkable as JSON.
        bool parses = true;
        if (it->path().extension() == ".json") {
            try {
                (void)read_json_file(it->path());
            } catch (const Error&) {
                parses = false;
            }
        }
        report.findings.push_back({parses ? "unledgered" : "unparsable", rel,
                                   parses ? "not in the ledger (a write interrupted before its ledger line)"
                                          : "not in the ledger and not valid JSON",
                                   !parses});
    }
    return report;
}

}  // namespace cko::store
