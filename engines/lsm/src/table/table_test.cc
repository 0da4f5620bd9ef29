#include "table/table_builder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "table/format.h"
#include "table/test_util.h"
#include "util/coding.h"

namespace lsm {
namespace {

constexpr char kFname[] = "/db/000042.sst";

using test::Model;
using test::Seed;
using test::Val;

// Binary keys of varied length (the empty key included), mostly short, some
// long; ~10 % tombstones.
Model RandomModel(std::mt19937* rng, int n) {
  static const char kAlphabet[] = {'\0', '\x01', 'a', 'b', 'c', '\x7f', '\x80', '\xfe', '\xff'};
  Model m;
  m[""] = Val{ValueType::kValue, "empty key's value"};
  while (static_cast<int>(m.size()) < n) {
    size_t len = (*rng)() % 10 == 0 ? (*rng)() % 300 : 1 + (*rng)() % 16;
    std::string k(len, '\0');
    for (char& c : k) c = kAlphabet[(*rng)() % sizeof(kAlphabet)];
    const bool del = (*rng)() % 10 == 0;
    std::string v;
    if (!del) {
      v.resize((*rng)() % 10 == 0 ? (*rng)() % 3000 : (*rng)() % 100);
      for (char& c : v) c = static_cast<char>((*rng)());
    }
    m[k] = Val{del ? ValueType::kDeletion : ValueType::kValue, v};
  }
  return m;
}

std::string BuildTable(const Model& m, const TableOptions& options) {
  test::StringSink sink;
  TableBuilder b(options, &sink);
  for (const auto& [k, v] : m) b.Add(k, v.type, v.value);
  EXPECT_TRUE(b.Finish().ok());
  EXPECT_EQ(b.NumEntries(), m.size());
  EXPECT_EQ(b.FileSize(), sink.contents().size());
  if (!m.empty()) {
    EXPECT_EQ(b.smallest_key(), m.begin()->first);
    EXPECT_EQ(b.largest_key(), m.rbegin()->first);
  }
  return sink.contents();
}

Status OpenTable(const std::string& contents, const TableOptions& options,
                 std::unique_ptr<Table>* table, bool copy_to_scratch = true,
                 const test::StringSource** source = nullptr) {
  auto src = std::make_unique<test::StringSource>(contents, copy_to_scratch);
  if (source != nullptr) *source = src.get();
  return Table::Open(options, std::move(src), contents.size(), kFname, table);
}

void ExpectAt(const InternalIterator& it, Model::const_iterator e, const Model& m) {
  if (e == m.end()) {
    ASSERT_FALSE(it.Valid());
    ASSERT_TRUE(it.status().ok()) << it.status().ToString();
    return;
  }
  ASSERT_TRUE(it.Valid()) << it.status().ToString();
  ASSERT_EQ(it.key(), e->first);
  ASSERT_EQ(it.type(), e->second.type);
  ASSERT_EQ(it.value(), e->second.value);
}

void ExpectCorruptionNamingFile(const Status& s, const std::string& what) {
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(kFname), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(what), std::string::npos) << s.ToString();
}

// Parameters: block_bytes, bloom bits per key, reads copy into scratch.
class TableRoundTrip : public ::testing::TestWithParam<std::tuple<size_t, int, bool>> {
 protected:
  TableOptions Options() const {
    TableOptions o;
    o.block_bytes = std::get<0>(GetParam());
    o.bloom_bits_per_key = std::get<1>(GetParam());
    return o;
  }
  bool copy() const { return std::get<2>(GetParam()); }
};

TEST_P(TableRoundTrip, IterateGetSeek) {
  std::mt19937 rng(Seed());
  const Model m = RandomModel(&rng, 20000);
  const TableOptions options = Options();
  const std::string contents = BuildTable(m, options);
  std::unique_ptr<Table> t;
  const test::StringSource* src;
  ASSERT_TRUE(OpenTable(contents, options, &t, copy(), &src).ok());
  EXPECT_EQ(t->NumEntries(), m.size());
  EXPECT_EQ(t->FileSize(), contents.size());
  EXPECT_EQ(t->smallest_key(), "");
  EXPECT_EQ(t->largest_key(), m.rbegin()->first);
  uint64_t deletions = 0;
  for (const auto& [k, v] : m) deletions += v.type == ValueType::kDeletion;
  EXPECT_EQ(t->NumDeletions(), deletions);
  ASSERT_GT(t->DataSize(), 0u);
  ASSERT_LT(t->DataSize(), contents.size());

  // Full iteration equals the input; BytesConsumed never decreases, changes
  // exactly at block boundaries, and ends at the data size.
  auto it = t->NewIterator();
  EXPECT_EQ(it->BytesConsumed(), 0u);
  it->SeekToFirst();
  uint64_t prev_consumed = 0;
  std::vector<uint64_t> block_ends;
  std::vector<int> block_entries;
  for (auto e = m.begin(); e != m.end(); ++e) {
    ASSERT_NO_FATAL_FAILURE(ExpectAt(*it, e, m));
    const uint64_t consumed = it->BytesConsumed();
    ASSERT_GE(consumed, prev_consumed);
    ASSERT_LE(consumed, t->DataSize());
    if (consumed != prev_consumed) {
      block_ends.push_back(consumed);
      block_entries.push_back(0);
    }
    block_entries.back()++;
    prev_consumed = consumed;
    it->Next();
  }
  ASSERT_FALSE(it->Valid());
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(it->BytesConsumed(), t->DataSize());
  ASSERT_FALSE(block_ends.empty());
  EXPECT_EQ(block_ends.back(), t->DataSize());

  // Blocks respect the target size unless one entry alone exceeds it.
  uint64_t start = 0;
  for (size_t b = 0; b < block_ends.size(); b++) {
    const uint64_t size = block_ends[b] - start - kBlockTrailerSize;
    if (size > options.block_bytes) {
      ASSERT_EQ(block_entries[b], 1) << "block " << b << " of " << size << " bytes";
    }
    start = block_ends[b];
  }
  const double avg = static_cast<double>(t->DataSize()) / block_ends.size();
  std::printf("%zu blocks, average %.0f bytes (target %zu)\n", block_ends.size(), avg,
              options.block_bytes);
  if (options.block_bytes >= 4096) {
    EXPECT_GT(avg, 0.7 * options.block_bytes);
  }

  // Gets of present keys read exactly one block each.
  std::string value;
  for (const auto& [k, v] : m) {
    bool found = false;
    ValueType type;
    const size_t reads_before = src->reads();
    ASSERT_TRUE(t->Get(k, &found, &type, &value).ok());
    ASSERT_EQ(src->reads() - reads_before, 1u);
    ASSERT_TRUE(found) << k;
    ASSERT_EQ(type, v.type);
    if (type == ValueType::kValue) {
      ASSERT_EQ(value, v.value);
    }
    ASSERT_TRUE(t->KeyMayMatch(k));
  }

  // Absent keys: not found; with a filter, most are answered without I/O.
  const size_t reads_before = src->reads();
  int absent = 0;
  for (int i = 0; i < 5000; i++) {
    std::string k = "absent" + std::to_string(rng());
    if (m.count(k)) continue;
    absent++;
    bool found = true;
    ValueType type;
    ASSERT_TRUE(t->Get(k, &found, &type, &value).ok());
    ASSERT_FALSE(found);
  }
  const size_t absent_reads = src->reads() - reads_before;
  std::printf("absent-key Gets reading a block: %zu of %d\n", absent_reads, absent);
  if (options.bloom_bits_per_key >= 10) {
    EXPECT_LT(absent_reads, absent * 0.03);
  }
  if (options.bloom_bits_per_key == 0) {
    EXPECT_TRUE(t->KeyMayMatch("no filter: always true"));
  }

  // Seek: first key >= target, then Next continues in order.
  std::vector<std::string> targets = {"", std::string(1, '\0'), std::string(400, '\xff'),
                                      "b", "\x80"};
  for (int i = 0; i < 300; i++) {
    auto e = m.begin();
    std::advance(e, rng() % m.size());
    targets.push_back(e->first);
    targets.push_back(e->first + std::string(1, '\0'));
    if (!e->first.empty()) targets.push_back(e->first.substr(0, e->first.size() - 1));
  }
  for (const std::string& target : targets) {
    it->Seek(target);
    auto e = m.lower_bound(target);
    for (int j = 0; j < 40; j++) {
      ASSERT_NO_FATAL_FAILURE(ExpectAt(*it, e, m));
      if (e == m.end()) break;
      it->Next();
      ++e;
    }
  }
  it->Seek(std::string(400, '\xff'));
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->BytesConsumed(), t->DataSize());
}

