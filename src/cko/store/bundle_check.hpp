// Reading a bundle (`cko fsck --bundle`, `cko report --bundle`): extracted into a private
// temporary directory by the checking tar reader, the manifest's id and every file's digest
// verified, then the store's own fsck run on the extracted store (every record against its ledger
// digest, every snapshot against its manifest), redactions reported as notes.
#pragma once

#include "cko/store/bundle_record.hpp"
#include "cko/store/fsck.hpp"
#include "cko/store/store.hpp"

#include <filesystem>

namespace cko::store {

// A bundle, extracted and checked. The directory is removed when this is destroyed. A bundle that
// cannot be read at all — not zstd, a hostile entry, no bundle.json first, a manifest that is not
// bundle-v1 — is an Error (malformed_input, truncated_input, unsafe_path, special_file,
// invalid_record ... naming the file and the entry); what can be read and does not match is a
// damage finding of report(), naming the file.
class OpenedBundle {
public:
    explicit OpenedBundle(const std::filesystem::path& bundle);
    ~OpenedBundle();
    OpenedBundle(const OpenedBundle&) = delete;
    OpenedBundle& operator=(const OpenedBundle&) = delete;

    [[nodiscard]] const BundleManifest& manifest() const noexcept { return manifest_; }
    // The bundle's fsck: its `bundle` member says which bundle; damaged() means do not trust it.
    [[nodiscard]] const FsckReport& report() const noexcept { return report_; }
    // The extracted store (read it; it disappears with this object).
    [[nodiscard]] Store store() const;

private:
    std::filesystem::path dir_;
    BundleManifest manifest_;
    FsckReport report_;
};

// OpenedBundle(bundle).report(): what `cko fsck --bundle` prints.
[[nodiscard]] FsckReport fsck_bundle(const std::filesystem::path& bundle);

}  // namespace cko::store
