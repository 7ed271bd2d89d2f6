// The ledger as a map from path to the digest it recorded, read incrementally, so that every
// record read can be checked against the bytes cko wrote without re-reading the whole ledger.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cko::store {

class LedgerIndex {
public:
    // The sha256 the ledger at `ledger` first recorded for `relative`, or nullopt when it has no
    // line for it. Lines appended since the previous call are read first (complete lines only: a
    // torn tail is not a line); a ledger that shrank is read again from its start. A line that does
    // not parse is skipped here: fsck reports it.
    [[nodiscard]] std::optional<std::string> digest_of(const std::filesystem::path& ledger,
                                                       std::string_view relative);

private:
    void catch_up(const std::filesystem::path& ledger);

    std::mutex mutex_;
    std::uint64_t consumed_ = 0;  // bytes of complete lines already read
    std::map<std::string, std::string, std::less<>> digests_;
};

}  // namespace cko::store
