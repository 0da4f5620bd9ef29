#include "env/io_budget_env.h"

#include <algorithm>
#include <utility>

namespace lsm {

namespace {

bool IsBackground(IoPriority pri) { return pri != IoPriority::kUser; }

class BudgetWritableFile final : public WritableFile {
 public:
  BudgetWritableFile(std::unique_ptr<WritableFile> base, IoBudget* budget, uint64_t force_bytes,
                     Env* clock)
      : base_(std::move(base)), budget_(budget), force_bytes_(force_bytes), clock_(clock) {}

  Status Append(std::string_view data) override {
    const IoPriority pri = ThreadIoPriority();
    if (!IsBackground(pri)) return base_->Append(data);
    while (!data.empty()) {
      size_t n = std::min(data.size(), kIoBudgetChargeBytes);
      // Split at the force boundary so that forces fall every force_bytes
      // exactly, whatever the sizes of the appends.
      if (force_bytes_ > 0) {
        n = static_cast<size_t>(std::min<uint64_t>(n, force_bytes_ - unforced_));
      }
      if (budget_ != nullptr) budget_->Request(n, pri);
      Status s = base_->Append(data.substr(0, n));
      if (!s.ok()) return s;
      data.remove_prefix(n);
      if (force_bytes_ > 0) {
        unforced_ += n;
        if (unforced_ == force_bytes_) {
          unforced_ = 0;
          s = TimedSync(pri);
          if (!s.ok()) return s;
        }
      }
    }
    return Status::OK();
  }

  Status Flush() override { return base_->Flush(); }
  Status Sync() override {
    unforced_ = 0;
    return TimedSync(ThreadIoPriority());
  }
  Status Close() override { return base_->Close(); }

 private:
  // A background thread's sync, timed: while it waits for the device it asks
  // for no budget, which is where a budget can go unspent (IoBudget::unused).
  Status TimedSync(IoPriority pri) {
    if (budget_ == nullptr || !IsBackground(pri)) return base_->Sync();
    const uint64_t start = clock_->NowMicros();
    Status s = base_->Sync();
    budget_->CountSync(pri, clock_->NowMicros() - start);
    return s;
  }

  const std::unique_ptr<WritableFile> base_;
  IoBudget* const budget_;
  const uint64_t force_bytes_;
  Env* const clock_;
  uint64_t unforced_ = 0;  // background bytes appended since the last Sync
};

class BudgetSequentialFile final : public SequentialFile {
 public:
  BudgetSequentialFile(std::unique_ptr<SequentialFile> base, IoBudget* budget)
      : base_(std::move(base)), budget_(budget) {}

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    Status s = base_->Read(n, result, scratch);
    const IoPriority pri = ThreadIoPriority();
    if (s.ok() && IsBackground(pri) && !result->empty()) budget_->Request(result->size(), pri);
    return s;
  }
  Status Skip(uint64_t n) override { return base_->Skip(n); }

 private:
  const std::unique_ptr<SequentialFile> base_;
  IoBudget* const budget_;
};

class BudgetRandomAccessFile final : public RandomAccessFile {
 public:
  BudgetRandomAccessFile(std::unique_ptr<RandomAccessFile> base, IoBudget* budget)
      : base_(std::move(base)), budget_(budget) {}

  Status Read(uint64_t offset, size_t n, std::string_view* result, char* scratch) const override {
    Status s = base_->Read(offset, n, result, scratch);
    const IoPriority pri = ThreadIoPriority();
    if (s.ok() && IsBackground(pri) && !result->empty()) budget_->Request(result->size(), pri);
    return s;
  }

 private:
  const std::unique_ptr<RandomAccessFile> base_;
  IoBudget* const budget_;
};

class IoBudgetEnv final : public EnvWrapper {
 public:
  IoBudgetEnv(Env* base, std::shared_ptr<IoBudget> budget, uint64_t force_bytes,
              bool charge_reads)
      : EnvWrapper(base),
        budget_(std::move(budget)),
        force_bytes_(force_bytes),
        charge_reads_(charge_reads && budget_ != nullptr) {}

  Status NewSequentialFile(const std::string& f, std::unique_ptr<SequentialFile>* r) override {
    Status s = target()->NewSequentialFile(f, r);
    if (s.ok() && charge_reads_) {
      *r = std::make_unique<BudgetSequentialFile>(std::move(*r), budget_.get());
    }
    return s;
  }
  Status NewRandomAccessFile(const std::string& f,
                             std::unique_ptr<RandomAccessFile>* r) override {
    Status s = target()->NewRandomAccessFile(f, r);
    if (s.ok() && charge_reads_) {
      *r = std::make_unique<BudgetRandomAccessFile>(std::move(*r), budget_.get());
    }
    return s;
  }
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override {
    return Wrap(target()->NewWritableFile(f, r), r);
  }
  Status NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) override {
    return Wrap(target()->NewAppendableFile(f, r), r);
  }

 private:
  // Every writable file is wrapped, whoever opens it: the priority that
  // counts is that of the thread appending.
  Status Wrap(Status s, std::unique_ptr<WritableFile>* r) {
    if (s.ok()) {
      *r = std::make_unique<BudgetWritableFile>(std::move(*r), budget_.get(), force_bytes_,
                                                target());
    }
    return s;
  }

  const std::shared_ptr<IoBudget> budget_;
  const uint64_t force_bytes_;
  const bool charge_reads_;
};

}  // namespace

std::unique_ptr<Env> NewIoBudgetEnv(Env* base, std::shared_ptr<IoBudget> budget,
                                    uint64_t force_bytes, bool charge_reads) {
  return std::make_unique<IoBudgetEnv>(base, std::move(budget), force_bytes, charge_reads);
}

}  // namespace lsm