INSTANTIATE_TEST_SUITE_P(Variants, TableRoundTrip,
                         ::testing::Values(std::make_tuple(4096, 10, true),
                                           std::make_tuple(4096, 10, false),
                                           std::make_tuple(256, 0, true),
                                           std::make_tuple(65536, 5, false)));

TEST(TableTest, EmptyTable) {
  TableOptions options;
  const std::string contents = BuildTable({}, options);
  std::unique_ptr<Table> t;
  ASSERT_TRUE(OpenTable(contents, options, &t).ok());
  EXPECT_EQ(t->NumEntries(), 0u);
  EXPECT_EQ(t->DataSize(), 0u);
  EXPECT_EQ(t->smallest_key(), "");
  EXPECT_EQ(t->largest_key(), "");
  auto it = t->NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(it->BytesConsumed(), 0u);
  it->Seek("x");
  EXPECT_FALSE(it->Valid());
  bool found = true;
  ValueType type;
  ASSERT_TRUE(t->Get("", &found, &type, nullptr).ok());
  EXPECT_FALSE(found);
}

TEST(TableTest, OneEntry) {
  for (const std::string& key : {std::string(), std::string("only"), std::string("\0\xff", 2)}) {
    for (ValueType type : {ValueType::kValue, ValueType::kDeletion}) {
      Model m;
      m[key] = Val{type, type == ValueType::kValue ? "v" : ""};
      TableOptions options;
      const std::string contents = BuildTable(m, options);
      std::unique_ptr<Table> t;
      ASSERT_TRUE(OpenTable(contents, options, &t).ok());
      EXPECT_EQ(t->smallest_key(), key);
      EXPECT_EQ(t->largest_key(), key);
      bool found = false;
      ValueType got_type;
      std::string value = "stale";
      ASSERT_TRUE(t->Get(key, &found, &got_type, &value).ok());
      ASSERT_TRUE(found);
      EXPECT_EQ(got_type, type);
      EXPECT_EQ(value, m[key].value);
      ASSERT_TRUE(t->Get(key + "x", &found, &got_type, &value).ok());
      EXPECT_FALSE(found);
      auto it = t->NewIterator();
      it->SeekToFirst();
      ASSERT_NO_FATAL_FAILURE(ExpectAt(*it, m.begin(), m));
      EXPECT_EQ(it->BytesConsumed(), t->DataSize());
      it->Next();
      EXPECT_FALSE(it->Valid());
    }
  }
}

