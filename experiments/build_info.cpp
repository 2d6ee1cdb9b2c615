#include "experiments/build_info.h"

#include <unistd.h>

#include <boost/version.hpp>
#include <fstream>
#include <thread>
#include <zstd.h>

#include "common/process.h"
#include "common/utc_time.h"

namespace kvstream::experiments {

namespace {

// What a program prints to stdout, trimmed; empty when it cannot run or fails.
std::string command_output(const std::vector<std::string>& command) {
  common::ProcessResult result;
  try {
    result = common::run_process(command, common::Stderr::kDropped);
  } catch (const std::exception&) {
    return "";
  }
  if (result.exit_code != 0) return "";
  std::string out = result.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

std::string utc_date() { return common::utc_now().substr(0, 10); }

nlohmann::json build_and_host_info() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  std::string cpu;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; cpu.empty() && std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) cpu = line.substr(line.find(':') + 2);
  const std::string source = KVSTREAM_SOURCE_DIR;
  std::string revision = command_output({"git", "-C", source, "rev-parse", "HEAD"});
  if (!revision.empty() && !command_output({"git", "-C", source, "status", "--porcelain", "--untracked-files=no"}).empty())
    revision += "-dirty";
  return {{"git_revision", revision.empty() ? "unknown (not a git checkout)" : revision},
          {"compiler", __VERSION__},
          {"libraries",
           {{"libtorch", KVSTREAM_TORCH_VERSION},
            {"boost", BOOST_LIB_VERSION},
            {"zstd", ZSTD_versionString()},
            {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                                  std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                                  std::to_string(NLOHMANN_JSON_VERSION_PATCH)}}},
          {"host", host},
          {"cpu", cpu},
          {"cores", std::thread::hardware_concurrency()}};
}

}  // namespace kvstream::experiments
