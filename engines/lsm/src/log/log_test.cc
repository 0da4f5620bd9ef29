#include <random>

#include "gtest/gtest.h"
#include "log/log_format.h"
#include "lsm/env.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lsm::log {
namespace {

// A WritableFile appending to a string the test owns.
class StringSink final : public WritableFile {
 public:
  explicit StringSink(std::string* contents) : contents_(contents) {}
  Status Append(std::string_view data) override {
    contents_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override {
    flushes_++;
    return Status::OK();
  }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  int flushes() const { return flushes_; }

 private:
  std::string* contents_;
  int flushes_ = 0;
};

// A SequentialFile over a view of bytes; optionally fails after fail_after
// bytes.
class StringSource final : public SequentialFile {
 public:
  explicit StringSource(std::string_view contents, size_t fail_after = SIZE_MAX)
      : contents_(contents), fail_after_(fail_after) {}
  Status Read(size_t n, std::string_view* result, char* scratch) override {
    if (pos_ >= fail_after_) return Status::IOError("injected read error");
    size_t got = std::min(n, contents_.size() - pos_);
    std::memcpy(scratch, contents_.data() + pos_, got);
    pos_ += got;
    *result = std::string_view(scratch, got);
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ = std::min<uint64_t>(pos_ + n, contents_.size());
    return Status::OK();
  }

 private:
  std::string_view contents_;
  size_t fail_after_;
  size_t pos_ = 0;
};

std::string RandomRecord(std::mt19937_64* rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>((*rng)() & 0xff);
  return s;
}

// Reads every record of contents.
struct ReadResult {
  std::vector<std::string> records;
  bool tail_corrupted = false;
  bool tail_truncated = false;
  std::string what_happened;
  Status status;
};

ReadResult ReadAll(std::string_view contents, const std::string& fname = "test.log") {
  StringSource src(contents);
  Reader reader(&src, fname);
  ReadResult r;
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch)) r.records.emplace_back(record);
  // Once ended, the log stays ended.
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
  r.tail_corrupted = reader.tail_corrupted();
  r.tail_truncated = reader.tail_truncated();
  r.what_happened = reader.what_happened();
  r.status = reader.status();
  return r;
}

// Builds one raw fragment, bypassing the Writer, to forge sequences it
// would never write.
std::string Fragment(int type, std::string_view payload) {
  std::string out;
  char t = static_cast<char>(type);
  uint32_t crc = crc32c::Extend(crc32c::Value(&t, 1), payload.data(), payload.size());
  PutFixed32(&out, crc32c::Mask(crc));
  out.push_back(static_cast<char>(payload.size() & 0xff));
  out.push_back(static_cast<char>(payload.size() >> 8));
  out.push_back(t);
  out.append(payload.data(), payload.size());
  return out;
}

std::string Write(const std::vector<std::string>& records) {
  std::string contents;
  StringSink sink(&contents);
  Writer writer(&sink);
  for (const auto& r : records) EXPECT_TRUE(writer.AddRecord(r).ok());
  return contents;
}

TEST(LogTest, EmptyLog) {
  ReadResult r = ReadAll("");
  EXPECT_TRUE(r.records.empty());
  EXPECT_FALSE(r.tail_corrupted);
  EXPECT_TRUE(r.status.ok());
}

TEST(LogTest, EmptyRecords) {
  std::vector<std::string> records(10, "");
  records.push_back("x");
  records.push_back("");
  std::string contents = Write(records);
  EXPECT_EQ(contents.size(), records.size() * kHeaderSize + 1);
  ReadResult r = ReadAll(contents);
  EXPECT_EQ(r.records, records);
  EXPECT_FALSE(r.tail_corrupted) << r.what_happened;
}

TEST(LogTest, RandomSizesRoundTrip) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::string> records;
  for (int i = 0; i < 600; i++) {
    size_t n;
    switch (rng() % 4) {
      case 0: n = rng() % 16; break;
      case 1: n = rng() % 1000; break;
      case 2: n = rng() % 20000; break;
      default: n = rng() % (100 * 1024 + 1); break;
    }
    records.push_back(RandomRecord(&rng, n));
  }
  std::string contents;
  StringSink sink(&contents);
  Writer writer(&sink);
  for (const auto& rec : records) ASSERT_TRUE(writer.AddRecord(rec).ok());
  EXPECT_EQ(sink.flushes(), static_cast<int>(records.size())) << "one Flush per record";

  ReadResult r = ReadAll(contents);
  ASSERT_EQ(r.records.size(), records.size());
  for (size_t i = 0; i < records.size(); i++) {
    ASSERT_EQ(r.records[i], records[i]) << "record " << i << " of size " << records[i].size();
  }
  EXPECT_FALSE(r.tail_corrupted) << r.what_happened;
  EXPECT_TRUE(r.status.ok());
}

