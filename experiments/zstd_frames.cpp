#include "experiments/zstd_frames.h"

#include <zstd.h>

#include <stdexcept>

namespace kvstream::experiments {

void FrameBuffer::Free::operator()(ZSTD_CCtx_s* c) const { ZSTD_freeCCtx(c); }

FrameBuffer::FrameBuffer() : encoder_(ZSTD_createCCtx()) {
  if (!encoder_) throw std::runtime_error("cannot create a zstd encoder");
  ZSTD_CCtx_setParameter(encoder_.get(), ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(encoder_.get(), ZSTD_c_checksumFlag, 1);  // a damaged frame is an error, not other text
}

FrameBuffer::~FrameBuffer() = default;

std::string FrameBuffer::take_frame() {
  if (text_.empty()) return {};
  std::string frame(ZSTD_compressBound(text_.size()), '\0');
  const size_t n = ZSTD_compress2(encoder_.get(), frame.data(), frame.size(), text_.data(), text_.size());
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  frame.resize(n);
  text_.clear();
  return frame;
}

}  // namespace kvstream::experiments
