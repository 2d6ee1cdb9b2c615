// run_process (common/process.h): arguments reach the program as they are, with no shell between.
#include <gtest/gtest.h>

#include <chrono>
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

TEST_F(Process, ALineProcessAnswersLineByLine) {
  LineProcess echo({"sh", "-c", "while read -r line; do echo \"got $line\"; done"});
  EXPECT_EQ(echo.name(), "sh -c while read -r line; do echo \"got $line\"; done");
  echo.send("one");
  echo.send("two words");
  EXPECT_EQ(echo.receive(5), "got one");
  EXPECT_EQ(echo.receive(5), "got two words");
}

TEST_F(Process, ALineProcessThatEndsOrSaysNothingIsAnError) {
  const auto error_of = [](LineProcess& p, double timeout_s) -> std::string {
    try {
      p.receive(timeout_s);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(no error)";
  };
  LineProcess exits({"sh", "-c", "read -r line; exit 4"});
  exits.send("x");
  EXPECT_EQ(error_of(exits, 5), "sh -c read -r line; exit 4: exited with status 4 without answering");
  EXPECT_THROW(exits.send("y"), std::runtime_error);  // it has gone: an error, not SIGPIPE
  LineProcess killed({"sh", "-c", "printf half; kill -9 $$"});
  EXPECT_NE(error_of(killed, 5).find("was killed by signal 9 (Killed) in the middle of a line"), std::string::npos)
      << error_of(killed, 5);
  LineProcess silent({"sleep", "30"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(silent, 0.2), "sleep 30: no answer within 0.2 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THROW(LineProcess({"kvstream-no-such-program"}), std::runtime_error);
}  // `silent` still runs: its destructor ends it (closes its input, then kills it after 1 s)

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
