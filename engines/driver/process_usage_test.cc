#include "driver/process_usage.h"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace lsmbench {
namespace driver {
namespace {

constexpr long kTmpfsMagic = 0x01021994;

TEST(ProcessUsageTest, ParsesProcIo) {
  uint64_t r = 1, w = 1;
  EXPECT_TRUE(ParseProcIo(
      "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\n"
      "write_bytes: 8192\ncancelled_write_bytes: 0\n",
      &r, &w));
  EXPECT_EQ(r, 4096u);
  EXPECT_EQ(w, 8192u);
  // rchar/wchar (every read and write call, cache hits included) are not the disk's.
  EXPECT_TRUE(ParseProcIo("read_bytes: 0\nrchar: 99\nwrite_bytes: 18446744073709551615\n",
                          &r, &w));
  EXPECT_EQ(r, 0u);
  EXPECT_EQ(w, 18446744073709551615u);
  EXPECT_FALSE(ParseProcIo("rchar: 1\nwchar: 2\n", &r, &w));
  EXPECT_FALSE(ParseProcIo("read_bytes: 1\n", &r, &w));
  EXPECT_FALSE(ParseProcIo("read_bytes: x\nwrite_bytes: 2\n", &r, &w));
  EXPECT_FALSE(ParseProcIo("", &r, &w));
}

TEST(ProcessUsageTest, ParsesIoStatSummedOverDevices) {
  uint64_t r = 1, w = 1;
  EXPECT_TRUE(ParseIoStat(
      "254:0 rbytes=4096 wbytes=50331648 rios=1 wios=12 dbytes=0 dios=0\n"
      "8:16 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n",
      &r, &w));
  EXPECT_EQ(r, 4196u);
  EXPECT_EQ(w, 50331848u);
  EXPECT_TRUE(ParseIoStat("", &r, &w) == false) << "a cgroup that did no I/O yet lists none";
  EXPECT_FALSE(ParseIoStat("254:0 rios=1 wios=2\n", &r, &w));
  EXPECT_FALSE(ParseIoStat("254:0 rbytes=x wbytes=2\n", &r, &w));
}

TEST(ProcessUsageTest, FindsItsOwnCgroupV2DirectoryUnderTheMount) {
  const std::string mountinfo =
      "24 30 0:22 / /sys ro,nosuid shared:7 - sysfs sysfs rw\n"
      "28 24 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_EQ(CgroupV2Dir("0::/lsmbench/run-1\n", mountinfo), "/sys/fs/cgroup/lsmbench/run-1");
  // Hybrid hierarchies list v1 controllers too; only the "0::" line is v2's.
  EXPECT_EQ(CgroupV2Dir("12:blkio:/x\n0::/a/b\n", mountinfo), "/sys/fs/cgroup/a/b");
  EXPECT_EQ(CgroupV2Dir("0::/\n", mountinfo), "") << "the root's counters are everyone's";
  EXPECT_EQ(CgroupV2Dir("12:blkio:/x\n", mountinfo), "") << "v1 only";
  EXPECT_EQ(CgroupV2Dir("0::/a\n", "24 30 0:22 / /sys ro - sysfs sysfs rw\n"), "");
}

TEST(ProcessUsageTest, ParsesBlkioServiceBytesSummedOverDevices) {
  uint64_t r = 1, w = 1;
  EXPECT_TRUE(ParseBlkioServiceBytes(
      "254:0 Read 4096\n254:0 Write 1048576\n254:0 Sync 0\n254:0 Async 1052672\n"
      "254:0 Discard 0\n254:0 Total 1052672\n8:0 Read 1\n8:0 Write 2\nTotal 1052675\n",
      &r, &w));
  EXPECT_EQ(r, 4097u);
  EXPECT_EQ(w, 1048578u);
  EXPECT_FALSE(ParseBlkioServiceBytes("Total 0\n", &r, &w)) << "a cgroup with no I/O yet";
  EXPECT_FALSE(ParseBlkioServiceBytes("254:0 Read x\n254:0 Write 1\n", &r, &w));
}

TEST(ProcessUsageTest, FindsItsOwnCgroupV1BlkioDirectory) {
  const std::string mountinfo =
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n";
  EXPECT_EQ(CgroupV1BlkioDir("7:blkio:/lsmbench/run-1\n1:cpu:/lsmbench/run-1\n0::/\n",
                             mountinfo),
            "/sys/fs/cgroup/blkio/lsmbench/run-1");
  EXPECT_EQ(CgroupV1BlkioDir("7:blkio:/\n", mountinfo), "") << "the root's are everyone's";
  EXPECT_EQ(CgroupV1BlkioDir("0::/a\n", mountinfo), "") << "v2 only";
  // blkio mounted with other controllers
  EXPECT_EQ(CgroupV1BlkioDir("4:cpu,blkio:/x\n",
                             "9 1 0:9 / /cg/cb rw - cgroup cgroup rw,cpu,blkio\n"),
            "/cg/cb/x");
}

TEST(ProcessUsageTest, CpuTimeGrowsWithWork) {
  const ProcessUsage before = ReadProcessUsage();
  // getrusage counts in scheduler ticks on some kernels: work until it moves
  // (bounded: far more than any tick).
  volatile uint64_t sink = 0;
  ProcessUsage after = before;
  for (int round = 0; round < 2000; ++round) {
    for (uint64_t i = 0; i < 1000000; ++i) sink = sink + i * i;
    after = ReadProcessUsage();
    if (after.cpu_user_s + after.cpu_system_s > before.cpu_user_s + before.cpu_system_s) break;
  }
  EXPECT_GT(after.cpu_user_s + after.cpu_system_s, before.cpu_user_s + before.cpu_system_s);
  EXPECT_GE(after.cpu_user_s, before.cpu_user_s);
  EXPECT_GE(after.cpu_system_s, before.cpu_system_s);
}

TEST(ProcessUsageTest, DiskBytesCountWritesAndUncachedReads) {
  const std::string dir = ::testing::TempDir();
  struct statfs fs;
  ASSERT_EQ(statfs(dir.c_str(), &fs), 0) << dir;
  if (static_cast<long>(fs.f_type) == kTmpfsMagic) GTEST_SKIP() << dir << " is tmpfs: no disk";
  if (!ReadProcessUsage().disk_known) GTEST_SKIP() << "no I/O accounting in this kernel";

  const std::string path = dir + "/process_usage_test.bin";
  constexpr size_t kBytes = 8 << 20;
  const std::vector<char> block(1 << 20, 'x');
  const ProcessUsage start = ReadProcessUsage();
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << path;
  for (size_t done = 0; done < kBytes; done += block.size()) {
    ASSERT_EQ(write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
  }
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(close(fd), 0);
  const ProcessUsage written = ReadProcessUsage();
  EXPECT_GE(written.disk_write_bytes - start.disk_write_bytes, kBytes);

  // Out of the page cache, then read back: the reads reach the disk.
  fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  std::vector<char> buf(block.size());
  size_t got = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) got += static_cast<size_t>(n);
  close(fd);
  std::remove(path.c_str());
  EXPECT_EQ(got, kBytes);
  const ProcessUsage read_back = ReadProcessUsage();
  EXPECT_GE(read_back.disk_read_bytes - written.disk_read_bytes, kBytes / 2)
      << "the kernel kept the pages despite POSIX_FADV_DONTNEED";
}

TEST(ProcessUsageTest, UsableCpusIsAtLeastOne) {
  EXPECT_GE(UsableCpus(), 1);
  EXPECT_LE(UsableCpus(), static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
}

}  // namespace
}  // namespace driver
}  // namespace lsmbench
