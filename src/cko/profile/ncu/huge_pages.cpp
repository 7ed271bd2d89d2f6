// HugePageArena: 2 MiB-aligned anonymous mappings advised MADV_HUGEPAGE, handed out in order.
#include "cko/profile/ncu/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace cko::profile::ncu {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kMaxBlock = std::size_t{32} << 20;

std::uintptr_t round_up(std::uintptr_t v, std::size_t to) {
    return (v + to - 1) & ~(std::uintptr_t{to} - 1);
}

}  // namespace

HugePageArena::~HugePageArena() {
    for (const Mapping& m : mappings_) {
        ::munmap(m.address, m.size);
    }
}

void* HugePageArena::allocate_bytes(std::size_t bytes, std::size_t align) {
    auto at = round_up(reinterpret_cast<std::uintptr_t>(next_), align);
    if (next_ == nullptr || at + bytes > reinterpret_cast<std::uintptr_t>(end_)) {
        add_block(bytes + align);
        at = round_up(reinterpret_cast<std::uintptr_t>(next_), align);
    }
    next_ = reinterpret_cast<char*>(at + bytes);
    return reinterpret_cast<void*>(at);
}

// A new block of at least `bytes`, each block twice the last up to 32 MiB: a small report
// maps 2 MiB, a large one a few dozen blocks. The mapping is one huge page longer than the block
// so that the block can start on a huge-page boundary.
void HugePageArena::add_block(std::size_t bytes) {
    next_block_ = std::clamp(next_block_ * 2, kHugePage, kMaxBlock);
    const std::size_t size = round_up(std::max(bytes, next_block_), kHugePage);
    void* mapping = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) {
        throw std::bad_alloc();
    }
    mappings_.push_back(Mapping{mapping, size + kHugePage});
    char* const block =
        reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(mapping), kHugePage));
    ::madvise(block, size, MADV_HUGEPAGE);  // advice: ignored where there are no huge pages
    next_ = block;
    end_ = block + size;
}

void advise_huge_pages(const void* p, std::size_t bytes) noexcept {
    const auto begin = round_up(reinterpret_cast<std::uintptr_t>(p), kHugePage);
    const auto end =
        (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(std::uintptr_t{kHugePage} - 1);
    if (end > begin) {
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
}

}  // namespace cko::profile::ncu
