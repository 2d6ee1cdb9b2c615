// Encoding one CacheGen chunk as per-thread work (DietGPU-style): every function below is
// what one thread does, shared by the CPU encoder (cachegen_codec.cpp runs the threads of a stage
// one after another) and the CUDA encoder (gpu_encode.cu launches a stage at a time), so both
// write the same bytes. The stages, in order:
//   1. quantize  a thread per (row, token) (quantize_thread): the anchors (every token in raw mode)
//                first, then in anchor/delta mode the other tokens against their decoded anchor;
//   2. cdf       a thread per (row, channel) (cdf_thread): the histogram over the chunk's tokens and
//                its "+k" table; skipped with an offline table;
//   3. entropy   every unit of the chunk into its own slot of a scratch buffer:
//                  ac:   a thread per (sub-chunk, row, channel) stream (ac_unit_thread);
//                  rans: a group per (sub-chunk, row): rans_group_thread on the CPU; on the GPU a warp
//                        per group, a lane per state, each running rans_encode_symbol;
//   4. compact   an exclusive scan of the unit sizes places each unit in DATA (units in order, no
//                gaps), and copy_unit_bytes moves it there.
// The job holds plain pointers (host or device memory) and compiles at C++17 for nvcc.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/entropy/arithmetic_coder.h"
#include "codec/entropy/cdf.h"
#include "codec/entropy/rans_coder.h"
#include "codec/vector_quantizer.h"
#include "common/half.h"
#include "common/host_device.h"

namespace kvstream::codec {

struct CacheGenEncodeJob {
  // The chunk: token t (0-based in the chunk) of CacheGen row r = part·L + layer is the C floats at
  // kv + ((layer·2 + part)·kv_tokens + kv_t0 + t)·C, KvChunkView's layout.
  const float* kv = nullptr;
  int64_t kv_tokens = 0, kv_t0 = 0;
  int layers = 0, channels = 0;
  int64_t tokens = 0;  // T, < 2^32 (the histograms count in 32 bits)
  const uint8_t* row_q = nullptr;  // [2L] Q of each row (bins / 2 - 1)
  int delta_group = 0;             // 0: raw tokens; else anchor/delta groups of this many tokens
  int alphabet = 0, sub_tokens = 0;
  bool rans = false;
  int rans_states = 0;

  uint8_t* symbols = nullptr;     // [2L][T][C]        stage 1 out
  uint16_t* scales = nullptr;     // [2L][T] fp16 bits stage 1 out
  uint16_t* cdf = nullptr;        // [2L·C][M + 1]     stage 2 out (an offline table: in)
  uint8_t* scratch = nullptr;     // units × unit_capacity() bytes, stage 3
  uint32_t* unit_start = nullptr; // [units] where in its slot a unit's bytes begin
  uint32_t* unit_bytes = nullptr; // [units]
  uint8_t* ac_codes = nullptr;    // [units] ac: the LENS code of each stream