TEST(LogTest, RecordExactlyFillsBlock) {
  const std::string a(kBlockSize - kHeaderSize, 'a');
  std::string contents = Write({a});
  EXPECT_EQ(contents.size(), kBlockSize);
  contents = Write({a, "b", a});
  // The second record starts a new block with no trailer; the third one
  // then spans two blocks.
  EXPECT_EQ(contents.size(), 2 * kBlockSize + 2 * kHeaderSize + 1);
  EXPECT_EQ(contents[kBlockSize + kHeaderSize], 'b');
  ReadResult r = ReadAll(contents);
  EXPECT_EQ(r.records, (std::vector<std::string>{a, "b", a}));
  EXPECT_FALSE(r.tail_corrupted) << r.what_happened;
}

TEST(LogTest, BlockTailShorterThanHeaderIsZeroFilled) {
  for (size_t leftover = 0; leftover <= kHeaderSize; leftover++) {
    SCOPED_TRACE("leftover " + std::to_string(leftover));
    const std::string a(kBlockSize - kHeaderSize - leftover, 'a');
    std::string contents = Write({a, "next", ""});
    if (leftover < kHeaderSize) {
      EXPECT_EQ(contents.substr(kBlockSize - leftover, leftover), std::string(leftover, '\0'));
    } else {
      // Exactly a header's room: "next" starts there as an empty FIRST.
      EXPECT_EQ(contents[kBlockSize - kHeaderSize + 6], static_cast<char>(kFirstType));
    }
    // Block 1 holds "next" (or its LAST fragment) and the empty record.
    EXPECT_EQ(contents.size(), kBlockSize + 2 * kHeaderSize + 4);
    ReadResult r = ReadAll(contents);
    EXPECT_EQ(r.records, (std::vector<std::string>{a, "next", ""}));
    EXPECT_FALSE(r.tail_corrupted) << r.what_happened;

    // The writer pads only when the next record comes, so a log may end
    // inside a block's trailer zone, with none or part of the padding:
    // a clean end.
    std::string only_a = Write({a});
    for (size_t pad = 0; pad <= leftover && leftover < kHeaderSize; pad++) {
      ReadResult ra = ReadAll(only_a + std::string(pad, '\0'));
      EXPECT_EQ(ra.records, (std::vector<std::string>{a}));
      EXPECT_FALSE(ra.tail_corrupted) << ra.what_happened;
    }
  }
}

TEST(LogTest, AppendToExistingLog) {
  const uint64_t seed = 99;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // First-writer sizes that leave the block with room, with exactly a
  // header's room, with less (trailer zone), and with none.
  for (size_t first_size : {size_t{100}, kBlockSize - 2 * kHeaderSize, kBlockSize - kHeaderSize - 3,
                            kBlockSize - kHeaderSize, size_t{50000}}) {
    SCOPED_TRACE("first record size " + std::to_string(first_size));
    std::vector<std::string> records = {RandomRecord(&rng, first_size)};
    std::string contents;
    {
      StringSink sink(&contents);
      Writer writer(&sink);
      ASSERT_TRUE(writer.AddRecord(records[0]).ok());
    }
    for (int session = 0; session < 3; session++) {
      StringSink sink(&contents);
      Writer writer(&sink, contents.size());
      for (int i = 0; i < 3; i++) {
        records.push_back(RandomRecord(&rng, rng() % 40000));
        ASSERT_TRUE(writer.AddRecord(records.back()).ok());
      }
    }
    ReadResult r = ReadAll(contents);
    EXPECT_EQ(r.records, records);
    EXPECT_FALSE(r.tail_corrupted) << r.what_happened;
  }
}

