#include "experiments/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
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
  errno = 0;
  struct stat before {};
  if (::fstat(fd_, &before) != 0) throw std::runtime_error(path_.string() + ": cannot stat: " + std::strerror(errno));
  // write() may take part of the line; the next call then says why it takes no more.
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  if (written == text.size()) return;
  // A full disk or a file size limit: cut the partial line off, so the log holds whole runs only.
  const std::string why = errno != 0 ? std::strerror(errno) : "no space left";
  const bool cut = ::ftruncate(fd_, before.st_size) == 0;
  throw std::runtime_error(path_.string() + ": cannot append run " + line.value("run", nlohmann::json()).dump() +
                           ": " + why + (cut ? "" : " (and a partial line is left; --resume drops it)"));
}

void write_run_log_sorted(const std::filesystem::path& path, std::vector<nlohmann::json> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.at("run").template get<size_t>() < b.at("run").template get<size_t>(); });
  common::write_file_atomically(path, [&](std::ostream& out) {
    for (const auto& line : lines) out << line.dump() << "\n";
  });
}

}  // namespace kvstream::experiments