// Largest key and value the engine accepts, between small entries: the huge
// entry sits alone in its block.
TEST(TableTest, HugeEntry) {
  Model m;
  m["a"] = Val{ValueType::kValue, "small"};
  const std::string big_key = "b" + std::string(64 * 1024 - 1, '\x42');
  std::string big_value(16 * 1024 * 1024, '\0');
  for (size_t i = 0; i < big_value.size(); i++) big_value[i] = static_cast<char>(i * 7);
  m[big_key] = Val{ValueType::kValue, big_value};
  m["c"] = Val{ValueType::kValue, "after"};
  TableOptions options;
  const std::string contents = BuildTable(m, options);
  std::unique_ptr<Table> t;
  for (bool copy : {true, false}) {
    ASSERT_TRUE(OpenTable(contents, options, &t, copy).ok());
    bool found = false;
    ValueType type;
    std::string value;
    ASSERT_TRUE(t->Get(big_key, &found, &type, &value).ok());
    ASSERT_TRUE(found);
    EXPECT_TRUE(value == big_value);
    ASSERT_TRUE(t->Get("c", &found, &type, &value).ok());
    ASSERT_TRUE(found);
    EXPECT_EQ(value, "after");

    auto it = t->NewIterator();
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    const uint64_t first_end = it->BytesConsumed();
    EXPECT_LT(first_end, 100u);  // "a" has a block of its own
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), big_key);
    EXPECT_TRUE(it->value() == big_value);
    EXPECT_GT(it->BytesConsumed() - first_end, big_value.size() + big_key.size());
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), "c");
    EXPECT_EQ(it->BytesConsumed(), t->DataSize());
    it->Seek("b");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), big_key);
  }
}

