#include "env/fault_env.h"

#include <cstring>
#include <utility>

namespace lsm {

namespace {

const char* FileName(FaultFile file) {
  switch (file) {
    case FaultFile::kAny: return "any file";
    case FaultFile::kWal: return "WAL";
    case FaultFile::kTable: return "table";
    case FaultFile::kManifest: return "manifest";
    case FaultFile::kCurrent: return "CURRENT";
    case FaultFile::kOther: return "other file";
  }
  return "?";
}

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(std::unique_ptr<WritableFile> base, FaultEnv* env, std::string fname,
                    FaultFile kind)
      : base_(std::move(base)), env_(env), fname_(std::move(fname)), kind_(kind) {}

  Status Append(std::string_view data) override {
    FaultEnv::Verdict v = env_->Check(FaultOp::kWrite, kind_, fname_);
    if (v.status.ok()) return base_->Append(data);
    if (v.short_write) {
      Status s = base_->Append(data.substr(0, data.size() / 2));
      if (!s.ok()) return s;
    }
    return v.status;
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override {
    Status s = env_->Check(FaultOp::kSync, kind_, fname_).status;
    return s.ok() ? base_->Sync() : s;
  }
  Status Close() override { return base_->Close(); }

 private:
  const std::unique_ptr<WritableFile> base_;
  FaultEnv* const env_;
  const std::string fname_;
  const FaultFile kind_;
};

}  // namespace

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kCreate: return "create";
    case FaultOp::kWrite: return "write";
    case FaultOp::kSync: return "sync";
    case FaultOp::kRename: return "rename";
    case FaultOp::kSyncDir: return "syncdir";
    case FaultOp::kRemove: return "remove";
  }
  return "?";
}

std::string DescribeFault(const Fault& fault) {
  std::string text = std::string(FaultOpName(fault.op)) + " of " + FileName(fault.file) +
                     ", call " + std::to_string(fault.nth) +
                     (fault.until_cleared ? " onwards" : "") + ", ";
  text += fault.error == ENOSPC ? "ENOSPC"
          : fault.error == EIO  ? "EIO"
                                : std::to_string(fault.error);
  if (fault.short_write) text += ", short write";
  return text;
}

FaultEnv::FaultEnv(Env* base, FileClassifier classify)
    : EnvWrapper(base), classify_(std::move(classify)) {}

void FaultEnv::Inject(const Fault& fault) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = true;
  fault_ = fault;
  matched_ = 0;
  fired_ = false;
}

void FaultEnv::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

bool FaultEnv::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

uint64_t FaultEnv::faults_injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

FaultEnv::Verdict FaultEnv::Check(FaultOp op, FaultFile kind, const std::string& fname) {
  std::lock_guard<std::mutex> lock(mu_);
  Verdict v;
  if (!armed_ || op != fault_.op) return v;
  if (fault_.file != FaultFile::kAny && fault_.file != kind) return v;
  if (++matched_ < fault_.nth) return v;
  if (!fault_.until_cleared) armed_ = false;
  fired_ = true;
  injected_++;
  // Worded as the POSIX Env words a failed call, so that the engine's
  // messages look as they would on a real disk.
  v.status = Status::IOError(std::string(FaultOpName(op)) + " " + fname,
                             std::string(std::strerror(fault_.error)) + " (injected)");
  v.short_write = op == FaultOp::kWrite && fault_.short_write;
  return v;
}

Status FaultEnv::NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) {
  return OpenWritable(f, r, &Env::NewWritableFile);
}

Status FaultEnv::NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) {
  return OpenWritable(f, r, &Env::NewAppendableFile);
}

Status FaultEnv::OpenWritable(const std::string& fname, std::unique_ptr<WritableFile>* r,
                              OpenFunction open) {
  const FaultFile kind = classify_(fname);
  Status s = Check(FaultOp::kCreate, kind, fname).status;
  if (s.ok()) s = (target()->*open)(fname, r);
  if (!s.ok()) {
    r->reset();
    return s;
  }
  *r = std::make_unique<FaultWritableFile>(std::move(*r), this, fname, kind);
  return s;
}

Status FaultEnv::RenameFile(const std::string& from, const std::string& to) {
  Status s = Check(FaultOp::kRename, classify_(to), from + " to " + to).status;
  return s.ok() ? EnvWrapper::RenameFile(from, to) : s;
}

Status FaultEnv::SyncDir(const std::string& dir) {
  Status s = Check(FaultOp::kSyncDir, FaultFile::kAny, dir).status;
  return s.ok() ? EnvWrapper::SyncDir(dir) : s;
}

Status FaultEnv::RemoveFile(const std::string& fname) {
  Status s = Check(FaultOp::kRemove, classify_(fname), fname).status;
  return s.ok() ? EnvWrapper::RemoveFile(fname) : s;
}

}  // namespace lsm
