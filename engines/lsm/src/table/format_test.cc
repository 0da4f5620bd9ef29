#include "table/format.h"

#include <gtest/gtest.h>

#include "table/meta.h"
#include "table/test_util.h"
#include "util/coding.h"

namespace lsm {
namespace {

Footer SampleFooter() {
  Footer f;
  f.index = {1000, 200};
  f.filter = {500, 300};
  f.meta = {804, 100};
  return f;
}

TEST(FormatTest, FooterRoundTrip) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  ASSERT_EQ(enc.size(), kFooterSize);
  EXPECT_EQ(enc.substr(56), std::string("lsmbTBL\x1a", 8));
  Footer f;
  ASSERT_EQ(f.DecodeFrom(enc), nullptr);
  EXPECT_EQ(f.index.offset, 1000u);
  EXPECT_EQ(f.index.size, 200u);
  EXPECT_EQ(f.filter.offset, 500u);
  EXPECT_EQ(f.filter.size, 300u);
  EXPECT_EQ(f.meta.offset, 804u);
  EXPECT_EQ(f.meta.size, 100u);
  EXPECT_EQ(f.version, kTableFormatVersion);
}

TEST(FormatTest, FooterErrors) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  Footer f;
  EXPECT_STREQ(f.DecodeFrom(std::string_view(enc).substr(1)), "truncated footer");
  for (size_t i = 0; i < kFooterSize; i++) {
    std::string bad = enc;
    bad[i] ^= 0x01;
    const char* err = f.DecodeFrom(bad);
    ASSERT_NE(err, nullptr) << "flip at " << i << " undetected";
    if (i >= 56) {
      EXPECT_NE(std::string(err).find("magic"), std::string::npos) << err;
    } else {
      EXPECT_NE(std::string(err).find("footer checksum"), std::string::npos) << err;
    }
  }
  Footer v2 = SampleFooter();
  v2.version = 2;
  std::string enc2;
  v2.EncodeTo(&enc2);
  const char* err = f.DecodeFrom(enc2);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("version"), std::string::npos);
}

TEST(FormatTest, BlockHandleRoundTrip) {
  for (const BlockHandle& h : {BlockHandle{0, 0}, BlockHandle{1, 4096},
                               BlockHandle{uint64_t{1} << 40, (uint64_t{1} << 24) + 7}}) {
    std::string enc;
    h.EncodeTo(&enc);
    std::string_view in(enc);
    BlockHandle d;
    ASSERT_TRUE(d.DecodeFrom(&in));
    EXPECT_TRUE(in.empty());
    EXPECT_EQ(d.offset, h.offset);
    EXPECT_EQ(d.size, h.size);
    EXPECT_EQ(d.end(), h.offset + h.size + kBlockTrailerSize);
    std::string_view cut(enc.data(), enc.size() - 1);
    EXPECT_FALSE(d.DecodeFrom(&cut));
  }
}

TEST(FormatTest, ReadBlockChecksAndNamesTheFile) {
  std::string file = "hello block";
  PutFixed32(&file, 0);  // wrong trailer
  test::StringSource src(file);
  char scratch[64];
  std::string_view contents;
  const BlockHandle h{0, 11};
  Status s = ReadBlock(&src, h, true, "/db/000007.sst", scratch, &contents);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.ToString(), "Corruption: bad block checksum: /db/000007.sst at offset 0");
  // Unverified reads skip the check.
  ASSERT_TRUE(ReadBlock(&src, h, false, "f", scratch, &contents).ok());
  EXPECT_EQ(contents, "hello block");
  // A block running past the end of the file.
  s = ReadBlock(&src, BlockHandle{4, 11}, false, "/db/000007.sst", scratch, &contents);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.ToString().find("truncated"), std::string::npos);
  EXPECT_NE(s.ToString().find("/db/000007.sst"), std::string::npos);
}

TEST(FormatTest, PropertiesRoundTrip) {
  TableProperties p;
  p.num_entries = 12345;
  p.num_deletions = 17;
  p.num_data_blocks = 99;
  p.data_size = uint64_t{1} << 33;
  p.raw_key_bytes = 1;
  p.raw_value_bytes = 2;
  p.smallest_key = std::string("\0a", 2);
  p.largest_key = std::string("\xff\xff", 2);
  const std::string enc = EncodeTableProperties(p);
  TableProperties d;
  ASSERT_EQ(DecodeTableProperties(enc, &d), nullptr);
  EXPECT_EQ(d.num_entries, p.num_entries);
  EXPECT_EQ(d.num_deletions, p.num_deletions);
  EXPECT_EQ(d.num_data_blocks, p.num_data_blocks);
  EXPECT_EQ(d.data_size, p.data_size);
  EXPECT_EQ(d.raw_key_bytes, p.raw_key_bytes);
  EXPECT_EQ(d.raw_value_bytes, p.raw_value_bytes);
  EXPECT_EQ(d.smallest_key, p.smallest_key);
  EXPECT_EQ(d.largest_key, p.largest_key);
  EXPECT_NE(DecodeTableProperties("", &d), nullptr);
}

}  // namespace
}  // namespace lsm
