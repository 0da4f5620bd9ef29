// Bump allocator for memtable entries: one pointer increment per entry,
// freed all at once when the memtable dies.
#ifndef LSM_SRC_DB_ARENA_H_
#define LSM_SRC_DB_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace lsm {

// Not thread-safe for allocation (the memtable has one writer at a time);
// MemoryUsage() may be read from any thread.
class Arena {
 public:
  // block_bytes should be small against the memtable budget, or the budget
  // is used up by the first block.
  explicit Arena(size_t block_bytes = 4096) : block_bytes_(block_bytes) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  char* Allocate(size_t bytes) {
    if (bytes <= remaining_) {
      char* result = ptr_;
      ptr_ += bytes;
      remaining_ -= bytes;
      return result;
    }
    return AllocateFallback(bytes);
  }

  // Aligned for pointer-sized atomics (skiplist nodes).
  char* AllocateAligned(size_t bytes) {
    constexpr size_t kAlign = alignof(std::max_align_t) > 8 ? alignof(std::max_align_t) : 8;
    size_t slop = reinterpret_cast<uintptr_t>(ptr_) & (kAlign - 1);
    size_t needed = bytes + (slop == 0 ? 0 : kAlign - slop);
    if (needed <= remaining_) {
      char* result = ptr_ + (needed - bytes);
      ptr_ += needed;
      remaining_ -= needed;
      return result;
    }
    return AllocateFallback(bytes);  // new blocks are max-aligned
  }

  size_t MemoryUsage() const { return memory_usage_.load(std::memory_order_relaxed); }

 private:
  char* AllocateFallback(size_t bytes) {
    if (bytes > block_bytes_ / 4) {
      // Big entries get their own block so the current one is not wasted.
      return NewBlock(bytes);
    }
    ptr_ = NewBlock(block_bytes_);
    remaining_ = block_bytes_ - bytes;
    char* result = ptr_;
    ptr_ += bytes;
    return result;
  }

  char* NewBlock(size_t bytes) {
    blocks_.push_back(std::make_unique<char[]>(bytes));
    memory_usage_.fetch_add(bytes + sizeof(void*), std::memory_order_relaxed);
    return blocks_.back().get();
  }

  const size_t block_bytes_;
  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace lsm

#endif  // LSM_SRC_DB_ARENA_H_
