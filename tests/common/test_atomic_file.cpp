// write_file_atomically (common/atomic_file.h): concurrent writers of one path, as profiling tasks of
// a Slurm sweep may be, each rename a whole file of their own; a reader never sees a mixture, and no
// temporary file is left.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.h"
#include "tests/test_support.h"

namespace kvstream::common {
namespace {

class AtomicFile : public test_support::TempDirTest {};

TEST_F(AtomicFile, ConcurrentWritersOfOnePathLeaveOneWholeFile) {
  const auto path = dir_ / "profile.json";
  constexpr int kWriters = 8, kRounds = 50;
  constexpr size_t kBytes = 200'000;  // large enough that writes interleave
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&path, w] {
      for (int round = 0; round < kRounds; ++round)
        write_file_atomically(path, [w](std::ostream& out) { out << std::string(kBytes, char('a' + w)); });
    });
  for (auto& writer : writers) writer.join();
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::string content = text.str();
  ASSERT_EQ(content.size(), kBytes);
  EXPECT_EQ(content.find_first_not_of(content.front()), std::string::npos) << "a mixture of writers";
  EXPECT_FALSE(test_support::temporary_left(path));
}

}  // namespace
}  // namespace kvstream::common