  KVSTREAM_HD int rows() const { return 2 * layers; }
  KVSTREAM_HD int64_t sub_chunks() const { return (tokens + sub_tokens - 1) / sub_tokens; }
  KVSTREAM_HD uint32_t sub_chunk_tokens(int64_t j) const {
    const int64_t left = tokens - j * sub_tokens;
    return static_cast<uint32_t>(left < sub_tokens ? left : sub_tokens);
  }
  // ac: a stream per (sub-chunk, row, channel); rans: a group per (sub-chunk, row).
  KVSTREAM_HD uint64_t units() const {
    return uint64_t(sub_chunks()) * uint64_t(rows()) * (rans ? 1u : uint64_t(channels));
  }
  // A scratch slot holds the largest unit: a stream is never longer than its raw symbols.
  KVSTREAM_HD uint32_t unit_capacity() const {
    return rans ? rans_group_capacity(uint32_t(sub_tokens) * uint32_t(channels), rans_states) : uint32_t(sub_tokens);
  }
  KVSTREAM_HD const float* token(int row, int64_t t) const {
    const int layer = row % layers, part = row / layers;
    return kv + ((int64_t(layer) * 2 + part) * kv_tokens + kv_t0 + t) * channels;
  }
  KVSTREAM_HD bool is_anchor(int64_t t) const { return delta_group == 0 || t % delta_group == 0; }
};

// Points `job` at where its stages write: `buffers` has members symbols, scales, cdf, scratch,
// unit_start, unit_bytes and ac_codes, each with data() (the CPU launcher's host vectors,
// HostEncodeBuffers; the kernels' device arrays, codec/cachegen/gpu_encode.cu).
template <class Buffers>
void point_at_buffers(CacheGenEncodeJob& job, Buffers& buffers) {
  job.symbols = buffers.symbols.data();
  job.scales = buffers.scales.data();
  job.cdf = buffers.cdf.data();
  job.scratch = buffers.scratch.data();
  job.unit_start = buffers.unit_start.data();
  job.unit_bytes = buffers.unit_bytes.data();
  job.ac_codes = buffers.ac_codes.data();
}

// Stage 1 for token i = row·T + t, in the pass of anchors (`anchors`) or of the other tokens, which
// quantize their difference to the decoded anchor (its symbols and scale from the first pass).
// Returns the first channel whose value (or difference) is not a finite fp16 number, or -1.
KVSTREAM_HD int quantize_thread(const CacheGenEncodeJob& job, uint64_t i, bool anchors) {
  const int row = static_cast<int>(i / uint64_t(job.tokens));
  const int64_t t = static_cast<int64_t>(i % uint64_t(job.tokens));
  if (job.is_anchor(t) != anchors) return -1;
  const int q = job.row_q[row];
  const float* x = job.token(row, t);
  uint8_t* out = job.symbols + i * uint64_t(job.channels);
  TokenQuantization r;
  if (anchors) {
    r = quantize_values(TokenValues{x}, job.channels, q, RoundingOrder::kOffsetThenRound, out, 1);
  } else {
    const uint64_t a = i - uint64_t(t % job.delta_group);
    const uint8_t* anchor_symbols = job.symbols + a * uint64_t(job.channels);
    const float anchor_scale = common::half_to_float(job.scales[a]);
    const auto delta = [x, anchor_symbols, anchor_scale, q](int c) {
      return common::sub_rn(x[c], common::mul_rn(symbol_level(anchor_symbols[c], q), anchor_scale));  // x - decoded anchor
    };
    r = quantize_values(delta, job.channels, q, RoundingOrder::kOffsetThenRound, out, 1);
  }
  job.scales[i] = r.scale_bits;
  return r.bad_channel;
}

// Stage 2 for CDF row rc = row·C + channel. Even and odd tokens count into separate histograms, so
// that runs of one symbol do not make every increment wait for the previous one.
KVSTREAM_HD void cdf_thread(const CacheGenEncodeJob& job, uint64_t rc) {
  uint32_t even[kMaxAlphabet] = {}, odd[kMaxAlphabet] = {};
  const uint64_t row = rc / uint64_t(job.channels), c = rc % uint64_t(job.channels);
  const uint64_t stride = uint64_t(job.channels);
  const uint8_t* s = job.symbols + row * uint64_t(job.tokens) * stride + c;
  const uint64_t tokens = uint64_t(job.tokens);
  for (uint64_t t = 0; t + 1 < tokens; t += 2) {
    ++even[s[t * stride]];
    ++odd[s[(t + 1) * stride]];
  }
  if (tokens % 2) ++even[s[(tokens - 1) * stride]];
  for (int k = 0; k < job.alphabet; ++k) even[k] += odd[k];
  build_cdf16(even, job.alphabet, job.cdf + rc * uint64_t(job.alphabet + 1));
}

// Stage 3, ac, for stream u = (sub-chunk·2L + row)·C + channel.
KVSTREAM_HD void ac_unit_thread(const CacheGenEncodeJob& job, uint64_t u) {
  const uint64_t per_sub_chunk = uint64_t(job.rows()) * uint64_t(job.channels);
  const int64_t j = static_cast<int64_t>(u / per_sub_chunk);
  const uint64_t stream = u % per_sub_chunk;  // row·C + channel: also its CDF row
  const uint64_t row = stream / uint64_t(job.channels), c = stream % uint64_t(job.channels);
  const uint8_t* symbols = job.symbols + (row * uint64_t(job.tokens) + uint64_t(j) * uint64_t(job.sub_tokens)) *
                                             uint64_t(job.channels) + c;
  uint8_t code = 0;
  job.unit_bytes[u] = ac_encode_unit(symbols, job.channels, job.sub_chunk_tokens(j),
                                     job.cdf + stream * uint64_t(job.alphabet + 1), job.alphabet,
                                     job.scratch + u * job.unit_capacity(), code);
  job.unit_start[u] = 0;
  job.ac_codes[u] = code;
}

// Stage 3, rans, for group g = sub-chunk·2L + row, with all its states in one thread (the CPU's way).
KVSTREAM_HD void rans_group_thread(const CacheGenEncodeJob& job, uint64_t g) {
  const int64_t j = static_cast<int64_t>(g / uint64_t(job.rows()));
  const uint64_t row = g % uint64_t(job.rows());
  const uint8_t* symbols =
      job.symbols + (row * uint64_t(job.tokens) + uint64_t(j) * uint64_t(job.sub_tokens)) * uint64_t(job.channels);
  job.unit_bytes[g] = rans_encode_group(symbols, job.sub_chunk_tokens(j) * uint32_t(job.channels), job.channels,
                                        job.cdf + row * uint64_t(job.channels) * uint64_t(job.alphabet + 1),
                                        job.alphabet, job.rans_states, job.scratch + g * job.unit_capacity());
  job.unit_start[g] = 0;
}

// Stage 4: unit u's bytes first, first + step, ... go to data[offset ...], offset being the
// exclusive prefix sum of the unit sizes. The CPU copies with (0, 1), a GPU block with its threads.
KVSTREAM_HD void copy_unit_bytes(const CacheGenEncodeJob& job, uint64_t u, uint64_t offset, uint8_t* data,
                                 uint32_t first, uint32_t step) {
  const uint8_t* from = job.scratch + u * job.unit_capacity() + job.unit_start[u];
  for (uint32_t b = first; b < job.unit_bytes[u]; b += step) data[offset + b] = from[b];
}

}  // namespace kvstream::codec
