// run_process (common/process.h): arguments reach the program as they are, with no shell between.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/process.h"
#include "tests/test_support.h"

namespace kvstream::common {
namespace {

class Process : public test_support::TempDirTest {};

TEST_F(Process, ArgumentsArePassedLiterallyWithoutAShell) {
  const std::filesystem::path marker = dir_ / "PWNED";
  const std::string hostile = "1;touch " + marker.string() + ";echo $(touch " + marker.string() + ") `id` 'q\" *";
  const ProcessResult result = run_process({"printf", "%s|", hostile, "two words"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, hostile + "|two words|");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Process, ExitCodesAndStderr) {
  EXPECT_EQ(run_process({"sh", "-c", "exit 3"}).exit_code, 3);
  EXPECT_EQ(run_process({"sh", "-c", "echo out; echo err >&2"}).output, "out\nerr\n");
  EXPECT_EQ(run_process({"sh", "-c", "echo out; echo err >&2"}, Stderr::kDropped).output, "out\n");
  EXPECT_EQ(run_process({"sh", "-c", "kill -9 $$"}).exit_code, -1);
  EXPECT_EQ(run_process({"cat"}).output, "");  // stdin is /dev/null: no wait for input
}

TEST_F(Process, AProgramThatCannotRunIsAnError) {
  try {
    run_process({"kvstream-no-such-program"});
    ADD_FAILURE() << "ran a missing program";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run kvstream-no-such-program"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_process({}), std::invalid_argument);
  EXPECT_THROW(run_process({"echo", std::string("a\0b", 3)}), std::invalid_argument);
}

}  // namespace
}  // namespace kvstream::common
