// DirectoryLock (common/directory_lock.h): a second writer of a directory is refused, naming the
// first; the lock goes with its holder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "common/directory_lock.h"

namespace kvstream::common {
namespace {

namespace fs = std::filesystem;

TEST(DirectoryLock, ASecondWriterIsRefusedNamingTheFirst) {
  const fs::path dir = fs::temp_directory_path() / ("kvstream_lock_" + std::to_string(::getpid())) / "results";
  std::optional<DirectoryLock> first;
  first.emplace(dir, "kvstream run");
  EXPECT_TRUE(fs::is_directory(dir));
  try {
    DirectoryLock second(dir, "kvstream merge");  // flock conflicts between two opens, even in one process
    ADD_FAILURE() << "locked twice";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir.string() + " is being written by kvstream run (pid " + std::to_string(::getpid())),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("wait for it to end, or choose another directory"), std::string::npos) << what;
  }
  first.reset();  // released: the next writer gets it
  EXPECT_NO_THROW(DirectoryLock(dir, "kvstream merge"));
  fs::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace kvstream::common
