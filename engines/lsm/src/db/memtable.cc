#include "db/memtable.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"

namespace lsm {
namespace {

constexpr uint64_t kMaxSeq = (uint64_t{1} << 56) - 1;

// Entries live in our own arena, so decoding trusts its input: a varint32
// is at most 5 bytes.
inline const char* DecodeVarint32From(const char* src, uint32_t* v) {
  return GetVarint32Ptr(src, src + kMaxVarint32Bytes, v);
}

inline uint64_t LoadFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));  // host order: the entry never leaves memory
  return v;
}

struct DecodedEntry {
  std::string_view key;
  uint64_t tag;  // seq << 8 | type
  std::string_view value;
};

inline std::string_view DecodeKey(const char* entry, const char** after_key) {
  uint32_t len;
  const char* p = DecodeVarint32From(entry, &len);
  *after_key = p + len;
  return std::string_view(p, len);
}

inline DecodedEntry Decode(const char* entry) {
  DecodedEntry d;
  const char* p;
  d.key = DecodeKey(entry, &p);
  d.tag = LoadFixed64(p);
  uint32_t vlen;
  const char* v = DecodeVarint32From(p + 8, &vlen);
  d.value = std::string_view(v, vlen);
  return d;
}

// A probe for Seek, encoded like an entry: the key with the largest visible
// seq sorts first. Short keys stay in the inline buffer (no allocation on a
// Get).
class LookupKey {
 public:
  LookupKey(std::string_view key, uint64_t seq) {
    const size_t size = VarintLength(static_cast<uint32_t>(key.size())) + key.size() + 8;
    char* dst = inline_;
    if (size > sizeof(inline_)) {
      heap_.resize(size);
      dst = heap_.data();
    }
    data_ = dst;
    char* p = EncodeVarint32(dst, static_cast<uint32_t>(key.size()));
    if (!key.empty()) std::memcpy(p, key.data(), key.size());
    const uint64_t tag = (seq << 8) | 0xff;
    std::memcpy(p + key.size(), &tag, sizeof(tag));
  }
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;
  const char* data() const { return data_; }

 private:
  char inline_[200];
  std::string heap_;
  const char* data_;
};

}  // namespace

int MemTable::EntryComparator::operator()(const char* a, const char* b) const {
  const char* pa;
  const char* pb;
  std::string_view ka = DecodeKey(a, &pa);
  std::string_view kb = DecodeKey(b, &pb);
  int r = ka.compare(kb);
  if (r != 0) return r;
  uint64_t ta = LoadFixed64(pa);
  uint64_t tb = LoadFixed64(pb);
  if (ta > tb) return -1;  // newer first
  if (ta < tb) return 1;
  return 0;
}

MemTable::MemTable(uint64_t wal_number, size_t budget_bytes)
    : wal_number_(wal_number),
      budget_bytes_(budget_bytes),
      arena_(std::clamp<size_t>(budget_bytes / 16, 256, 1 << 20)),
      table_(EntryComparator(), &arena_) {}

void MemTable::Add(uint64_t seq, ValueType type, std::string_view key, std::string_view value) {
  const auto klen = static_cast<uint32_t>(key.size());
  const auto vlen = static_cast<uint32_t>(value.size());
  const size_t size = VarintLength(klen) + klen + 8 + VarintLength(vlen) + vlen;
  char* buf = arena_.Allocate(size);
  char* p = EncodeVarint32(buf, klen);
  // Empty views may carry a null data(): memcpy must not see it.
  if (klen > 0) std::memcpy(p, key.data(), klen);
  p += klen;
  uint64_t tag = (seq << 8) | static_cast<uint8_t>(type);
  std::memcpy(p, &tag, sizeof(tag));
  p = EncodeVarint32(p + 8, vlen);
  if (vlen > 0) std::memcpy(p, value.data(), vlen);
  table_.Insert(buf);
  entries_.fetch_add(1, std::memory_order_relaxed);
}

bool MemTable::Get(std::string_view key, ValueType* type, std::string* value) const {
  LookupKey probe(key, kMaxSeq);
  Table::Iterator it(&table_);
  it.Seek(probe.data());
  if (!it.Valid()) return false;
  DecodedEntry e = Decode(it.key());
  if (e.key != key) return false;
  *type = static_cast<ValueType>(e.tag & 0xff);
  if (*type == ValueType::kValue) value->assign(e.value.data(), e.value.size());
  return true;
}

class MemTableIterator final : public InternalIterator {
 public:
  MemTableIterator(const MemTable::Table* table, uint64_t snapshot_seq)
      : it_(table), snapshot_seq_(snapshot_seq) {}

  bool Valid() const override { return it_.Valid(); }
  void SeekToFirst() override {
    it_.SeekToFirst();
    SkipInvisible();
  }
  void Seek(std::string_view target) override {
    LookupKey probe(target, snapshot_seq_);
    it_.Seek(probe.data());
    SkipInvisible();
  }
  void Next() override {
    // Skip the older versions of the current key.
    std::string_view current = entry_.key;
    do {
      it_.Next();
    } while (it_.Valid() && KeyAt() == current);
    SkipInvisible();
  }
  std::string_view key() const override { return entry_.key; }
  std::string_view value() const override { return entry_.value; }
  ValueType type() const override { return static_cast<ValueType>(entry_.tag & 0xff); }
  Status status() const override { return Status::OK(); }

 private:
  std::string_view KeyAt() const {
    const char* unused;
    return DecodeKey(it_.key(), &unused);
  }

  // Moves past versions newer than the snapshot, then decodes the entry.
  void SkipInvisible() {
    while (it_.Valid()) {
      entry_ = Decode(it_.key());
      if ((entry_.tag >> 8) <= snapshot_seq_) return;
      it_.Next();
    }
  }

  MemTable::Table::Iterator it_;
  const uint64_t snapshot_seq_;
  DecodedEntry entry_{};
};

std::unique_ptr<InternalIterator> MemTable::NewIterator(uint64_t snapshot_seq) const {
  return std::make_unique<MemTableIterator>(&table_, snapshot_seq);
}

}  // namespace lsm
