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

class CliTest : public TempDirTest {
 protected:
  struct Result {
    int rc;
    std::string out, err;
  };

  // Runs `kvstream ARGS` in the temporary directory; stdout and stderr are captured to files there.
  Result run(const std::string& args) {
    const std::string command = "cd '" + dir_.string() + "' && '" KVSTREAM_CLI "' " + args + " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    Result result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir_ / "stdout.txt"),
                  read_text(dir_ / "stderr.txt")};
    std::filesystem::remove(dir_ / "stdout.txt");
    std::filesystem::remove(dir_ / "stderr.txt");
    return result;
  }

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
