// A result directory's run log (runs.jsonl or runs.jsonl.zst, experiments/run_log_file.h): one JSON
// record per finished run, one line each. RunLog appends whole lines with single write(2)s on an
// O_APPEND descriptor (a compressed log: whole frames), so a crash or kill leaves every earlier line
// intact and at most a torn tail, which reading skips and reopening cuts off. That is what makes
// `kvstream run --resume` lose and duplicate nothing.
#pragma once
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/run_log_file.h"
#include "experiments/zstd_frames.h"

namespace kvstream::experiments {

// A line of a run log as a record: a JSON object with "run" and "id"; else a std::runtime_error naming `where`.
nlohmann::json parse_run_record(std::string_view line, const std::string& where);

// Every record of a run log in file order, held at once: for tests and small logs (the runner and
// merge stream theirs). Errors name file:line.
std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path);

// Appends to a run log; one thread at a time.
class RunLog {
 public:
  // Opens `path` for appending (creating it), compressed when its name says so; a torn tail is cut
  // off first.
  explicit RunLog(const std::filesystem::path& path);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Whole lines (each ending in a newline). A plain log writes them at once; a compressed one adds
  // them to its open frame, which it writes once it holds kFrameTextBytes or is kFrameSeconds old.
  // Throws on a failed or short write, having cut the partial write off.
  void append(std::string_view lines);
  void flush();  // writes the open frame (nothing for a plain log)

  // What a kill may lose beyond the runs in flight: a compressed log's open frame, at most this old.
  static constexpr std::chrono::seconds kFrameSeconds{2};

 private:
  void write_whole(std::string_view bytes);

  std::filesystem::path path_;
  int fd_ = -1;
  std::unique_ptr<FrameBuffer> frame_;  // compressed logs only
  std::chrono::steady_clock::time_point frame_started_;
};

}  // namespace kvstream::experiments
