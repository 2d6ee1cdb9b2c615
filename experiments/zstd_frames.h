// Compressed run logs are written as independent zstd frames of whole lines (experiments/
// run_log_file.h): a frame is written whole or, by a killed writer, torn at the end of the file, and
// every frame before it decodes on its own. FrameBuffer gathers lines and compresses them one frame at
// a time; frames of kFrameTextBytes of text keep the ratio near that of one frame for the whole file
// and bound what a reader holds (one frame's text).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct ZSTD_CCtx_s;

namespace kvstream::experiments {

inline constexpr size_t kFrameTextBytes = 1 << 20;
inline constexpr int kZstdLevel = 3;  // zstd's default: ~10x on run records at a few hundred MB/s a core

class FrameBuffer {
 public:
  FrameBuffer();
  ~FrameBuffer();
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;

  void add(std::string_view lines) { text_.append(lines); }
  size_t text_bytes() const { return text_.size(); }
  // The gathered text as one zstd frame (empty when nothing was gathered); starts a new frame.
  std::string take_frame();

 private:
  struct Free {
    void operator()(ZSTD_CCtx_s* c) const;
  };
  std::unique_ptr<ZSTD_CCtx_s, Free> encoder_;
  std::string text_;
};

}  // namespace kvstream::experiments
