// Base class of the end-to-end tests of the `kvstream` binary (KVSTREAM_CLI): runs it in a fresh
// temporary directory and captures its exit status, stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_support.h"

namespace kvstream::test_support {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CliResult {
  int rc;
  std::string out, err;
};

// Runs `ENV kvstream ARGS` in `dir`; stdout and stderr are captured to files there, then removed.
inline CliResult run_kvstream(const std::filesystem::path& dir, const std::string& args, const std::string& env = "") {
  const std::string command =
      "cd '" + dir.string() + "' && " + env + " '" KVSTREAM_CLI "' " + args + " > stdout.txt 2> stderr.txt";
  const int status = std::system(command.c_str());
  CliResult result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir / "stdout.txt"), read_text(dir / "stderr.txt")};
  std::filesystem::remove(dir / "stdout.txt");
  std::filesystem::remove(dir / "stderr.txt");
  return result;
}

// A run that failed with exit status `rc` (1: bad input, 2: bad usage) and said `message`.
inline void expect_failure(const CliResult& result, int rc, const std::string& message) {
  EXPECT_EQ(result.rc, rc) << result.err;
  EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
}

class CliTest : public TempDirTest {
 protected:
  using Result = CliResult;

  Result run(const std::string& args) { return run_kvstream(dir_, args); }

  // Runs and expects exit 0.
  Result ok(const std::string& args) {
    Result r = run(args);
    EXPECT_EQ(r.rc, 0) << "kvstream " << args << "\nstdout: " << r.out << "\nstderr: " << r.err;
    return r;
  }

  // Runs, expects exit 0, parses stdout as JSON.
  nlohmann::json json_of(const std::string& args) {
    const Result r = ok(args);
    return r.rc == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }
};

}  // namespace kvstream::test_support
