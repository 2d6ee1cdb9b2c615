#include "experiments/figures.h"

#include <cstdlib>
#include <stdexcept>

#include "common/process.h"

namespace kvstream::experiments {

namespace {
std::string python() {
  if (const char* chosen = std::getenv("KVSTREAM_PYTHON"); chosen && *chosen) return chosen;
  std::error_code ec;
  return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}
}  // namespace

bool render_figures(const std::filesystem::path& result_dir, std::string& error) {
  const std::filesystem::path script = std::filesystem::path(KVSTREAM_SOURCE_DIR) / "plotting" / "plot.py";
  const std::vector<std::string> command = {python(), script.string(), result_dir.string()};
  const std::string shown = command[0] + " " + command[1] + " " + command[2];
  common::ProcessResult result;
  try {
    result = common::run_process(command);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (result.exit_code == 0) return true;
  error = shown + " failed" + (result.exit_code >= 0 ? " with exit code " + std::to_string(result.exit_code) : "") +
          ":\n" + result.output;
  return false;
}

}  // namespace kvstream::experiments
