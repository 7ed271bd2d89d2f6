// bundle-v1: the strict reader and writer of a bundle's manifest, and its id.
#include "cko/store/bundle_record.hpp"

#include "cko/store/record_fields.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::store {
namespace {

void require_hex64(const detail::Fields& f, std::string_view key, const std::string& value) {
    const bool hex = value.size() == 64 && std::all_of(value.begin(), value.end(), [](char c) {
                         return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex) {
        f.fail(key, fmt::format("is \"{}\", not 64 lower-case hex digits", value));
    }
}

template <class Item, class Read>
std::vector<Item> read_list(const detail::Fields& f, std::string_view key, Read read) {
    std::vector<Item> out;
    const Json& list = f.array(key);
    for (std::size_t i = 0; i < list.size(); ++i) {
        out.push_back(
            read(detail::Fields(list[i], f.file(), fmt::format("{}[{}]", f.path(key), i))));
    }
    return out;
}

BundleManifest::File read_file_entry(const detail::Fields& e) {
    e.only({"path", "sha256", "size"});
    BundleManifest::File file{e.text("path"), e.text("sha256"), e.natural("size")};
    require_hex64(e, "sha256", file.sha256);
    return file;
}

BundleManifest::Redaction read_redaction(const detail::Fields& e) {
    e.only({"path", "original_sha256", "original_size", "reason"});
    BundleManifest::Redaction r{e.text("path"), e.text("original_sha256"),
                                e.natural("original_size"), e.text("reason")};
    require_hex64(e, "original_sha256", r.original_sha256);
    if (r.reason.empty()) {
        e.fail("reason", "is empty");
    }
    return r;
}

}  // namespace

BundleManifest BundleManifest::from_json(const Json& j, std::string_view file) {
    const detail::Fields f(j, file, "$");
    f.only({"format_version", "id", "cko_version", "store_id", "ledger_head", "target_id", "files",
            "redacted", "left_out"});
    f.format_version(kBundleFormat);
    BundleManifest m;
    m.id = f.text("id");
    require_hex64(f, "id", m.id);
    m.cko_version = f.text("cko_version");
    m.store_id = f.text("store_id");
    require_hex64(f, "store_id", m.store_id);
    m.ledger_head = f.text("ledger_head");
    require_hex64(f, "ledger_head", m.ledger_head);
    m.target_id = f.text("target_id");
    m.files = read_list<File>(f, "files", read_file_entry);
    m.redacted = read_list<Redaction>(f, "redacted", read_redaction);
    m.left_out = read_list<LeftOut>(f, "left_out", [](const detail::Fields& e) {
        e.only({"path", "reason"});
        return LeftOut{e.text("path"), e.text("reason")};
    });
    return m;
}

Json BundleManifest::to_json() const {
    Json list = Json::array();
    for (const File& f : files) {
        list.push_back(Json{{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
    }
    Json redactions = Json::array();
    for (const Redaction& r : redacted) {
        redactions.push_back(Json{{"path", r.path},
                                  {"original_sha256", r.original_sha256},
                                  {"original_size", r.original_size},
                                  {"reason", r.reason}});
    }
    Json left = Json::array();
    for (const LeftOut& l : left_out) {
        left.push_back(Json{{"path", l.path}, {"reason", l.reason}});
    }
    Json j{{"format_version", kBundleFormat},
           {"cko_version", cko_version},
           {"store_id", store_id},
           {"ledger_head", ledger_head},
           {"target_id", target_id},
           {"files", list},
           {"redacted", redactions},
           {"left_out", left}};
    if (!id.empty()) {
        j["id"] = id;
    }
    return j;
}

std::string BundleManifest::content_digest() const {
    Json j = to_json();
    j.erase("id");
    return sha256_hex(canonical_json(j));
}

std::string redaction_marker(const BundleManifest::Redaction& redaction) {
    return fmt::format(
        "cko bundle: this file was redacted ({}); the original had sha256 {} and {} bytes\n",
        redaction.reason, redaction.original_sha256, redaction.original_size);
}

}  // namespace cko::store
