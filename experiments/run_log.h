// runs.jsonl: one JSON object per finished run, one line each. Lines are appended with a single
// write(2) of the whole line on an O_APPEND descriptor, so a crash or kill leaves every earlier line
// intact and at most one partial last line, which reading drops (and reopening truncates away).
// That is what makes `kvstream run --resume` lose and duplicate nothing.
#pragma once
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

namespace kvstream::experiments {

// The complete lines of a run log, in file order; a missing file has none. A trailing line without
// its newline (an interrupted append) is ignored; a malformed complete line is a std::runtime_error
// naming file:line.
std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path);

class RunLog {
 public:
  // Opens `path` for appending (creating it); a partial last line is cut off first.
  explicit RunLog(const std::filesystem::path& path);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  void append(const nlohmann::json& line);  // thread-safe; throws on a failed or short write

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

// Rewrites `path` atomically with `lines` sorted by their "run" index: the final, canonical order
// (the order runs finish in depends on --jobs).
void write_run_log_sorted(const std::filesystem::path& path, std::vector<nlohmann::json> lines);

}  // namespace kvstream::experiments
