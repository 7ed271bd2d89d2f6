#include "cko/profile/ncu/two_writers.hpp"

#include "cko/profile/ncu/row_split.hpp"

#include <algorithm>
#include <future>
#include <system_error>

namespace cko::profile::ncu {

bool TwoWriters::pay(std::size_t items) {
    return items >= 4 * kChunk && two_cpus_available();
}

void TwoWriters::run() {
    std::future<void> second;
    try {
        second = std::async(std::launch::async, [this] { work(); });
    } catch (const std::system_error&) {
        // No second thread to be had: this one takes every chunk, in order.
    }
    work();
    if (second.valid()) {
        second.get();
    }
    if (error_) {
        std::rethrow_exception(error_);
    }
}

void TwoWriters::work() noexcept {
    try {
        const WriteRange write = make_writer_();
        JsonStream held{JsonStream::Held{}};
        for (;;) {
            const std::size_t k = next_.fetch_add(1);
            const std::size_t begin = k * kChunk;
            if (begin >= items_ || stopped()) {
                return;
            }
            held.clear();
            write(held, begin, std::min(items_, begin + kChunk));
            std::unique_lock<std::mutex> lock(mutex_);
            turn_changed_.wait(lock, [&] { return turn_ == k || stop_; });
            if (stop_) {
                return;
            }
            lock.unlock();
            held.write_to(out_);  // only the thread whose turn it is writes
            lock.lock();
            turn_ = k + 1;
            turn_changed_.notify_all();
        }
    } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) {
            error_ = std::current_exception();
        }
        stop_ = true;
        turn_changed_.notify_all();
    }
}

bool TwoWriters::stopped() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
}

}  // namespace cko::profile::ncu
