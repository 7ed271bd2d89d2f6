// `cko bundle`: a self-contained, content-addressed subset of a store — the Target, experiments,
// invocations with their driver calls and raw samples, profiles, the champion and its selections,
// conclusions, the snapshots and the ledger — in one deterministic .tar.zst a reviewer verifies
// (`cko fsck --bundle`, bundle_check.hpp) and renders (`cko report --bundle`) without the workload.
#pragma once

#include "cko/store/bundle_record.hpp"
#include "cko/store/store.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cko::store {

// zstd's level for bundles: fixed, so the same store gives the same bytes.
inline constexpr int kBundleZstdLevel = 10;

struct BundleOptions {
    std::vector<std::string> redact;  // paths relative to the root (layout::is_redactable)
    std::string redact_reason;        // required with `redact`, recorded for each
};

struct BundleWritten {
    BundleManifest manifest;
    std::filesystem::path out;
    std::uint64_t bytes = 0;        // of the .tar.zst
    std::uint64_t store_bytes = 0;  // of the store's files bundled, before compression
};

// Writes the bundle of `store` at `out` (created once: a temporary beside it, renamed into place).
// The archive holds bundle.json (the manifest, first) and the store's files under store/, sorted
// by path, with fixed metadata: the same store gives the same bytes. Reads the store only, never
// writes into it. Refuses, writing nothing: an `out` that exists (already_exists), lies inside the
// root, does not end in .tar.zst (invalid_argument naming `out`) or whose folder is missing
// (not_found); a store fsck finds damaged (tampered_record, naming the findings); a root without a
// Target (not_found); a redaction without a reason, of a path not in the bundle or of a record the
// report reads (invalid_argument naming `redact` or `redact_reason`); a file that changed while it
// was bundled (tampered_record naming it: run again when nothing writes).
BundleWritten write_bundle(const Store& store, const std::filesystem::path& out,
                           const BundleOptions& options);

}  // namespace cko::store