TEST(TableTest, ExpectedEntriesHint) {
  std::mt19937 rng(Seed());
  const Model m = RandomModel(&rng, 3000);
  TableOptions options;
  const std::string plain = BuildTable(m, options);
  // An exact hint builds the very same filter, hence the same file.
  options.expected_entries = m.size();
  EXPECT_EQ(BuildTable(m, options), plain);
  // An overestimate: a larger filter, same contents.
  options.expected_entries = 4 * m.size();
  const std::string bigger = BuildTable(m, options);
  EXPECT_GT(bigger.size(), plain.size());
  std::unique_ptr<Table> t;
  ASSERT_TRUE(OpenTable(bigger, options, &t).ok());
  for (const auto& [k, v] : m) {
    bool found = false;
    ValueType type;
    ASSERT_TRUE(t->Get(k, &found, &type, nullptr).ok());
    ASSERT_TRUE(found);
  }
}

TEST(TableTest, BuilderRejectsOutOfOrderKeys) {
  test::StringSink sink;
  TableBuilder b(TableOptions(), &sink);
  b.Add("b", ValueType::kValue, "1");
  b.Add("a", ValueType::kValue, "2");
  EXPECT_TRUE(b.status().IsInvalidArgument());
  EXPECT_TRUE(b.Finish().IsInvalidArgument());

  test::StringSink sink2;
  TableBuilder dup(TableOptions(), &sink2);
  dup.Add("a", ValueType::kValue, "1");
  dup.Add("a", ValueType::kValue, "2");
  EXPECT_TRUE(dup.status().IsInvalidArgument());
}

TEST(TableTest, BuilderReportsWriteErrors) {
  test::StringSink sink;
  TableOptions options;
  options.block_bytes = 64;
  TableBuilder b(options, &sink);
  b.Add("a", ValueType::kValue, std::string(100, 'x'));
  sink.set_fail_appends(true);
  b.Add("b", ValueType::kValue, std::string(100, 'x'));  // flushes the first block
  EXPECT_TRUE(b.status().IsIOError());
  EXPECT_TRUE(b.Finish().IsIOError());
}

class TableCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; i++) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%06d", i);
      m_[key] = Val{ValueType::kValue, std::string(50 + rng() % 50, 'a' + i % 26)};
    }
    contents_ = BuildTable(m_, options_);
    std::unique_ptr<Table> t;
    ASSERT_TRUE(OpenTable(contents_, options_, &t).ok());
    data_size_ = t->DataSize();
    // The footer holds the metadata handles.
    Footer footer;
    ASSERT_EQ(footer.DecodeFrom(std::string_view(contents_).substr(contents_.size() - kFooterSize)),
              nullptr);
    footer_ = footer;
  }

  TableOptions options_;
  Model m_;
  std::string contents_;
  uint64_t data_size_ = 0;
  Footer footer_;
};

TEST_F(TableCorruptionTest, FlippedDataByte) {
  std::string bad = contents_;
  bad[100] ^= 0x10;  // inside the first data block (holds "key000000")
  std::unique_ptr<Table> t;
  ASSERT_TRUE(OpenTable(bad, options_, &t).ok());  // data blocks are checked on read
  bool found;
  ValueType type;
  std::string value;
  Status s = t->Get("key000000", &found, &type, &value);
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(s, "bad block checksum"));
  EXPECT_NE(s.ToString().find("at offset 0"), std::string::npos) << s.ToString();
  // Other blocks still read fine.
  ASSERT_TRUE(t->Get("key001999", &found, &type, &value).ok());
  EXPECT_TRUE(found);

  auto it = t->NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(it->status(), "bad block checksum"));
  // The error sticks.
  it->Seek("key001999");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());

  // A later block fails mid-iteration, after the good entries before it.
  std::string bad2 = contents_;
  bad2[data_size_ - 10] ^= 0x01;  // the last data block
  ASSERT_TRUE(OpenTable(bad2, options_, &t).ok());
  it = t->NewIterator();
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, m_.size());
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(it->status(), "bad block checksum"));
}

