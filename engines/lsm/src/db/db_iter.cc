#include "db/db_iter.h"

namespace lsm {
namespace {

class DBIter final : public Iterator {
 public:
  DBIter(std::unique_ptr<InternalIterator> merged, std::shared_ptr<const void> pin)
      : pin_(std::move(pin)), it_(std::move(merged)) {}

  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override {
    it_->SeekToFirst();
    SkipTombstones();
  }
  void Seek(std::string_view target) override {
    it_->Seek(target);
    SkipTombstones();
  }
  void Next() override {
    it_->Next();
    SkipTombstones();
  }
  std::string_view key() const override { return it_->key(); }
  std::string_view value() const override { return it_->value(); }
  Status status() const override { return it_->status(); }

 private:
  void SkipTombstones() {
    while (it_->Valid() && it_->type() == ValueType::kDeletion) it_->Next();
  }

  std::shared_ptr<const void> pin_;  // declared first: outlives the iterators
  std::unique_ptr<InternalIterator> it_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> merged,
                                        std::shared_ptr<const void> pin) {
  return std::make_unique<DBIter>(std::move(merged), std::move(pin));
}

}  // namespace lsm
