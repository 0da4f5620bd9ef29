// A skiplist of arena-allocated keys. One writer at a time (external
// synchronization); readers need no lock and may run concurrently with the
// writer: a node is fully built before it is published with a release store.
// Nodes are never removed (the memtable is dropped as a whole).
#ifndef LSM_SRC_DB_SKIPLIST_H_
#define LSM_SRC_DB_SKIPLIST_H_

#include <atomic>
#include <cassert>
#include <cstdint>

#include "db/arena.h"

namespace lsm {

// Key is a trivially copyable handle (here: const char* to an encoded entry);
// Comparator is int operator()(Key, Key).
template <typename Key, class Comparator>
class SkipList {
 private:
  struct Node;

 public:
  SkipList(Comparator cmp, Arena* arena)
      : compare_(cmp), arena_(arena), head_(NewNode(Key(), kMaxHeight)) {
    for (int i = 0; i < kMaxHeight; i++) head_->SetNext(i, nullptr);
  }
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // REQUIRES: no equal key is in the list; external synchronization.
  void Insert(Key key) {
    Node* prev[kMaxHeight];
    FindGreaterOrEqual(key, prev);
    int height = RandomHeight();
    int max_height = max_height_.load(std::memory_order_relaxed);
    if (height > max_height) {
      for (int i = max_height; i < height; i++) prev[i] = head_;
      // Readers that see the new height before the node is linked just find
      // nullptr at head_ and drop a level: harmless.
      max_height_.store(height, std::memory_order_relaxed);
    }
    Node* x = NewNode(key, height);
    for (int i = 0; i < height; i++) {
      x->NoBarrierSetNext(i, prev[i]->NoBarrierNext(i));
      prev[i]->SetNext(i, x);
    }
  }

  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}
    bool Valid() const { return node_ != nullptr; }
    Key key() const { return node_->key; }
    void Next() { node_ = node_->Next(0); }
    void Seek(Key target) { node_ = list_->FindGreaterOrEqual(target, nullptr); }
    void SeekToFirst() { node_ = list_->head_->Next(0); }

   private:
    const SkipList* list_;
    Node* node_;
  };

 private:
  static constexpr int kMaxHeight = 12;

  struct Node {
    explicit Node(Key k) : key(k) {}
    Key const key;
    Node* Next(int n) { return next_[n].load(std::memory_order_acquire); }
    void SetNext(int n, Node* x) { next_[n].store(x, std::memory_order_release); }
    Node* NoBarrierNext(int n) { return next_[n].load(std::memory_order_relaxed); }
    void NoBarrierSetNext(int n, Node* x) { next_[n].store(x, std::memory_order_relaxed); }

   private:
    std::atomic<Node*> next_[1];  // really `height` entries (allocated past the struct)
  };

  Node* NewNode(Key key, int height) {
    char* mem = arena_->AllocateAligned(sizeof(Node) +
                                        sizeof(std::atomic<Node*>) * (height - 1));
    return new (mem) Node(key);
  }

  int RandomHeight() {
    // Branching factor 4; xorshift keeps this off any shared RNG.
    int height = 1;
    while (height < kMaxHeight) {
      rnd_ ^= rnd_ << 13;
      rnd_ ^= rnd_ >> 7;
      rnd_ ^= rnd_ << 17;
      if ((rnd_ & 3) != 0) break;
      height++;
    }
    return height;
  }

  // The first node >= key; fills prev[level] with the last node < key.
  Node* FindGreaterOrEqual(Key key, Node** prev) const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr && compare_(next->key, key) < 0) {
        x = next;
      } else {
        if (prev != nullptr) prev[level] = x;
        if (level == 0) return next;
        level--;
      }
    }
  }

  Comparator const compare_;
  Arena* const arena_;
  Node* const head_;
  std::atomic<int> max_height_{1};
  uint64_t rnd_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace lsm

#endif  // LSM_SRC_DB_SKIPLIST_H_