TEST_F(TableCorruptionTest, UnverifiedReadsSkipTheChecksum) {
  std::string bad = contents_;
  // Flip a byte of a value (not of the entry structure): undetected when
  // checksums are off, which is what the option means.
  const size_t pos = contents_.find(std::string(50, 'a'));
  ASSERT_LT(pos, data_size_);
  bad[pos + 10] = 'X';
  TableOptions no_verify = options_;
  no_verify.verify_checksums = false;
  std::unique_ptr<Table> t;
  ASSERT_TRUE(OpenTable(bad, no_verify, &t).ok());
  auto it = t->NewIterator();
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(n, m_.size());
}

TEST_F(TableCorruptionTest, BadMagic) {
  std::string bad = contents_;
  bad[bad.size() - 3] ^= 0xff;
  std::unique_ptr<Table> t;
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(OpenTable(bad, options_, &t), "bad magic"));
  EXPECT_EQ(t, nullptr);
}

TEST_F(TableCorruptionTest, BadFooterChecksumAndVersion) {
  std::string bad = contents_;
  bad[bad.size() - kFooterSize + 3] ^= 0x01;  // index offset
  std::unique_ptr<Table> t;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCorruptionNamingFile(OpenTable(bad, options_, &t), "bad footer checksum"));

  Footer f = footer_;
  f.version = 9;
  std::string enc;
  f.EncodeTo(&enc);
  bad = contents_.substr(0, contents_.size() - kFooterSize) + enc;
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(OpenTable(bad, options_, &t), "version"));
}

TEST_F(TableCorruptionTest, BadMetadataBlocks) {
  struct Case {
    const BlockHandle* handle;
    const char* name;
  } cases[] = {{&footer_.index, "index"}, {&footer_.filter, "filter"}, {&footer_.meta, "meta"}};
  for (const Case& c : cases) {
    ASSERT_GT(c.handle->size, 0u) << c.name;
    for (uint64_t delta : {uint64_t{0}, c.handle->size / 2, c.handle->size - 1,
                           c.handle->size /* trailer */}) {
      std::string bad = contents_;
      bad[c.handle->offset + delta] ^= 0x04;
      std::unique_ptr<Table> t;
      SCOPED_TRACE(c.name);
      ASSERT_NO_FATAL_FAILURE(
          ExpectCorruptionNamingFile(OpenTable(bad, options_, &t), "bad block checksum"));
    }
  }
}

TEST_F(TableCorruptionTest, HandlesOutsideTheFile) {
  Footer f = footer_;
  f.index.size = contents_.size();  // runs into the footer and beyond
  std::string enc;
  f.EncodeTo(&enc);
  const std::string bad = contents_.substr(0, contents_.size() - kFooterSize) + enc;
  std::unique_ptr<Table> t;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCorruptionNamingFile(OpenTable(bad, options_, &t), "bad index block handle"));
  f = footer_;
  f.meta.offset = ~uint64_t{0} - 2;  // overflow bait
  enc.clear();
  f.EncodeTo(&enc);
  const std::string bad2 = contents_.substr(0, contents_.size() - kFooterSize) + enc;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCorruptionNamingFile(OpenTable(bad2, options_, &t), "bad meta block handle"));
}

