// Names of the files in a database directory:
//   NNNNNN.sst        disk component          NNNNNN.wal  write-ahead log
//   MANIFEST-NNNNNN   component set history   CURRENT     names the live manifest
//   LOCK              held while open         *.tmp       half-written, removed at open
#ifndef LSM_SRC_DB_FILENAMES_H_
#define LSM_SRC_DB_FILENAMES_H_

#include <cstdint>
#include <string>

namespace lsm {

enum class FileType { kTable, kWal, kManifest, kCurrent, kLock, kTemp, kUnknown };

std::string TableFileName(const std::string& dir, uint64_t number);
std::string WalFileName(const std::string& dir, uint64_t number);
std::string ManifestFileName(const std::string& dir, uint64_t number);
std::string CurrentFileName(const std::string& dir);
std::string LockFileName(const std::string& dir);
std::string TempFileName(const std::string& dir, uint64_t number);

// Classifies a directory entry name; *number is set for numbered files.
FileType ParseFileName(const std::string& name, uint64_t* number);

}  // namespace lsm

#endif  // LSM_SRC_DB_FILENAMES_H_