TEST(LogTest, AppendThroughMemEnv) {
  std::unique_ptr<Env> env = NewMemEnv();
  const std::string fname = "/db/000001.log";
  std::vector<std::string> records;
  std::mt19937_64 rng(5);
  for (int session = 0; session < 4; session++) {
    uint64_t size = 0;
    if (env->FileExists(fname)) {
      ASSERT_TRUE(env->GetFileSize(fname, &size).ok());
    }
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(env->NewAppendableFile(fname, &file).ok());
    Writer writer(file.get(), size);
    for (int i = 0; i < 5; i++) {
      records.push_back(RandomRecord(&rng, rng() % 30000));
      ASSERT_TRUE(writer.AddRecord(records.back()).ok());
    }
    ASSERT_TRUE(file->Close().ok());
  }
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(env->NewSequentialFile(fname, &file).ok());
  Reader reader(file.get(), fname);
  std::string scratch;
  std::string_view record;
  for (size_t i = 0; i < records.size(); i++) {
    ASSERT_TRUE(reader.ReadRecord(&record, &scratch)) << i << ": " << reader.what_happened();
    ASSERT_EQ(record, records[i]) << i;
  }
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
  EXPECT_FALSE(reader.tail_corrupted()) << reader.what_happened();
  EXPECT_TRUE(reader.status().ok());
}

// Cuts the log at every byte offset inside its last record: earlier records
// survive, and the cut shows as a corrupted tail unless it falls exactly at
// the record's start (the record was simply never written).
void CheckTruncations(const std::vector<std::string>& records) {
  std::string before_last;
  {
    std::vector<std::string> earlier(records.begin(), records.end() - 1);
    before_last = Write(earlier);
  }
  const std::string contents = Write(records);
  const size_t start = before_last.size();
  ASSERT_LT(start, contents.size());
  for (size_t cut = start; cut <= contents.size(); cut++) {
    ReadResult r = ReadAll(std::string_view(contents).substr(0, cut));
    const bool complete = cut == contents.size();
    const size_t want = complete ? records.size() : records.size() - 1;
    ASSERT_EQ(r.records.size(), want) << "cut at " << cut;
    for (size_t i = 0; i < want; i++) ASSERT_EQ(r.records[i], records[i]) << "cut " << cut;
    ASSERT_EQ(r.tail_corrupted, cut != start && !complete)
        << "cut at " << cut << " (record " << start << ".." << contents.size()
        << "): " << r.what_happened;
    // Every cut is the file ending inside a record, never damage.
    ASSERT_EQ(r.tail_truncated, r.tail_corrupted) << "cut at " << cut << ": " << r.what_happened;
    if (r.tail_corrupted) {
      ASSERT_NE(r.what_happened.find("test.log"), std::string::npos) << r.what_happened;
    }
    ASSERT_TRUE(r.status.ok());
  }
}

TEST(LogTest, TruncatedFullRecord) {
  std::mt19937_64 rng(1);
  CheckTruncations({RandomRecord(&rng, 1000), RandomRecord(&rng, 5000), RandomRecord(&rng, 300)});
}

TEST(LogTest, TruncatedRecordSpanningBlocks) {
  std::mt19937_64 rng(2);
  // The last record starts near the end of block 0: FIRST + LAST.
  CheckTruncations({RandomRecord(&rng, 30000), RandomRecord(&rng, 5000)});
}

TEST(LogTest, TruncatedRecordWithMiddleFragments) {
  std::mt19937_64 rng(3);
  // FIRST + MIDDLE + LAST.
  CheckTruncations({RandomRecord(&rng, 100), RandomRecord(&rng, 90000)});
}

TEST(LogTest, FlippedPayloadByte) {
  const uint64_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::string> records;
  std::vector<size_t> starts;  // offset of each record's first header
  std::string contents;
  {
    StringSink sink(&contents);
    Writer writer(&sink);
    for (size_t n : {10, 2000, 40000, 0, 500, 70000, 20}) {
      records.push_back(RandomRecord(&rng, n));
      starts.push_back(contents.size());
      ASSERT_TRUE(writer.AddRecord(records.back()).ok());
    }
  }
  starts.push_back(contents.size());
  for (size_t i = 0; i < records.size(); i++) {
    if (records[i].empty()) continue;
    // Damage the first payload byte, and the record's last byte (in its last
    // fragment for multi-fragment records).
    for (size_t pos : {starts[i] + kHeaderSize, starts[i + 1] - 1}) {
      SCOPED_TRACE("record " + std::to_string(i) + " byte " + std::to_string(pos));
      std::string damaged = contents;
      damaged[pos] ^= 0x40;
      ReadResult r = ReadAll(damaged);
      ASSERT_EQ(r.records.size(), i);
      for (size_t j = 0; j < i; j++) EXPECT_EQ(r.records[j], records[j]);
      EXPECT_TRUE(r.tail_corrupted);
      EXPECT_FALSE(r.tail_truncated) << r.what_happened;
      EXPECT_NE(r.what_happened.find("checksum"), std::string::npos) << r.what_happened;
      EXPECT_NE(r.what_happened.find("test.log"), std::string::npos) << r.what_happened;
    }
  }
}

