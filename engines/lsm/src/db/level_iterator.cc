#include "db/level_iterator.h"

#include <algorithm>

namespace lsm {
namespace {

class LevelIterator final : public InternalIterator {
 public:
  explicit LevelIterator(std::vector<ComponentPtr> files) : files_(std::move(files)) {
    std::sort(files_.begin(), files_.end(), [](const ComponentPtr& a, const ComponentPtr& b) {
      return a->meta().smallest < b->meta().smallest;
    });
  }

  bool Valid() const override { return current_ != nullptr && current_->Valid(); }

  void SeekToFirst() override {
    Open(0);
    if (current_ != nullptr) current_->SeekToFirst();
    SkipExhaustedFiles();
  }

  void Seek(std::string_view target) override {
    // The first file whose largest key is >= target holds the answer, or
    // the answer is the first key of a later file.
    auto it = std::lower_bound(files_.begin(), files_.end(), target,
                               [](const ComponentPtr& f, std::string_view t) {
                                 return std::string_view(f->meta().largest) < t;
                               });
    Open(static_cast<size_t>(it - files_.begin()));
    if (current_ != nullptr) current_->Seek(target);
    SkipExhaustedFiles();
  }

  void Next() override {
    current_->Next();
    SkipExhaustedFiles();
  }

  std::string_view key() const override { return current_->key(); }
  std::string_view value() const override { return current_->value(); }
  ValueType type() const override { return current_->type(); }
  Status status() const override { return status_; }

 private:
  // Opens files_[index] (none past the end).
  void Open(size_t index) {
    index_ = index;
    current_.reset();
    if (index_ < files_.size()) current_ = files_[index_]->table().NewIterator();
  }

  // Moves to the first key of the next file while the current one is done;
  // a failed read stops the iteration with its status.
  void SkipExhaustedFiles() {
    while (current_ != nullptr && !current_->Valid()) {
      if (!current_->status().ok()) {
        status_ = current_->status();
        current_.reset();
        return;
      }
      Open(index_ + 1);
      if (current_ != nullptr) current_->SeekToFirst();
    }
  }

  std::vector<ComponentPtr> files_;  // by smallest key
  size_t index_ = 0;
  std::unique_ptr<InternalIterator> current_;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<ComponentPtr> files) {
  return std::make_unique<LevelIterator>(std::move(files));
}

}  // namespace lsm
