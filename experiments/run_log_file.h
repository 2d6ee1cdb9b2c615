// The file a result directory's runs live in, and reading it line by line. runs.jsonl is plain
// text, one JSON record per line; runs.jsonl.zst (`--compress-runs`) is the same text as a sequence
// of independent zstd frames, each holding whole lines, so that decompressing it with `zstd -d`
// gives runs.jsonl. Either is read in one pass, a buffer at a time (a compressed file one frame at a
// time), so reading never holds the file.
//
// What a killed writer leaves: a plain file may end in a partial line, a compressed one in a partial
// frame (its last write(2) cut short). Reading skips that tail, and `complete_bytes` says where it
// starts, so that a writer can cut it off. Anything else that does not decode is an error naming the
// file and the byte where its frame starts.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

namespace kvstream::experiments {

enum class RunLogFormat { kPlain, kZstd };

// A compressed log is read a frame at a time, and a frame of more text than this (which kvstream
// never writes: experiments/zstd_frames.h) is refused rather than held.
inline constexpr size_t kMaxFrameTextBytes = size_t(256) << 20;

inline constexpr const char* kPlainRunLog = "runs.jsonl";
inline constexpr const char* kZstdRunLog = "runs.jsonl.zst";

// `dir`/runs.jsonl or `dir`/runs.jsonl.zst.
std::filesystem::path run_log_path(const std::filesystem::path& dir, RunLogFormat format);
// The format a run log's name says (".zst": zstd).
RunLogFormat run_log_format(const std::filesystem::path& path);
// The run log of `dir` that exists and is not empty; nullopt when there is none. Both at once is an
// error (a directory written by two kinds of session), naming them.
std::optional<std::filesystem::path> find_run_log(const std::filesystem::path& dir);

struct RunLogScan {
  size_t lines = 0;           // complete lines read
  size_t complete_bytes = 0;  // the file's length without the torn tail a killed writer left
};

// Calls `line(text, number)` for every complete line of `path` in file order (`number` from 1,
// counting the decompressed text's lines), without its newline; a missing file has none. Throws a
// std::runtime_error naming the file and byte for data that is not a run log's (a corrupt frame).
RunLogScan for_each_line(const std::filesystem::path& path,
                         const std::function<void(std::string_view text, size_t number)>& line);

}  // namespace kvstream::experiments
