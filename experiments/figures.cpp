#include "experiments/figures.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

namespace kvstream::experiments {

namespace {
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string python() {
  if (const char* chosen = std::getenv("KVSTREAM_PYTHON"); chosen && *chosen) return chosen;
  std::error_code ec;
  return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}
}  // namespace

bool render_figures(const std::filesystem::path& result_dir, std::string& error) {
  const std::filesystem::path script = std::filesystem::path(KVSTREAM_SOURCE_DIR) / "plotting" / "plot.py";
  const std::string command = shell_quoted(python()) + " " + shell_quoted(script.string()) + " " +
                              shell_quoted(result_dir.string()) + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    error = "cannot run " + command;
    return false;
  }
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status == 0) return true;
  error = command + " failed" + (WIFEXITED(status) ? " with exit code " + std::to_string(WEXITSTATUS(status)) : "") +
          ":\n" + output;
  return false;
}

}  // namespace kvstream::experiments
