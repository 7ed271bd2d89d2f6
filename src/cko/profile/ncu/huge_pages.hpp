// Memory for a report's bulk arrays in blocks the kernel may back with transparent huge pages.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace cko::profile::ncu {

// Why: a 100 MB export's report holds tens of MB of small arrays (a raw page's facts alone are
// ~36 MB), and every 4 KiB page's first touch is a page fault; on a virtual machine one costs
// several microseconds, so faults were ~40% of `cko profile ncu` (bench/ncu_verb_bench.cpp). In
// 2 MiB-aligned blocks advised MADV_HUGEPAGE a 2 MiB block faults once. Advice only: where the
// kernel has no transparent huge pages the memory is ordinary pages.
//
// A bump allocator: memory lives until the arena does, for trivially destructible objects.
class HugePageArena {
public:
    HugePageArena() = default;
    ~HugePageArena();
    HugePageArena(const HugePageArena&) = delete;
    HugePageArena& operator=(const HugePageArena&) = delete;

    // Room for n objects of T, uninitialised. Throws std::bad_alloc when no memory is left.
    template <class T>
    [[nodiscard]] T* allocate(std::size_t n) {
        static_assert(std::is_trivially_destructible_v<T>, "the arena never runs destructors");
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) {
            throw std::bad_alloc();
        }
        return static_cast<T*>(allocate_bytes(n * sizeof(T), alignof(T)));
    }

private:
    void* allocate_bytes(std::size_t bytes, std::size_t align);
    void add_block(std::size_t bytes);

    struct Mapping {
        void* address;
        std::size_t size;
    };
    std::vector<Mapping> mappings_;
    std::size_t next_block_ = 0;  // the size of the next block, grown as the arena is used
    char* next_ = nullptr;
    char* end_ = nullptr;
};

// A vector's allocator drawing on an arena (none: the heap). Memory given back to an arena stays
// its until the arena goes, so it suits vectors that are reserved once and filled. A copy of a
// container takes the heap, so a copied launch owns its arrays and never grows the arena.
template <class T>
class ArenaAllocator {
public:
    using value_type = T;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;

    ArenaAllocator() noexcept = default;
    explicit ArenaAllocator(HugePageArena* arena) noexcept : arena_(arena) {}
    template <class U>
    explicit ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena_(other.arena()) {}

    [[nodiscard]] T* allocate(std::size_t n) {
        return arena_ != nullptr ? arena_->allocate<T>(n) : std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (arena_ == nullptr) {
            std::allocator<T>().deallocate(p, n);
        }
    }
    [[nodiscard]] ArenaAllocator select_on_container_copy_construction() const noexcept {
        return ArenaAllocator();
    }
    [[nodiscard]] HugePageArena* arena() const noexcept { return arena_; }
    friend bool operator==(const ArenaAllocator& a, const ArenaAllocator& b) noexcept {
        return a.arena_ == b.arena_;
    }

private:
    HugePageArena* arena_ = nullptr;
};

template <class T>
using ArenaVector = std::vector<T, ArenaAllocator<T>>;

// Advises the kernel to back the whole 2 MiB-aligned blocks inside [p, p + bytes) with huge
// pages: for a large buffer already allocated (a vector's storage); a hint, never an error.
void advise_huge_pages(const void* p, std::size_t bytes) noexcept;

}  // namespace cko::profile::ncu
