// A document's long array written by two threads, the same bytes as one thread writes: used for
// the launches of `cko profile ncu --json` (ncu_report_json.cpp).
#pragma once

#include "cko/profile/ncu/json_stream.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <ostream>

namespace cko::profile::ncu {

// Items [0, n) in chunks of kChunk, written by two threads: each takes the next chunk not taken,
// writes it into its own held stream, and sends it to `out` in its turn (chunk k after chunk
// k - 1), so the output is the one thread's byte for byte. Two threads balance themselves: the
// one done first takes the next chunk. A thread that fails stops the other; the first error is
// rethrown. The held buffers are each thread's own and kept from chunk to chunk: no fresh memory
// per chunk (new pages cost more than the writing on some hosts).
class TwoWriters {
public:
    static constexpr std::size_t kChunk = 64;
    // Writes items [begin, end) to a stream: one per thread, with that thread's own caches.
    using WriteRange = std::function<void(JsonStream& js, std::size_t begin, std::size_t end)>;

    // `make_writer` is called once on each writing thread.
    TwoWriters(std::size_t items, std::function<WriteRange()> make_writer, std::ostream& out)
        : items_(items), make_writer_(std::move(make_writer)), out_(out) {}

    // Whether two threads pay for `items`: two CPUs to run them (the process's affinity) and
    // enough chunks to share.
    [[nodiscard]] static bool pay(std::size_t items);

    // Writes every item to `out`; without a second thread to be had, one takes every chunk.
    void run();

private:
    void work() noexcept;
    bool stopped();

    std::size_t items_;
    std::function<WriteRange()> make_writer_;
    std::ostream& out_;
    std::atomic<std::size_t> next_{0};
    std::mutex mutex_;
    std::condition_variable turn_changed_;
    std::size_t turn_ = 0;  // the chunk whose bytes go to out_ next
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace cko::profile::ncu
