#include "cko/profile/ncu/row_split.hpp"

#include <sched.h>

#include <cstring>

namespace cko::profile::ncu {

void RowSplit::open(std::size_t header_offset, std::size_t units_offset,
                    std::size_t position) noexcept {
    header_offset_ = header_offset;
    units_offset_ = units_offset;
    progress_.store(position, std::memory_order_relaxed);
    open_.store(true, std::memory_order_release);
    signal();
    if (wait_for_pick_) {
        wait_until([&] { return split() != kNone || cancelled(); });
    }
}

void RowSplit::wait_until_open_or_closed() const noexcept {
    wait_until([&] { return is_open() || cancelled(); });
}

void RowSplit::signal() noexcept {
    events_.fetch_add(1, std::memory_order_release);
    events_.notify_all();
}

RowSplit::Reached RowSplit::reached(std::size_t position) noexcept {
    const std::size_t at = split_.load(std::memory_order_acquire);
    if (at == kNone || position < at) {
        return Reached::not_yet;
    }
    if (position == at) {
        return Reached::here;
    }
    cancelled_.store(true, std::memory_order_relaxed);
    return Reached::passed;
}

RawTail RowSplit::wait_tail() {
    return tail_.get_future().get();
}

void RowSplit::close() noexcept {
    cancelled_.store(true, std::memory_order_relaxed);
    signal();
}

std::optional<std::size_t> RowSplit::pick(std::string_view text, std::size_t min_bytes) noexcept {
    if (!open_.load(std::memory_order_acquire) || cancelled()) {
        return std::nullopt;
    }
    const std::size_t from = progress_.load(std::memory_order_relaxed);
    if (from >= text.size() || text.size() - from < min_bytes) {
        return std::nullopt;
    }
    // A row starts after a line break, with a quote; a line break inside a quoted cell may be
    // followed by one too, and then the main thread reads past it and drops the tail.
    for (std::size_t at = from + (text.size() - from) / 2; at + 1 < text.size(); ++at) {
        const void* const nl = std::memchr(text.data() + at, '\n', text.size() - at - 1);
        if (nl == nullptr) {
            return std::nullopt;
        }
        at = static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
        if (text[at + 1] == '"') {
            pick_at(at + 1);
            return at + 1;
        }
    }
    return std::nullopt;
}

void RowSplit::pick_at(std::size_t split) noexcept {
    split_.store(split, std::memory_order_release);
    signal();
}

void RowSplit::deliver(RawTail tail) {
    tail_.set_value(std::move(tail));
}

void RowSplit::fail(std::exception_ptr error) {
    tail_.set_exception(std::move(error));
}

bool two_cpus_available() noexcept {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    return sched_getaffinity(0, sizeof cpus, &cpus) != 0 || CPU_COUNT(&cpus) >= 2;
}

}  // namespace cko::profile::ncu
