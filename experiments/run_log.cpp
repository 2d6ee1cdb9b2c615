#include "experiments/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/json_reader.h"

namespace kvstream::experiments {

nlohmann::json parse_run_record(std::string_view line, const std::string& where) {
  nlohmann::json record = common::parse_json(std::string(line), where);
  if (!record.is_object() || !record.contains("id") || !record.contains("run") || !record.at("run").is_number_unsigned())
    throw std::runtime_error(where + ": a run record needs \"run\" (an index) and \"id\"");
  return record;
}

std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path) {
  std::vector<nlohmann::json> records;
  for_each_line(path, [&](std::string_view line, size_t number) {
    if (!line.empty()) records.push_back(parse_run_record(line, path.string() + ":" + std::to_string(number)));
  });
  return records;
}

RunLog::RunLog(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec))
    std::filesystem::resize_file(path, for_each_line(path, [](std::string_view, size_t) {}).complete_bytes);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(path.string() + ": cannot open for appending: " + std::strerror(errno));
  if (run_log_format(path) == RunLogFormat::kZstd) frame_ = std::make_unique<FrameBuffer>();
}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

void RunLog::append(std::string_view lines) {
  if (!frame_) return write_whole(lines);
  // Line by line into the open frame, which is written as soon as it holds kFrameTextBytes: a frame
  // holds at most that plus one line, however many lines come at once.
  while (!lines.empty()) {
    if (frame_->text_bytes() == 0) frame_started_ = std::chrono::steady_clock::now();
    const size_t newline = lines.find('\n');
    const size_t end = newline == std::string_view::npos ? lines.size() : newline + 1;
    frame_->add(lines.substr(0, end));
    lines.remove_prefix(end);
    if (frame_->text_bytes() >= kFrameTextBytes) flush();
  }
  if (std::chrono::steady_clock::now() - frame_started_ >= kFrameSeconds) flush();
}

void RunLog::flush() {
  if (frame_) write_whole(frame_->take_frame());
}

void RunLog::write_whole(std::string_view bytes) {
  if (bytes.empty()) return;
  errno = 0;
  struct stat before {};
  if (::fstat(fd_, &before) != 0) throw std::runtime_error(path_.string() + ": cannot stat: " + std::strerror(errno));
  // write() may take part of the bytes; the next call then says why it takes no more.
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  if (written == bytes.size()) return;
  // A full disk or a file size limit: cut the partial write off, so the log holds whole runs only.
  const std::string why = errno != 0 ? std::strerror(errno) : "no space left";
  const bool cut = ::ftruncate(fd_, before.st_size) == 0;
  throw std::runtime_error(path_.string() + ": cannot append runs: " + why +
                           (cut ? "" : " (and a partial write is left; --resume drops it)"));
}

}  // namespace kvstream::experiments
