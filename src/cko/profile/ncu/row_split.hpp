// A raw page's rows parsed by two threads: the main thread reads them from the top, and the
// thread that checked and hashed the text, once done, reads the rows of a tail it picked.
#pragma once

// Why: on a raw page the parse is the import's path (about 105 ms of a 100 MB page's 136 ms on an
// H100 host), while the second thread's text check and hash end at about 84 ms. The tail is a
// guess made without reading the rows before it (a line break followed by a quote, halfway
// through what the main thread has left), so it is correct by construction, not by argument: the
// main thread stops there only if one of its own rows starts exactly there, and its tokenizer
// would have read the same rows from that byte (a tokenizer keeps no state from row to row);
// otherwise the main thread reads on and the tail is dropped. See docs/profile-ncu.md.

#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_report.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace cko::profile::ncu {

// What the second thread read from the tail's first row to the end of the text.
struct RawTail {
    NcuReport report;  // launches, unmodeled entries, and the strings and arena they view
    // The key of each of report.unmodeled, in order: the main thread keeps an entry only for a
    // metric it listed none of (a metric is listed once, at its first row).
    std::vector<std::uint32_t> unmodeled_keys;
    std::vector<std::string_view> other_lines;  // the lines that were not CSV, in order
    std::size_t without_duration = 0;           // its launches with no duration fact
    bool cancelled = false;                     // stopped early: nothing in it counts
};

class RowSplit {
public:
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

    // `wait_for_pick` (tests): open() waits until a tail is picked (pick_at) or the split closed,
    // so a test chooses where the tail starts whatever the threads' timing.
    explicit RowSplit(bool wait_for_pick = false) noexcept : wait_for_pick_(wait_for_pick) {}

    // The main thread: its raw page's columns and units are read (the header row at
    // `header_offset`; the units row at `units_offset`, or kNone), and it reads on from
    // `position`. Before this no tail is picked.
    void open(std::size_t header_offset, std::size_t units_offset, std::size_t position) noexcept;
    // The main thread is about to read the row at `position`.
    void progress(std::size_t position) noexcept {
        progress_.store(position, std::memory_order_relaxed);
    }
    enum class Reached : std::uint8_t { not_yet, here, passed };
    // The main thread, about to read the row at `position`: whether that is the tail's first row
    // (`here`: take the tail with wait_tail instead), or past it without a row starting there
    // (`passed`: the tail is dropped, and its thread told to stop).
    [[nodiscard]] Reached reached(std::size_t position) noexcept;
    // The main thread at `here`: the tail, once read, or the first error of its rows (rethrown).
    [[nodiscard]] RawTail wait_tail();
    // The main thread is done with its rows (or failed): a tail not yet picked will not be, and
    // one being read stops.
    void close() noexcept;

    // The second thread: picks the tail's first row, a line break followed by a quote at or after
    // halfway through what the main thread has left of `text`, and publishes it; nothing when the
    // main thread is not open, closed, or has fewer than `min_bytes` left.
    std::optional<std::size_t> pick(std::string_view text, std::size_t min_bytes) noexcept;
    // The same at a given offset (tests: a tail at every row, or where no row starts).
    void pick_at(std::size_t split) noexcept;
    [[nodiscard]] bool cancelled() const noexcept {
        return cancelled_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] bool is_open() const noexcept { return open_.load(std::memory_order_acquire); }
    // Waits until the main thread opens the split or closes it (tests: then pick_at).
    void wait_until_open_or_closed() const noexcept;
    [[nodiscard]] std::size_t header_offset() const noexcept { return header_offset_; }
    [[nodiscard]] std::size_t units_offset() const noexcept { return units_offset_; }
    [[nodiscard]] std::size_t split() const noexcept {
        return split_.load(std::memory_order_acquire);
    }
    // The second thread: the tail read, or the error that stopped it. Called once a tail is
    // picked, whatever happens.
    void deliver(RawTail tail);
    void fail(std::exception_ptr error);

private:
    // An open, a pick or a close happened: wakes wait_until.
    void signal() noexcept;
    // Blocks until `done()` holds, re-checked after each signal().
    template <class Done>
    void wait_until(Done done) const noexcept {
        for (;;) {
            const unsigned seen = events_.load(std::memory_order_acquire);
            if (done()) {
                return;
            }
            events_.wait(seen, std::memory_order_acquire);
        }
    }

    bool wait_for_pick_ = false;
    std::size_t header_offset_ = kNone;
    std::size_t units_offset_ = kNone;
    std::atomic<bool> open_{false};
    std::atomic<bool> cancelled_{false};
    std::atomic<std::size_t> progress_{0};
    std::atomic<std::size_t> split_{kNone};
    std::atomic<unsigned> events_{0};  // an open, a pick or a close: what the waits wait for
    std::promise<RawTail> tail_;
};

// The second thread's part (ncu_csv.cpp): reads the rows of the tail `split` picked in `text`,
// the text the main thread parses with `options`, and delivers them (or their first error).
void read_raw_tail(std::string_view text, const NcuParseOptions& options, RowSplit& split) noexcept;

// The same document as parse_ncu_text, the rows read as `split` shares them (tests).
[[nodiscard]] NcuReport parse_ncu_text_split(std::string_view text,
                                             std::shared_ptr<const void> owner,
                                             const NcuParseOptions& options, RowSplit& split);

// Whether this process may run on two CPUs or more (its affinity mask; true when unknown).
[[nodiscard]] bool two_cpus_available() noexcept;

}  // namespace cko::profile::ncu
