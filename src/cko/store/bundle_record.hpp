// A bundle's manifest (bundle.json, bundle-v1): what `cko bundle` put in a case archive — every
// file of the store subset with its sha256, what was redacted and why, what was left out — and the
// bundle's own id, the sha256 of the canonical manifest without its id.
#pragma once

#include "cko/util/json.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

// The archive's layout: the manifest first, then the store's files under store/.
inline constexpr std::string_view kBundleManifestName = "bundle.json";
inline constexpr std::string_view kBundleStoreDir = "store";
inline constexpr std::string_view kBundleFormat = "cko/bundle-v1";

struct BundleManifest {
    struct File {
        std::string path;    // relative to the store
        std::string sha256;  // of the bytes in the bundle (a redaction marker's, when redacted)
        std::uint64_t size = 0;
        bool operator==(const File&) const = default;
    };
    struct Redaction {
        std::string path;
        std::string original_sha256;  // what the store's ledger or snapshot manifest holds
        std::uint64_t original_size = 0;
        std::string reason;
        bool operator==(const Redaction&) const = default;
    };
    struct LeftOut {
        std::string path;
        std::string reason;
        bool operator==(const LeftOut&) const = default;
    };

    std::string id;  // "" until content_digest names it
    std::string cko_version;
    std::string store_id;     // sha256 of the ledger's first line: where the store's chain begins
    std::string ledger_head;  // sha256 of the ledger's last line: the state bundled
    std::string target_id;
    std::vector<File> files;  // sorted by path
    std::vector<Redaction> redacted;
    std::vector<LeftOut> left_out;

    // Strict: a missing, wrong-typed or unknown member is invalid_record naming it and `file`.
    [[nodiscard]] static BundleManifest from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    // sha256 of the canonical manifest without its id: what `id` must be.
    [[nodiscard]] std::string content_digest() const;
    bool operator==(const BundleManifest&) const = default;
};

// The bytes a redacted file is replaced by: they name the reason, the original digest and size,
// so fsck --bundle tells a redaction from damage.
[[nodiscard]] std::string redaction_marker(const BundleManifest::Redaction& redaction);

}  // namespace cko::store
