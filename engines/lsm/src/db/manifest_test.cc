#include "db/manifest.h"

#include <gtest/gtest.h>

#include "db/test_util.h"

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

}  // namespace
}  // namespace lsm
