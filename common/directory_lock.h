// One writer per result directory: `kvstream run`, `merge` and `fidelity` hold an exclusive lock on
// DIR/.lock (flock(2), released by the kernel however the process ends, kill -9 included) for as long
// as they write DIR. A second writer does not wait: it refuses, naming the holder, because two
// writers interleave their runs (measured before the lock: duplicate runs, a summary counting them
// twice, and a manifest saying "complete").
#pragma once
#include <filesystem>
#include <string>

namespace kvstream::common {

class DirectoryLock {
 public:
  // Creates `dir` if needed and locks it. `holder` says who holds it (e.g. "kvstream run"), written
  // into the lock file with the process id, host and time for the next one's message. Once locked,
  // the temporary files an earlier writer killed mid-write left in `dir` are removed (no one else
  // can be writing them: common/atomic_file.h). Throws
  // std::runtime_error naming the directory and the holder when another process holds it, and
  // naming the call when the directory or the lock file cannot be made.
  DirectoryLock(const std::filesystem::path& dir, const std::string& holder);
  ~DirectoryLock();  // releases (the lock file stays: removing it would race with the next locker)
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kvstream::common
