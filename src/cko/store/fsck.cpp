// fsck: every ledgered file re-hashed, every snapshot payload checked against its manifest.
#include "cko/store/fsck.hpp"

#include "cko/store/records.hpp"
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

// True if no component of `rel` below the root is a symlink: fsck never reads through one.
bool inside_without_links(const Store& store, const std::string& rel) {
    try {
        (void)store.real_path_of(rel);
        return true;
    } catch (const Error&) {
        return false;
    }
}

void check_snapshot(const Store& store, const std::string& digest, FsckReport& report) {
    Snapshot snap;
    try {
        snap = load_snapshot(store, digest);
    } catch (const Error& e) {
        report.findings.push_back({"altered", layout::snapshot_manifest(digest), e.what(), true});
        return;
    }
    std::set<std::string> listed;
    std::error_code ec;
    for (const auto& e : snap.entries) {
        const std::string files = layout::snapshot_files(digest);
        const std::string rel = snap.kind == "file" ? files : files + "/" + e.path;
        listed.insert(rel);
        const fs::path p = store.root() / rel;
        if (!inside_without_links(store, rel) || !fs::is_regular_file(fs::symlink_status(p, ec))) {
            report.findings.push_back(
                {"missing", rel, "listed in the manifest, not on disk (or behind a link)", true});
            continue;
        }
        const std::string got = sha256_file_hex(p);
        ++report.files_checked;
        report.bytes_hashed += fs::file_size(p);
        if (got != e.sha256) {
            report.findings.push_back(
                {"altered", rel, fmt::format("sha256 {} != manifest {}", got, e.sha256), true});
        }
    }
    if (snap.kind == "directory" &&
        fs::is_directory(fs::symlink_status(store.root() / layout::snapshot_files(digest), ec))) {
        for (const auto& entry :
             fs::recursive_directory_iterator(store.root() / layout::snapshot_files(digest))) {
            const std::string rel = entry.path().lexically_relative(store.root()).string();
            if (!entry.is_directory() && !listed.contains(rel)) {
                report.findings.push_back(
                    {"extra_file", rel, "not in the snapshot manifest", true});
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
        list.push_back(
            Json{{"kind", f.kind}, {"path", f.path}, {"detail", f.detail}, {"damage", f.damage}});
    }
    Json j{{"format_version", "cko/fsck-v1"},
           {"files_checked", files_checked},
           {"ledger_head", ledger_head},
           {"bytes_hashed", bytes_hashed},
           {"damaged", damaged()},
           {"findings", list}};
    if (!bundle.is_null()) {
        j["bundle"] = bundle;
    }
    return j;
}

std::string FsckReport::to_text() const {
    std::string out;
    if (!bundle.is_null()) {
        out += fmt::format("bundle {} (cko {}, Target {}): {} files, {} redacted\n",
                           bundle.value("id", ""), bundle.value("cko_version", ""),
                           bundle.value("target_id", ""), bundle.value("files", 0),
                           bundle.value("redacted", 0));
    }
    out += fmt::format("checked {} files ({} bytes)\n", files_checked, bytes_hashed);
    for (const auto& f : findings) {
        out += fmt::format("  {:<7} {:<11} {}  {}\n", f.damage ? "DAMAGE" : "note", f.kind, f.path,
                           f.detail);
    }
    const std::string_view what = bundle.is_null() ? "store" : "bundle";
    out += fmt::format("the {} is {}\n", what, damaged() ? "damaged" : "consistent");
    return out;
}

namespace {

// The ledger, line by line: each line's prev must be the sha256 of the line before it. A last line
// without its newline is a torn tail (a write cut short by a crash or a full disk): reported, not
// damage, and cut off by the next append.
std::map<std::string, LedgerLine> read_ledger(const fs::path& root, FsckReport& report) {
    std::map<std::string, LedgerLine> ledger;
    const std::string text = read_file_capped(root / kLedger, std::uint64_t{1} << 30);
    std::size_t number = 0;
    std::size_t begin = 0;
    std::string previous;  // the previous line's bytes
    bool chained = false;  // a line with prev was seen: from then on every line needs one
    while (begin < text.size()) {
        const std::size_t nl = text.find('\n', begin);
        ++number;
        if (nl == std::string::npos) {
            report.findings.push_back(
                {"torn_tail", std::string(kLedger),
                 fmt::format("line {} has no newline ({} bytes): a write cut short; the next "
                             "write cuts it off",
                             number, text.size() - begin),
                 false});
            break;
        }
        const std::string line = text.substr(begin, nl - begin);
        begin = nl + 1;
        try {
            const Json j = parse_json_strict(line, {}, fmt::format("{} line {}", kLedger, number));
            if (j.contains("prev")) {
                const std::string want = previous.empty() ? "" : sha256_hex(previous);
                if (j.at("prev").get<std::string>() != want) {
                    report.findings.push_back(
                        {"chain_broken", std::string(kLedger),
                         fmt::format("line {} does not follow line {} (prev {} != {}): a "
                                     "line was rewritten, removed or inserted",
                                     number, number - 1, j.at("prev").get<std::string>(), want),
                         true});
                }
                chained = true;
            } else if (chained) {
                report.findings.push_back(
                    {"chain_broken", std::string(kLedger),
                     fmt::format("line {} has no prev after chained lines", number), true});
            }
            const std::string path = j.at("path").get<std::string>();
            const LedgerLine entry{j.at("sha256").get<std::string>(),
                                   j.at("size").get<std::uint64_t>()};
            const auto [at, first] = ledger.emplace(path, entry);
            if (!first && at->second.sha256 != entry.sha256) {
                // Files are ledgered once: a later digest is a replacement, as a writer forging a
                // record would append. The first one is what cko wrote and what readers check.
                report.findings.push_back(
                    {"relisted", path,
                     fmt::format("ledgered again at line {} with sha256 {} (first: {}): a "
                                 "create-once file was replaced",
                                 number, entry.sha256, at->second.sha256),
                     true});
            }
        } catch (const std::exception& e) {
            report.findings.push_back({"unparsable", std::string(kLedger),
                                       fmt::format("line {}: {}", number, e.what()), true});
        }
        previous = line;
    }
    report.ledger_head = previous.empty() ? "" : sha256_hex(previous);
    return ledger;
}

// The champion pointer must be backed by its selection record, byte for byte.
void check_champion(const Store& store, FsckReport& report) {
    const std::string rel(layout::kChampionCurrent);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(store.root() / rel, ec))) {
        return;
    }
    try {
        const Json current = store.read_record(rel);
        const Json& sel = current.at("selection");
        const RecordRef ref{sel.at("id").get<std::string>(), sel.at("sha256").get<std::string>(),
                            sel.at("path").get<std::string>()};
        const SelectionRecord selection =
            SelectionRecord::from_json(store.read_verified(ref), ref.path);
        const Json selected = selection.experiment_id ? Json(*selection.experiment_id) : Json();
        if (Json(selection.digest) != current.at("digest") ||
            selected != current.at("experiment_id")) {
            throw Error(ErrorCode::invalid_record,
                        "its digest or experiment does not match its selection record");
        }
    } catch (const std::exception& e) {
        report.findings.push_back({"champion_unbacked", rel, e.what(), true});
    }
}

// Every file the ledger names: there, not behind a link, and with the digest the ledger holds.
void check_ledgered_files(const Store& store, const std::map<std::string, LedgerLine>& ledger,
                          FsckReport& report) {
    const fs::path root = store.root();
    for (const auto& [rel, expected] : ledger) {
        const fs::path p = root / rel;
        std::error_code ec;
        if (!inside_without_links(store, rel)) {
            report.findings.push_back(
                {"symlink", rel, "in the ledger, but a link stands on its path (not followed)",
                 true});
            continue;
        }
        if (!fs::is_regular_file(fs::symlink_status(p, ec))) {
            report.findings.push_back({"missing", rel, "in the ledger, not on disk", true});
            continue;
        }
        const std::string got = sha256_file_hex(p);
        ++report.files_checked;
        report.bytes_hashed += fs::file_size(p);
        if (got != expected.sha256) {
            report.findings.push_back({"altered", rel,
                                       fmt::format("sha256 {} != ledger {}", got, expected.sha256),
                                       true});
        }
    }
}

// Every snapshot under objects/ (each carries its own manifest) and leftovers of staging ones.
void check_objects(const Store& store, FsckReport& report) {
    const fs::path root = store.root();
    for (const auto& entry : fs::directory_iterator(root / layout::kObjectsDir)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(".staging-")) {
            report.findings.push_back({"stale_temp", layout::snapshot_dir(name),
                                       "left by an interrupted snapshot", false});
            continue;
        }
        check_snapshot(store, name, report);
    }
}

