#include "experiments/run_log_file.h"

#include <zstd.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvstream::experiments {

namespace fs = std::filesystem;

namespace {

constexpr size_t kReadBytes = 1 << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct DecoderFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// Calls `line` for each complete line of `text` (which ends in a newline), counting in `number`.
void split_lines(std::string_view text, size_t& number,
                 const std::function<void(std::string_view, size_t)>& line) {
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    line(text.substr(start, end - start), ++number);
    start = end + 1;
  }
}

RunLogScan scan_plain(std::FILE* in, const std::function<void(std::string_view, size_t)>& line) {
  RunLogScan scan;
  std::string pending;  // the bytes after the last newline read so far
  std::vector<char> buffer(kReadBytes);
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), in)) > 0;) {
    const std::string_view chunk(buffer.data(), n);
    const size_t last = chunk.rfind('\n');
    if (last == std::string_view::npos) {
      pending.append(chunk);
      continue;
    }
    pending.append(chunk.substr(0, last + 1));
    split_lines(pending, scan.lines, line);
    scan.complete_bytes += pending.size();
    pending.assign(chunk.substr(last + 1));
  }
  return scan;
}

RunLogScan scan_zstd(std::FILE* in, const fs::path& path, const std::function<void(std::string_view, size_t)>& line) {
  RunLogScan scan;
  const std::unique_ptr<ZSTD_DCtx, DecoderFree> decoder(ZSTD_createDCtx());
  if (!decoder) throw std::runtime_error(path.string() + ": cannot create a zstd decoder");
  std::vector<char> buffer(kReadBytes), output(ZSTD_DStreamOutSize());
  std::string frame;        // the decompressed text of the frame being read
  size_t consumed = 0;      // file bytes given to the decoder
  size_t result = 1;        // the decoder's last answer: 0 at the end of a frame
  // Decodes `input` (all of it, and what the decoder holds when `input` is empty), ending each frame.
  const auto decode = [&](ZSTD_inBuffer input) {
    for (;;) {
      ZSTD_outBuffer out{output.data(), output.size(), 0};
      const size_t before = input.pos;
      result = ZSTD_decompressStream(decoder.get(), &out, &input);
      if (ZSTD_isError(result))
        throw std::runtime_error(path.string() + ": corrupt zstd data in the frame starting at byte " +
                                 std::to_string(scan.complete_bytes) + " (after line " + std::to_string(scan.lines) +
                                 "): " + ZSTD_getErrorName(result));
      consumed += input.pos - before;
      frame.append(output.data(), out.pos);
      if (frame.size() > kMaxFrameTextBytes)
        throw std::runtime_error(path.string() + ": the zstd frame starting at byte " + std::to_string(scan.complete_bytes) +
                                 " holds more than " + std::to_string(kMaxFrameTextBytes >> 20) +
                                 " MiB of text: not a run log kvstream wrote (its frames hold about 1 MiB); "
                                 "decompress it (zstd -d) and use the runs.jsonl");
      if (result == 0) {
        if (!frame.empty() && frame.back() != '\n')
          throw std::runtime_error(path.string() + ": the zstd frame starting at byte " +
                                   std::to_string(scan.complete_bytes) + " (after line " + std::to_string(scan.lines) +
                                   ") does not end a line: not a run log");
        split_lines(frame, scan.lines, line);
        frame.clear();
        scan.complete_bytes = consumed;
      }
      if (input.pos == input.size && out.pos < out.size) return;
    }
  };
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), in)) > 0;) decode({buffer.data(), n, 0});
  decode({nullptr, 0, 0});
  // A frame still open here is the torn tail of a killed writer: skipped, like a partial line.
  return scan;
}

}  // namespace

fs::path run_log_path(const fs::path& dir, RunLogFormat format) {
  return dir / (format == RunLogFormat::kZstd ? kZstdRunLog : kPlainRunLog);
}

RunLogFormat run_log_format(const fs::path& path) {
  return path.extension() == ".zst" ? RunLogFormat::kZstd : RunLogFormat::kPlain;
}

std::optional<fs::path> find_run_log(const fs::path& dir) {
  std::error_code ec;
  const auto holds_runs = [&](RunLogFormat format) {
    const fs::path path = run_log_path(dir, format);
    return fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0;
  };
  const bool plain = holds_runs(RunLogFormat::kPlain), zstd = holds_runs(RunLogFormat::kZstd);
  if (plain && zstd)
    throw std::runtime_error(dir.string() + " holds both " + kPlainRunLog + " and " + kZstdRunLog +
                             ": keep the one that holds the runs");
  if (!plain && !zstd) return std::nullopt;
  return run_log_path(dir, plain ? RunLogFormat::kPlain : RunLogFormat::kZstd);
}

RunLogScan for_each_line(const fs::path& path, const std::function<void(std::string_view, size_t)>& line) {
  const File in(std::fopen(path.c_str(), "rb"));
  if (!in) return {};
  const RunLogScan scan = run_log_format(path) == RunLogFormat::kZstd ? scan_zstd(in.get(), path, line)
                                                                      : scan_plain(in.get(), line);
  if (std::ferror(in.get())) throw std::runtime_error(path.string() + ": read error");
  return scan;
}

}  // namespace kvstream::experiments
