#include "db/manifest.h"

#include <gtest/gtest.h>

#include "db/filenames.h"
#include "db/test_util.h"
#include "env/fault_env.h"

namespace lsm {
namespace {

using test::MakeMeta;

TEST(ManifestTest, EditRoundTripsWithMergeCursors) {
  ManifestEdit edit;
  edit.next_file_number = 9;
  edit.log_number = 7;
  edit.added = {MakeMeta(3, 1, "a", "f"), MakeMeta(4, 2, "g", "z")};
  edit.stack = {4, 3};
  edit.merge_cursors = {"", "f", std::string("\0x", 2)};
  ManifestEdit back;
  ASSERT_TRUE(back.Decode(edit.Encode(), "m").ok());
  EXPECT_EQ(9u, back.next_file_number);
  EXPECT_EQ(7u, back.log_number);
  ASSERT_EQ(2u, back.added.size());
  EXPECT_EQ("g", back.added[1].smallest);
  EXPECT_EQ(2, back.added[1].level);
  EXPECT_EQ((std::vector<uint64_t>{4, 3}), back.stack);
  EXPECT_EQ(edit.merge_cursors, back.merge_cursors);

  // A truncated cursor list is corruption, named.
  std::string bytes = edit.Encode();
  bytes.pop_back();
  Status s = back.Decode(bytes, "MANIFEST-000002");
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST-000002")) << s.ToString();
}

TEST(ManifestTest, FlushedEntriesRoundTripAndAreOptional) {
  ManifestEdit edit;
  edit.added = {MakeMeta(3, 1, "a", "f"), MakeMeta(4, 2, "g", "z")};
  edit.added[1].flushed_entries = 12345;
  edit.stack = {4, 3};
  ManifestEdit back;
  ASSERT_TRUE(back.Decode(edit.Encode(), "m").ok());
  ASSERT_EQ(2u, back.added.size());
  EXPECT_EQ(0u, back.added[0].flushed_entries);  // not recorded: none written
  EXPECT_EQ(12345u, back.added[1].flushed_entries);

  // An edit from before components recorded it has no such tag and opens.
  edit.added[1].flushed_entries = 0;
  const std::string old_format = edit.Encode();
  ASSERT_TRUE(back.Decode(old_format, "m").ok());
  EXPECT_EQ(0u, back.added[1].flushed_entries);

  // The tag naming a component the edit does not add is corruption: the
  // first byte 99 of the encoding is the added component's number (tags 1
  // and 2 with their values 0, then tag 3), changed here to 98 while the
  // flushed-entries tag still names 99.
  ManifestEdit stray;
  stray.added = {MakeMeta(99, 1, "a", "f")};
  stray.added[0].flushed_entries = 7;
  stray.stack = {99};
  std::string bytes = stray.Encode();
  ASSERT_EQ(99, bytes[5]);
  bytes[5] = 98;
  Status s = back.Decode(bytes, "MANIFEST-000003");
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("flushed entries")) << s.ToString();
}

TEST(ManifestTest, ReplayKeepsTheLastCursors) {
  test::TempDir dir;
  Env* env = Env::Default();
  ManifestEdit first;
  first.next_file_number = 5;
  first.added = {MakeMeta(3, 1, "a", "f")};
  first.stack = {3};
  std::unique_ptr<ManifestWriter> writer;
  ASSERT_TRUE(ManifestWriter::Create(env, dir.path(), 2, first, &writer).ok());

  ManifestEdit moved = first;
  moved.added.clear();
  moved.merge_cursors = {"", "c"};
  ASSERT_TRUE(writer->Append(moved).ok());
  ManifestEdit again = moved;
  again.merge_cursors = {"", "f"};
  ASSERT_TRUE(writer->Append(again).ok());
  // An edit without cursors (as older manifests have) leaves them alone.
  ManifestEdit none = moved;
  none.merge_cursors.clear();
  ASSERT_TRUE(writer->Append(none).ok());
  writer.reset();

  ManifestState state;
  ASSERT_TRUE(RecoverManifest(env, dir.path(), &state).ok());
  EXPECT_EQ((std::vector<std::string>{"", "f"}), state.merge_cursors);
  ASSERT_EQ(1u, state.stack.size());
  EXPECT_EQ(3u, state.stack[0].number);
}

// A failed append may leave part of its edit in the file (a short write):
// the writer appends nothing after it, and recovery takes the cut edit for
// one that never happened.
TEST(ManifestTest, AnEditCutShortByAFailedWriteNeverHappened) {
  for (bool short_write : {false, true}) {
    for (uint64_t nth = 1;; nth++) {
      SCOPED_TRACE("write " + std::to_string(nth) + (short_write ? ", short" : ""));
      std::unique_ptr<Env> mem = NewMemEnv();
      FaultEnv env(mem.get(), test::DbFileKind);
      ManifestEdit first;
      first.next_file_number = 5;
      first.added = {MakeMeta(3, 0, "a", "f")};
      first.stack = {3};
      std::unique_ptr<ManifestWriter> writer;
      ASSERT_TRUE(ManifestWriter::Create(&env, "/db", 2, first, &writer).ok());
      Fault fault{FaultOp::kWrite, FaultFile::kManifest, nth, ENOSPC};
      fault.short_write = short_write;
      env.Inject(fault);
      ManifestEdit second = first;
      second.next_file_number = 6;
      second.added = {MakeMeta(4, 0, "g", std::string(3000, 'z'))};
      second.stack = {3, 4};
      const Status s = writer->Append(second);
      if (!env.fired()) {
        ASSERT_TRUE(s.ok()) << "every write of the edit has failed once";
        break;
      }
      ASSERT_TRUE(s.IsIOError()) << s.ToString();
      env.Clear();
      uint64_t size = 0;
      ASSERT_TRUE(env.GetFileSize(ManifestFileName("/db", 2), &size).ok());
      EXPECT_EQ(writer->Append(second).ToString(), s.ToString()) << "the writer stays failed";
      uint64_t size_after = 0;
      ASSERT_TRUE(env.GetFileSize(ManifestFileName("/db", 2), &size_after).ok());
      EXPECT_EQ(size_after, size) << "nothing is appended behind a failed edit";

      ManifestState state;
      Status r = RecoverManifest(&env, "/db", &state);
      ASSERT_TRUE(r.ok()) << r.ToString();
      EXPECT_EQ(state.next_file_number, 5u);
      ASSERT_EQ(state.stack.size(), 1u);
      EXPECT_EQ(state.stack[0].number, 3u);
    }
  }
}

}  // namespace
}  // namespace lsm
