// How a command takes a result directory before writing it: the one protocol of `kvstream run`,
// `merge` and `fidelity` (experiments/SCHEMA.md §8).
//   1. Constructed before any input loads: `check` throws, saying why, when the directory cannot
//      take this command's results (it holds others', or results the command must not replace), so
//      a refused command does no work and writes nothing.
//   2. `lock()` once the inputs have loaded, just before the first write: one writer at a time
//      (common/directory_lock.h; a second one refuses, naming the holder), and `check` again under
//      the lock, as another writer may have changed the directory meanwhile.
//   3. `keep()` once the command's first result file is written. A command that fails before that
//      leaves no directory behind: one the claim made is removed again, with its lock file.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/directory_lock.h"

namespace kvstream::experiments {

class ResultDirClaim {
 public:
  // `command` names the writer in the lock file ("kvstream run"); `check` is step 1's and 2's test.
  ResultDirClaim(std::filesystem::path dir, std::string command, std::function<void()> check);
  ~ResultDirClaim();
  ResultDirClaim(const ResultDirClaim&) = delete;
  ResultDirClaim& operator=(const ResultDirClaim&) = delete;

  void lock();
  void keep() { keep_ = true; }
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string command_;
  std::function<void()> check_;
  std::unique_ptr<common::DirectoryLock> lock_;
  bool made_dir_ = false, keep_ = false;
};

}  // namespace kvstream::experiments
