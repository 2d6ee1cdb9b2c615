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

bool render_figures(const std::filesystem::path& result_dir, std::string& error, const std::vector<std::string>& kinds,
                    const std::vector<std::string>& formats, const std::string& width, std::string* written) {
  const std::filesystem::path script = std::filesystem::path(KVSTREAM_SOURCE_DIR) / "plotting" / "plot.py";
  std::vector<std::string> command = {python(), script.string(), result_dir.string()};
  const auto joined = [](const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
    return text;
  };
  if (!kinds.empty()) command.insert(command.end(), {"--figures", joined(kinds)});
  if (!formats.empty()) command.insert(command.end(), {"--format", joined(formats)});
  if (!width.empty()) command.insert(command.end(), {"--width", width});
  std::string shown;
  for (const auto& word : command) shown += (shown.empty() ? "" : " ") + word;
  common::ProcessResult result;
  try {
    result = common::run_process(command);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (result.exit_code == 0) {
    if (written) *written = result.output;
    return true;
  }
  error = shown + " failed" + (result.exit_code >= 0 ? " with exit code " + std::to_string(result.exit_code) : "") +
          ":\n" + result.output;
  return false;
}

}  // namespace kvstream::experiments
