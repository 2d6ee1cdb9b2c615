#include "experiments/run_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/json_reader.h"

namespace kvstream::experiments {

namespace {
// The file's bytes up to and including its last newline.
std::string complete_lines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  std::string content = text.str();
  content.resize(content.rfind('\n') == std::string::npos ? 0 : content.rfind('\n') + 1);
  return content;
}
}  // namespace

std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(complete_lines(path));
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    lines.push_back(common::parse_json(line, path.string() + ":" + std::to_string(number)));
    if (!lines.back().is_object() || !lines.back().contains("id") || !lines.back().contains("run"))
      throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": a run record needs \"run\" and \"id\"");
  }
  return lines;
}

RunLog::RunLog(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) std::filesystem::resize_file(path, complete_lines(path).size());
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(path.string() + ": cannot open for appending: " + std::strerror(errno));
}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

void RunLog::append(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  const ssize_t written = ::write(fd_, text.data(), text.size());
  if (written != static_cast<ssize_t>(text.size()))
    throw std::runtime_error(path_.string() + ": write failed: " +
                             (written < 0 ? std::strerror(errno) : std::string("short write (disk full?)")));
}

void write_run_log_sorted(const std::filesystem::path& path, std::vector<nlohmann::json> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.at("run").template get<size_t>() < b.at("run").template get<size_t>(); });
  common::write_file_atomically(path, [&](std::ostream& out) {
    for (const auto& line : lines) out << line.dump() << "\n";
  });
}

}  // namespace kvstream::experiments
