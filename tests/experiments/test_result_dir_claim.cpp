// The protocol every writer of a result directory follows (experiments/result_dir_claim.h): refuse
// before any work, lock and check again before the first write, and leave no directory it made
// behind when it fails before its first result.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "experiments/result_dir_claim.h"
#include "tests/test_support.h"

namespace kvstream::experiments {
namespace {

namespace fs = std::filesystem;

class ResultDirClaimTest : public test_support::TempDirTest {};

TEST_F(ResultDirClaimTest, ARefusedClaimDoesNoWorkAndWritesNothing) {
  const fs::path out = dir_ / "out";
  EXPECT_THROW(ResultDirClaim(out, "test", [] { throw std::runtime_error("holds results"); }), std::runtime_error);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ResultDirClaimTest, TheCheckRunsAgainUnderTheLock) {
  const fs::path out = dir_ / "out";
  bool taken = false;  // another writer takes the directory while this one loads its inputs
  ResultDirClaim claim(out, "test", [&] {
    if (taken) throw std::runtime_error("taken meanwhile");
  });
  taken = true;
  EXPECT_THROW(claim.lock(), std::runtime_error);
}

TEST_F(ResultDirClaimTest, AFailureBeforeTheFirstResultRemovesTheDirectoryItMade) {
  const fs::path out = dir_ / "out";
  try {
    ResultDirClaim claim(out, "test", [] {});
    claim.lock();
    EXPECT_TRUE(fs::exists(out / ".lock"));
    throw std::runtime_error("the emulation failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ResultDirClaimTest, ResultsAndDirectoriesItDidNotMakeAreKept) {
  const fs::path kept = dir_ / "kept", earlier = dir_ / "earlier";
  fs::create_directories(earlier);
  for (const fs::path& out : {kept, earlier}) {
    try {
      ResultDirClaim claim(out, "test", [] {});
      claim.lock();
      if (out == kept) {
        std::ofstream(out / "runs.jsonl") << "{}\n";
        claim.keep();
      }
      throw std::runtime_error("a later step failed");
    } catch (const std::runtime_error&) {
    }
    EXPECT_TRUE(fs::exists(out)) << out;
  }
  EXPECT_TRUE(fs::exists(kept / "runs.jsonl"));
}

TEST_F(ResultDirClaimTest, ASecondWriterIsRefusedNamingTheFirst) {
  const fs::path out = dir_ / "out";
  ResultDirClaim first(out, "kvstream run", [] {});
  first.lock();
  ResultDirClaim second(out, "kvstream merge", [] {});
  try {
    second.lock();
    ADD_FAILURE() << "a second writer took the lock";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("kvstream run"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvstream::experiments
