// CacheGen's quantization stage (docs/CACHEGEN.md §4.1, and the paper's anchor/delta option, §3):
// a chunk becomes symbols [2L][T][C] (uint8, CacheGen row order) plus one fp16 scale per (row, token).
//
// Token modes:
//   raw           every token is quantized on its own (the artifact).
//   anchor-delta  tokens form groups of G; the group's first token (anchor) is quantized on its own,
//                 every other token quantizes its difference to the *decoded* anchor, so errors never
//                 accumulate and all tokens of a group decode in parallel (paper §5.1 "change-based").
// Either way |x - x̂| <= scale / (2Q) per element, scale being that token's stored fp16 absmax.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "codec/cachegen/cachegen_encode_stages.h"
#include "codec/kv_cache.h"
#include "codec/ladder.h"

namespace kvstream::codec {

struct TokenMode {
  int delta_group = 0;  // 0 = raw; otherwise anchor/delta with groups of this many tokens (2..255)
  bool is_delta() const { return delta_group > 0; }
  bool is_anchor(int64_t t) const { return !is_delta() || t % delta_group == 0; }
  int64_t anchor_of(int64_t t) const { return is_delta() ? t - t % delta_group : t; }
};

struct QuantizedChunk {
  KvShape shape;
  std::vector<uint8_t> symbols;  // [2L][T][C]
  std::vector<uint16_t> scales;  // fp16 bits, [2L][T]

  uint8_t* row_token(int row, int64_t t) { return symbols.data() + (int64_t(row) * shape.tokens + t) * shape.channels(); }
  const uint8_t* row_token(int row, int64_t t) const {
    return symbols.data() + (int64_t(row) * shape.tokens + t) * shape.channels();
  }
};

// Q of every CacheGen row (bins / 2 - 1 of its layer's bins), [2L].
std::vector<uint8_t> row_q_values(const LevelSpec& spec, int rows);

// An encode job (cachegen_encode_stages.h) with the chunk, its rows' Q and the token mode set; the
// caller adds the buffers and, past quantization, the coding parameters.
CacheGenEncodeJob encode_job(const KvChunkView& chunk, const uint8_t* row_q, TokenMode mode);

// The error for token i (row·T + t) of `job` whose channel `channel` is not quantizable (not a finite
// fp16 number, or its difference to the decoded anchor is not).
std::invalid_argument non_finite_token_error(const CacheGenEncodeJob& job, uint64_t i, int channel);

// Stage 1 on the CPU: both passes, every token in turn. Throws non_finite_token_error's error.
void quantize_stage(const CacheGenEncodeJob& job);

QuantizedChunk quantize_chunk(const KvChunkView& chunk, const LevelSpec& spec, TokenMode mode);
// Writes the decoded values into `out` (shape == q.shape).
void dequantize_chunk(const QuantizedChunk& quantized, const LevelSpec& spec, TokenMode mode, KvCache& out);

}  // namespace kvstream::codec
