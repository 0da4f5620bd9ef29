#include "db/merging_iterator.h"

#include <algorithm>
#include <string>

namespace lsm {
namespace {

class MergingIterator final : public InternalIterator {
 public:
  explicit MergingIterator(std::vector<std::unique_ptr<InternalIterator>> children)
      : children_(std::move(children)) {
    heap_.reserve(children_.size());
  }

  bool Valid() const override { return !heap_.empty() && status_.ok(); }

  void SeekToFirst() override {
    for (auto& child : children_) child->SeekToFirst();
    RebuildHeap();
  }

  void Seek(std::string_view target) override {
    for (auto& child : children_) child->Seek(target);
    RebuildHeap();
  }

  void Next() override {
    // Advance every source positioned at the current key: older versions of
    // it are shadowed by the one just yielded.
    current_key_.assign(Top()->key().data(), Top()->key().size());
    do {
      size_t index = heap_.front();
      std::pop_heap(heap_.begin(), heap_.end(), greater_);
      heap_.pop_back();
      InternalIterator* child = children_[index].get();
      child->Next();
      if (child->Valid()) {
        heap_.push_back(index);
        std::push_heap(heap_.begin(), heap_.end(), greater_);
      } else if (!child->status().ok()) {
        status_ = child->status();
        return;
      }
    } while (!heap_.empty() && Top()->key() == current_key_);
  }

  std::string_view key() const override { return Top()->key(); }
  std::string_view value() const override { return Top()->value(); }
  ValueType type() const override { return Top()->type(); }
  Status status() const override { return status_; }

  uint64_t BytesConsumed() const override {
    uint64_t total = 0;
    for (const auto& child : children_) total += child->BytesConsumed();
    return total;
  }

 private:
  // Orders the heap as a min-heap on (key, source index).
  struct Greater {
    const std::vector<std::unique_ptr<InternalIterator>>* children;
    bool operator()(size_t a, size_t b) const {
      int r = (*children)[a]->key().compare((*children)[b]->key());
      if (r != 0) return r > 0;
      return a > b;
    }
  };

  InternalIterator* Top() const { return children_[heap_.front()].get(); }

  void RebuildHeap() {
    heap_.clear();
    status_ = Status::OK();
    for (size_t i = 0; i < children_.size(); i++) {
      if (children_[i]->Valid()) {
        heap_.push_back(i);
      } else if (!children_[i]->status().ok()) {
        status_ = children_[i]->status();
      }
    }
    std::make_heap(heap_.begin(), heap_.end(), greater_);
  }

  std::vector<std::unique_ptr<InternalIterator>> children_;
  Greater greater_{&children_};
  std::vector<size_t> heap_;
  std::string current_key_;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(
    std::vector<std::unique_ptr<InternalIterator>> children) {
  return std::make_unique<MergingIterator>(std::move(children));
}

}  // namespace lsm
