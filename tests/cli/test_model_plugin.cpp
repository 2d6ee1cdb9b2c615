// The model plugin (cli/model_backend.h): commands that need no model never load LibTorch, the
// model commands load kvstream-models.so from beside the binary, and a binary without a usable
// plugin says why. Whether a library is loaded is read from the dynamic loader's own log
// (LD_DEBUG=libs), which covers dlopen too.
#include <filesystem>
#include <fstream>

#include "tests/cli/cli_test.h"

namespace kvstream {
namespace {

class ModelPlugin : public test_support::CliTest {
 protected:
  // The loader's log and the command's stderr: who loaded what.
  std::string loader_log(const std::string& args) {
    const auto r = test_support::run_kvstream(dir_, args, "LD_DEBUG=libs");
    EXPECT_EQ(r.rc, 0) << args << ": " << r.err.substr(0, 2000);
    return r.err;
  }

  // Runs a copy of the binary from `dir` (beside which the test puts a plugin, or none).
  test_support::CliResult run_copy(const std::filesystem::path& dir, const std::string& args) {
    std::filesystem::copy_file(KVSTREAM_CLI, dir / "kvstream", std::filesystem::copy_options::overwrite_existing);
    const std::string command = "cd '" + dir_.string() + "' && '" + (dir / "kvstream").string() + "' " + args +
                                " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test_support::read_text(dir_ / "stdout.txt"),
            test_support::read_text(dir_ / "stderr.txt")};
  }
};

TEST_F(ModelPlugin, CommandsWithoutAModelNeverLoadLibTorch) {
  for (const std::string args : {"--help", "decode --help", "encode --help", "simulate --help", "trace --help",
                                 "merge --help", "run --help",
                                 "simulate --profile synthetic --trace constant:gbps=1 --policy quant8 --slo 1"}) {
    const std::string log = loader_log(args);
    EXPECT_EQ(log.find("libtorch"), std::string::npos) << args;
    EXPECT_EQ(log.find("kvstream-models.so"), std::string::npos) << args;
  }
}

TEST_F(ModelPlugin, ModelCommandsLoadThePluginBesideTheBinary) {
  if (!KVSTREAM_WITH_TORCH) GTEST_SKIP() << "built without LibTorch: there is no plugin";
  for (const std::string args : {"quality --help", "kv-export --help", "profile-prefill --help", "calibrate --help"}) {
    const std::string log = loader_log(args);
    EXPECT_NE(log.find("kvstream-models.so"), std::string::npos) << args;
    EXPECT_NE(log.find("libtorch"), std::string::npos) << args;
  }
}

TEST_F(ModelPlugin, WithoutAUsablePluginTheModelCommandsSayWhy) {
  const std::filesystem::path bin = dir_ / "bin";
  std::filesystem::create_directories(bin);
  test_support::expect_failure(run_copy(bin, "quality --help"), 1, "built without LibTorch");
  EXPECT_EQ(run_copy(bin, "simulate --help").rc, 0);
  std::ofstream(bin / "kvstream-models.so") << "not a shared object";
  test_support::expect_failure(run_copy(bin, "kv-export --help"), 1, "cannot load the model plugin");
}

}  // namespace
}  // namespace kvstream
