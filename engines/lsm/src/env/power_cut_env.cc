#include "env/power_cut_env.h"

#include <random>
#include <utility>
#include <vector>

#include "env/durable_dir.h"

namespace lsm {

namespace {

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class PowerCutWritableFile final : public WritableFile {
 public:
  PowerCutWritableFile(std::unique_ptr<WritableFile> base, PowerCutEnv* env, std::string fname,
                       std::shared_ptr<PowerCutEnv::Inode> inode)
      : base_(std::move(base)), env_(env), fname_(std::move(fname)), inode_(std::move(inode)) {}

  Status Append(std::string_view data) override {
    Status s = base_->Append(data);
    if (s.ok()) env_->Appended(inode_.get(), data);
    return s;
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override {
    env_->BeforeSync(fname_);
    Status s = base_->Sync();
    if (s.ok()) env_->Synced(inode_.get());
    return s;
  }
  Status Close() override { return base_->Close(); }

 private:
  const std::unique_ptr<WritableFile> base_;
  PowerCutEnv* const env_;
  const std::string fname_;
  const std::shared_ptr<PowerCutEnv::Inode> inode_;
};

}  // namespace

uint64_t DiskImage::Bytes() const {
  uint64_t bytes = 0;
  for (const auto& [path, data] : files) bytes += data.size();
  return bytes;
}

PowerCutEnv::PowerCutEnv(Env* base) : EnvWrapper(base) {}

Status PowerCutEnv::Restore(const DiskImage& image) {
  for (const std::string& dir : image.dirs) {
    Status s = target()->CreateDir(dir);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> l(mu_);
    live_dirs_.insert(dir);
    durable_dirs_.insert(dir);
    known_dirs_.insert(dir);
  }
  for (const auto& [path, data] : image.files) {
    std::unique_ptr<WritableFile> file;
    Status s = target()->NewWritableFile(path, &file);
    if (s.ok()) s = file->Append(data);
    if (s.ok()) s = file->Close();
    if (!s.ok()) return s;
    auto inode = std::make_shared<Inode>();
    inode->data = data;
    inode->synced = data.size();
    std::lock_guard<std::mutex> l(mu_);
    live_files_[path] = inode;
    durable_files_[path] = std::move(inode);
  }
  return Status::OK();
}

DiskImage PowerCutEnv::Cut(const CutOptions& options) const {
  std::lock_guard<std::mutex> l(mu_);
  // A path survives if each directory above it that was created here does.
  auto reachable = [this](const std::string& path) {
    for (std::string dir = ParentDir(path); dir != "/" && dir != "."; dir = ParentDir(dir)) {
      if (known_dirs_.count(dir) != 0 && durable_dirs_.count(dir) == 0) return false;
    }
    return true;
  };
  DiskImage image;
  for (const std::string& dir : durable_dirs_) {
    if (reachable(dir)) image.dirs.insert(dir);
  }
  for (const auto& [path, inode] : durable_files_) {
    if (!reachable(path)) continue;
    uint64_t keep = inode->synced;
    if (options.keep_unsynced && inode->data.size() > keep) {
      std::mt19937_64 rng(options.seed ^ std::hash<std::string>{}(path));
      keep += rng() % (inode->data.size() - keep + 1);
    }
    image.files.emplace(path, inode->data.substr(0, keep));
  }
  return image;
}

void PowerCutEnv::SetHook(Hook hook) {
  std::lock_guard<std::mutex> l(hook_mu_);
  hook_ = std::move(hook);
}

void PowerCutEnv::CallHook(Event event, const std::string& path) {
  Hook hook;
  {
    std::lock_guard<std::mutex> l(hook_mu_);
    hook = hook_;
  }
  if (hook) hook(event, path);
}

Status PowerCutEnv::Open(const std::string& fname, std::unique_ptr<WritableFile>* r,
                         OpenFunction open, bool truncate) {
  std::unique_ptr<WritableFile> file;
  Status s = (target()->*open)(fname, &file);
  if (!s.ok()) {
    r->reset();
    return s;
  }
  std::shared_ptr<Inode> inode;
  {
    std::lock_guard<std::mutex> l(mu_);
    std::shared_ptr<Inode>& entry = live_files_[fname];
    if (truncate || entry == nullptr) entry = std::make_shared<Inode>();
    inode = entry;
  }
  *r = std::make_unique<PowerCutWritableFile>(std::move(file), this, fname, std::move(inode));
  return Status::OK();
}

Status PowerCutEnv::NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r) {
  return Open(f, r, &Env::NewWritableFile, /*truncate=*/true);
}

Status PowerCutEnv::NewAppendableFile(const std::string& f, std::unique_ptr<WritableFile>* r) {
  return Open(f, r, &Env::NewAppendableFile, /*truncate=*/false);
}

Status PowerCutEnv::RemoveFile(const std::string& fname) {
  Status s = target()->RemoveFile(fname);
  if (s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    live_files_.erase(fname);
  }
  return s;
}

Status PowerCutEnv::CreateDir(const std::string& dir) {
  const std::string d = StripTrailingSlashes(dir);
  // A directory that exists already (created outside, or before) stays as it is.
  const bool existed = target()->FileExists(d);
  Status s = target()->CreateDir(dir);
  if (s.ok() && !existed) {
    std::lock_guard<std::mutex> l(mu_);
    live_dirs_.insert(d);
    known_dirs_.insert(d);
  }
  return s;
}

Status PowerCutEnv::RemoveDir(const std::string& dir) {
  Status s = target()->RemoveDir(dir);
  if (s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    live_dirs_.erase(StripTrailingSlashes(dir));
  }
  return s;
}

Status PowerCutEnv::RenameFile(const std::string& from, const std::string& to) {
  Status s = target()->RenameFile(from, to);
  if (s.ok() && from != to) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = live_files_.find(from);
    if (it != live_files_.end()) {
      live_files_[to] = std::move(it->second);
      live_files_.erase(it);
    } else {
      live_files_.erase(to);
    }
  }
  return s;
}

Status PowerCutEnv::SyncDir(const std::string& dir) {
  const std::string d = StripTrailingSlashes(dir);
  CallHook(Event::kSyncDir, d);
  Status s = target()->SyncDir(dir);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  // The directory's entries on the disk become its live ones.
  for (auto it = durable_files_.begin(); it != durable_files_.end();) {
    it = ParentDir(it->first) == d ? durable_files_.erase(it) : std::next(it);
  }
  for (const auto& [path, inode] : live_files_) {
    if (ParentDir(path) == d) durable_files_[path] = inode;
  }
  for (auto it = durable_dirs_.begin(); it != durable_dirs_.end();) {
    it = ParentDir(*it) == d ? durable_dirs_.erase(it) : std::next(it);
  }
  for (const std::string& sub : live_dirs_) {
    if (ParentDir(sub) == d) durable_dirs_.insert(sub);
  }
  return Status::OK();
}

void PowerCutEnv::Appended(Inode* inode, std::string_view data) {
  std::lock_guard<std::mutex> l(mu_);
  inode->data.append(data.data(), data.size());
}

void PowerCutEnv::BeforeSync(const std::string& fname) { CallHook(Event::kSync, fname); }

void PowerCutEnv::Synced(Inode* inode) {
  std::lock_guard<std::mutex> l(mu_);
  inode->synced = inode->data.size();
}

}  // namespace lsm