TEST(LogTest, DamagedHeader) {
  std::string contents = Write({"first", "second"});
  const size_t second = kHeaderSize + 5;
  {
    std::string d = contents;
    d[second + 6] = static_cast<char>(kLastType);  // type byte: covered by the crc
    ReadResult r = ReadAll(d);
    EXPECT_EQ(r.records, (std::vector<std::string>{"first"}));
    EXPECT_TRUE(r.tail_corrupted);
    EXPECT_FALSE(r.tail_truncated) << r.what_happened;
  }
  {
    std::string d = contents;
    d[second + 5] = static_cast<char>(0xff);  // length far beyond the block
    ReadResult r = ReadAll(d);
    EXPECT_EQ(r.records, (std::vector<std::string>{"first"}));
    EXPECT_TRUE(r.tail_corrupted);
    EXPECT_FALSE(r.tail_truncated) << r.what_happened;
    EXPECT_NE(r.what_happened.find("offset " + std::to_string(second)), std::string::npos)
        << r.what_happened;
  }
  {
    std::string d = contents;
    d[second + 4] = 3;  // a shorter length: checksum over the wrong bytes
    ReadResult r = ReadAll(d);
    EXPECT_EQ(r.records, (std::vector<std::string>{"first"}));
    EXPECT_TRUE(r.tail_corrupted);
    EXPECT_FALSE(r.tail_truncated) << r.what_happened;
  }
  {
    // A zero-filled region where a header should be (e.g. a file extended
    // but not written before a crash).
    std::string d = contents + std::string(100, '\0');
    ReadResult r = ReadAll(d);
    EXPECT_EQ(r.records, (std::vector<std::string>{"first", "second"}));
    EXPECT_TRUE(r.tail_corrupted);
    EXPECT_FALSE(r.tail_truncated) << r.what_happened;
  }
}

TEST(LogTest, BrokenFragmentSequence) {
  struct Case {
    std::string contents;
    std::vector<std::string> want;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {Fragment(kFullType, "a") + Fragment(kMiddleType, "b"), {"a"}, "MIDDLE"},
      {Fragment(kFullType, "a") + Fragment(kLastType, "b"), {"a"}, "LAST"},
      {Fragment(kFirstType, "a") + Fragment(kFullType, "b"), {}, "FULL"},
      {Fragment(kFirstType, "a") + Fragment(kFirstType, "b") + Fragment(kLastType, "c"),
       {},
       "FIRST"},
      {Fragment(kFullType, "a") + Fragment(kFirstType, "b") + Fragment(kMiddleType, "c"),
       {"a"},
       "ends inside"},
      {Fragment(kFullType, "a") + Fragment(0, "b"), {"a"}, "unknown fragment type"},
      {Fragment(kFullType, "a") + Fragment(9, "b"), {"a"}, "unknown fragment type"},
  };
  for (size_t i = 0; i < cases.size(); i++) {
    SCOPED_TRACE("case " + std::to_string(i));
    ReadResult r = ReadAll(cases[i].contents);
    EXPECT_EQ(r.records, cases[i].want);
    EXPECT_TRUE(r.tail_corrupted);
    // Only a record the file ends inside is a truncation; the rest is damage.
    EXPECT_EQ(r.tail_truncated, std::string(cases[i].reason) == "ends inside") << r.what_happened;
    EXPECT_NE(r.what_happened.find(cases[i].reason), std::string::npos) << r.what_happened;
  }
  // The forged fragments are well formed: a correct sequence reads back.
  ReadResult ok = ReadAll(Fragment(kFirstType, "a") + Fragment(kMiddleType, "b") +
                          Fragment(kLastType, "c") + Fragment(kFullType, "d"));
  EXPECT_EQ(ok.records, (std::vector<std::string>{"abc", "d"}));
  EXPECT_FALSE(ok.tail_corrupted) << ok.what_happened;
}

TEST(LogTest, ReadErrorIsAStatusNotCorruption) {
  std::string contents = Write({std::string(40000, 'x'), "y"});
  StringSource src(contents, kBlockSize);  // the second block read fails
  Reader reader(&src, "test.log");
  std::string scratch;
  std::string_view record;
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
  EXPECT_FALSE(reader.tail_corrupted());
  EXPECT_TRUE(reader.status().IsIOError()) << reader.status().ToString();
}

}  // namespace
}  // namespace lsm::log
