#include "cachegen_quantizer.h"

#include <stdexcept>
#include <string>

#include "vector_quantizer.h"

namespace kvstream::codec {

QuantizedChunk quantize_chunk(const KvChunkView& chunk, const LevelSpec& spec, TokenMode mode) {
  const KvShape shape = chunk.shape();
  const int channels = shape.channels();
  QuantizedChunk q{shape, std::vector<uint8_t>(static_cast<size_t>(shape.elements())),
                   std::vector<uint16_t>(static_cast<size_t>(shape.rows() * shape.tokens))};
  std::vector<float> anchor(static_cast<size_t>(channels)), delta(static_cast<size_t>(channels));
  for (int row = 0; row < shape.rows(); ++row) {
    const int qmax = bins_to_q(spec.bins_of_row(row));
    const SymbolLevels levels(qmax);
    for (int64_t t = 0; t < shape.tokens; ++t) {
      const float* x = chunk.token(row, t);
      const float* source = x;
      if (!mode.is_anchor(t)) {  // difference to the decoded anchor of this group
        for (int c = 0; c < channels; ++c) delta[c] = x[c] - anchor[c];
        source = delta.data();
      }
      uint16_t& scale = q.scales[static_cast<size_t>(row * shape.tokens + t)];
      try {
        scale = quantize_token(source, channels, qmax, RoundingOrder::kOffsetThenRound, q.row_token(row, t), 1);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string(e.what()) + " (row " + std::to_string(row) + ", token " +
                                    std::to_string(t) + (source == x ? ")" : ", as a delta to its anchor)"));
      }
      if (mode.is_delta() && mode.is_anchor(t))
        dequantize_token(q.row_token(row, t), 1, channels, levels, scale, anchor.data());
    }
  }
  return q;
}

void dequantize_chunk(const QuantizedChunk& q, const LevelSpec& spec, TokenMode mode, KvCache& out) {
  const KvShape& shape = q.shape;
  const int channels = shape.channels();
  for (int row = 0; row < shape.rows(); ++row) {
    const SymbolLevels levels(bins_to_q(spec.bins_of_row(row)));
    for (int64_t t = 0; t < shape.tokens; ++t) {
      float* x = out.row_token(row, t);
      dequantize_token(q.row_token(row, t), 1, channels, levels, q.scales[static_cast<size_t>(row * shape.tokens + t)], x);
      if (!mode.is_anchor(t)) {  // the anchor (earlier in the same row) is already decoded
        const float* a = out.row_token(row, mode.anchor_of(t));
        for (int c = 0; c < channels; ++c) x[c] += a[c];
      }
    }
  }
}

}  // namespace kvstream::codec
