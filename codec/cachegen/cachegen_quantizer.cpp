#include "codec/cachegen/cachegen_quantizer.h"

#include <string>

#include "codec/vector_quantizer.h"

namespace kvstream::codec {

std::vector<uint8_t> row_q_values(const LevelSpec& spec, int rows) {
  std::vector<uint8_t> row_q(static_cast<size_t>(rows));
  for (int row = 0; row < rows; ++row) row_q[size_t(row)] = static_cast<uint8_t>(bins_to_q(spec.bins_of_row(row)));
  return row_q;
}

CacheGenEncodeJob encode_job(const KvChunkView& chunk, const uint8_t* row_q, TokenMode mode) {
  CacheGenEncodeJob job;
  job.kv = chunk.base();
  job.kv_tokens = chunk.full_tokens();
  job.kv_t0 = chunk.t0();
  job.layers = chunk.shape().layers;
  job.channels = chunk.shape().channels();
  job.tokens = chunk.shape().tokens;
  job.row_q = row_q;
  job.delta_group = mode.delta_group;
  return job;
}

std::invalid_argument non_finite_token_error(const CacheGenEncodeJob& job, uint64_t i, int channel) {
  const int row = static_cast<int>(i / uint64_t(job.tokens));
  const int64_t t = static_cast<int64_t>(i % uint64_t(job.tokens));
  const std::string where = " (row " + std::to_string(row) + ", token " + std::to_string(t) + ")";
  const float x = job.token(row, t)[channel];
  if (job.is_anchor(t) || !(x >= -common::kHalfMax && x <= common::kHalfMax)) return std::invalid_argument(non_finite_message(x, channel) + where);
  return std::invalid_argument("KV value " + std::to_string(x) + " at channel " + std::to_string(channel) +
                               " minus its decoded anchor (token " + std::to_string(t - t % job.delta_group) +
                               ") is not a finite fp16 number" + where);
}

void quantize_stage(const CacheGenEncodeJob& job) {
  const uint64_t tokens = uint64_t(job.rows()) * uint64_t(job.tokens);
  for (const bool anchors : {true, false}) {
    if (!anchors && job.delta_group == 0) break;
    for (uint64_t i = 0; i < tokens; ++i)
      if (const int bad = quantize_thread(job, i, anchors); bad >= 0) throw non_finite_token_error(job, i, bad);
  }
}

QuantizedChunk quantize_chunk(const KvChunkView& chunk, const LevelSpec& spec, TokenMode mode) {
  const KvShape shape = chunk.shape();
  QuantizedChunk q{shape, std::vector<uint8_t>(static_cast<size_t>(shape.elements())),
                   std::vector<uint16_t>(static_cast<size_t>(shape.rows() * shape.tokens))};
  const std::vector<uint8_t> row_q = row_q_values(spec, shape.rows());
  CacheGenEncodeJob job = encode_job(chunk, row_q.data(), mode);
  job.symbols = q.symbols.data();
  job.scales = q.scales.data();
  quantize_stage(job);
  return q;
}

void dequantize_chunk(const QuantizedChunk& quantized, const LevelSpec& spec, TokenMode mode, KvCache& out) {
  const KvShape& shape = quantized.shape;
  const int channels = shape.channels();
  for (int row = 0; row < shape.rows(); ++row) {
    const int q = bins_to_q(spec.bins_of_row(row));
    for (int64_t t = 0; t < shape.tokens; ++t) {
      float* x = out.row_token(row, t);
      dequantize_token(quantized.row_token(row, t), channels, q, quantized.scales[static_cast<size_t>(row * shape.tokens + t)], x);
      if (!mode.is_anchor(t)) {  // the anchor (earlier in the same row) is already decoded
        const float* a = out.row_token(row, mode.anchor_of(t));
        for (int c = 0; c < channels; ++c) x[c] += a[c];
      }
    }
  }
}

}  // namespace kvstream::codec