TEST_F(TableCorruptionTest, Truncated) {
  std::unique_ptr<Table> t;
  // Shorter than a footer.
  ASSERT_NO_FATAL_FAILURE(
      ExpectCorruptionNamingFile(OpenTable(contents_.substr(0, 10), options_, &t), "truncated"));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCorruptionNamingFile(OpenTable(std::string(), options_, &t), "truncated"));
  // Cut anywhere: the footer is not where it should be.
  for (size_t cut : {size_t{1}, size_t{5}, size_t{64}, size_t{1000}, contents_.size() / 2}) {
    const std::string bad = contents_.substr(0, contents_.size() - cut);
    Status s = OpenTable(bad, options_, &t);
    ASSERT_TRUE(s.IsCorruption()) << cut << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(kFname), std::string::npos);
  }
  // The caller believes in the full size but the file is shorter (e.g. a
  // manifest recorded the size, then the file lost its tail).
  const std::string shorter = contents_.substr(0, contents_.size() - 20);
  Status s = Table::Open(options_, std::make_unique<test::StringSource>(shorter),
                         contents_.size(), kFname, &t);
  ASSERT_NO_FATAL_FAILURE(ExpectCorruptionNamingFile(s, "truncated"));
}

// Every single-byte change anywhere in the file is detected, either by Open
// or by the reads of a full scan: every byte is under some checksum (or is
// the magic number).
TEST_F(TableCorruptionTest, EveryByteIsProtected) {
  TableOptions options;
  options.block_bytes = 256;
  Model small;
  for (int i = 0; i < 40; i++) small["k" + std::to_string(i)] = Val{ValueType::kValue, "value"};
  small["zz"] = Val{ValueType::kDeletion, ""};
  const std::string good = BuildTable(small, options);
  for (size_t pos = 0; pos < good.size(); pos++) {
    std::string bad = good;
    bad[pos] ^= static_cast<char>(1 + pos % 255);
    std::unique_ptr<Table> t;
    Status s = OpenTable(bad, options, &t);
    if (s.ok()) {
      auto it = t->NewIterator();
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
      }
      s = it->status();
    }
    ASSERT_TRUE(s.IsCorruption()) << "byte " << pos << " of " << good.size() << ": "
                                  << s.ToString();
    ASSERT_NE(s.ToString().find(kFname), std::string::npos) << s.ToString();
  }
}

// With checksums off, corrupt data blocks reach the parser: it must report
// Corruption or return some data, never crash or read outside the block
// (the sanitizer build checks that).
TEST_F(TableCorruptionTest, UnverifiedGarbageNeverCrashes) {
  const unsigned seed = Seed();
  std::mt19937 rng(seed);
  TableOptions options;
  options.verify_checksums = false;
  for (int trial = 0; trial < 300; trial++) {
    std::string bad = contents_;
    for (int i = 0; i < 1 + trial % 8; i++) bad[rng() % data_size_] = static_cast<char>(rng());
    std::unique_ptr<Table> t;
    ASSERT_TRUE(OpenTable(bad, options, &t, trial % 2 == 0).ok());
    auto it = t->NewIterator();
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      n++;
      ASSERT_LE(it->value().size(), data_size_);
    }
    ASSERT_TRUE(it->status().ok() || it->status().IsCorruption()) << it->status().ToString();
    for (int i = 0; i < 20; i++) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%06d", static_cast<int>(rng() % 2000));
      bool found;
      ValueType type;
      std::string value;
      Status s = t->Get(key, &found, &type, &value);
      ASSERT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
      it->Seek(key);
    }
  }
}

TEST(TableConcurrencyTest, ConcurrentGetsAndIterators) {
  std::mt19937 rng(Seed());
  const Model m = RandomModel(&rng, 5000);
  TableOptions options;
  const std::string contents = BuildTable(m, options);
  std::unique_ptr<Table> t;
  ASSERT_TRUE(OpenTable(contents, options, &t).ok());
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < 4; th++) {
    threads.emplace_back([&, th] {
      std::mt19937 r(th);
      std::string value;
      for (int i = 0; i < 3000; i++) {
        const std::string& k = keys[r() % keys.size()];
        bool found = false;
        ValueType type;
        if (!t->Get(k, &found, &type, &value).ok() || !found) failures++;
        if (found && type == ValueType::kValue && value != m.at(k).value) failures++;
      }
      auto it = t->NewIterator();
      size_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
      if (n != m.size()) failures++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace lsm