// Every other path of the store must be in the ledger or mutable by design; what is not is
// classified: a leftover temporary, a half-made invocation, a link, an unledgered record.
void check_unledgered(const Store& store, const std::map<std::string, LedgerLine>& ledger,
                      FsckReport& report) {
    const fs::path root = store.root();
    // Never follows a link (recursive_directory_iterator does not descend into one by default).
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const std::string rel = it->path().lexically_relative(root).string();
        std::error_code ec;
        const auto status = it->symlink_status(ec);
        if (rel == layout::kObjectsTop) {
            it.disable_recursion_pending();
            continue;
        }
        const std::string name = it->path().filename().string();
        if (fs::is_directory(status) && name.starts_with(".staging-")) {
            report.findings.push_back(
                {"stale_temp", rel,
                 "a directory staged by an interrupted operation, never published", false});
            it.disable_recursion_pending();
            continue;
        }
        if (fs::is_directory(status) && it.depth() == 1 && layout::is_invocation_dir(rel) &&
            !fs::exists(fs::symlink_status(it->path() / layout::kRequestFile, ec))) {
            report.findings.push_back(
                {"half_made", rel,
                 "an invocation directory without its request.json (cut short "
                 "before invocations were staged); ignored by every reader",
                 false});
            continue;
        }
        if (fs::is_symlink(status)) {
            // In a driver's output directory it is what the driver left (its call was refused);
            // anywhere else something tampered with the store.
            report.findings.push_back({"symlink", rel,
                                       "a symbolic link inside the store (never followed)",
                                       !layout::is_driver_output(rel)});
            continue;
        }
        if (fs::is_directory(status) || ledger.contains(rel) || layout::is_mutable_by_design(rel)) {
            continue;
        }
        if (name.find(".tmp-") != std::string::npos || name.ends_with(".cas-tmp")) {
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
        // A driver's undeclared output (refused when its call was judged) is not evidence.
        const bool driver_output = layout::is_driver_output(rel);
        report.findings.push_back(
            {parses || driver_output ? "unledgered" : "unparsable", rel,
             driver_output ? "a driver output that was not ledgered (refused as undeclared, or "
                             "its call was cut short)"
             : parses      ? "not in the ledger (a write interrupted before its ledger line)"
                           : "not in the ledger and not valid JSON",
             !parses && !driver_output});
    }
}

}  // namespace

FsckReport fsck_store(const Store& store) {
    FsckReport report;
    const std::map<std::string, LedgerLine> ledger = read_ledger(store.root(), report);
    check_ledgered_files(store, ledger, report);
    check_champion(store, report);
    // Snapshots carry their own manifest; everything else must be in the ledger or mutable by
    // design.
    check_objects(store, report);
    check_unledgered(store, ledger, report);
    return report;
}

}  // namespace cko::store
