// Decoding one transform chunk as per-thread work (DietGPU-style, as cachegen_encode_stages.h does for
// CacheGen's encoder): each function below is what one thread does, shared by the CPU decoder
// (transform_codec.cpp runs the threads of a stage one after another) and the CUDA decoder
// (gpu_transform_decode.cu launches a stage at a time). The stages, in order, for the coded
// (non-sink) tokens of every row r with kept_r components:
//   1. entropy   a group per sub-chunk of a row's tokens (transform_groups, transform_payload.h): the
//                rANS symbols of its (token, component) pairs (rans_coder.h; on the GPU a warp per
//                group, a lane per state);
//   2. counts    a thread per symbol: its raw low bits (transform_symbol_low_bits) and whether it is
//                escaped, then an exclusive scan over the chunk's symbols (rows in order) gives each
//                symbol its bit offset in LOWB and its index in ESCP. The totals must equal the
//                sections' sizes (checked on the host before stage 3 reads anything);
//   3. coefficients  a thread per symbol: y = q * Delta_r (transform_coefficient);
//   4. values    a thread per (row, token, channel): x = mu_r[c] + sum_i y_i W_r[i][c], the components
//                summed in order (transform_value), then for keys a thread per rotated pair redoes
//                RoPE (rope_turn_pair, rope.h); sink tokens are copied from fp16.
// Stages 2-3 give the CPU's coefficients bit for bit. Stage 4's ordered sum is the GPU's; the CPU
// decoder computes the same sums in the same order as one matrix product per row (projection.h), so
// CPU and GPU values agree bit for bit. Compiles at C++17 for nvcc.
#pragma once
#include <cstdint>

#include "common/host_device.h"

namespace kvstream::codec {

inline constexpr int kTransformClasses = 64;   // r_c = 2^-2 .. 2^13.75 (transform_calibration.h)
inline constexpr int kTransformAlphabet = 64;  // hi + 32 for hi in [-32, 30]; 63 = escape
inline constexpr int kTransformEscape = kTransformAlphabet - 1;
inline constexpr int kTransformRansStates = 8; // interleaved states of a group
inline constexpr int64_t kTransformMaxQ = int64_t(1) << 30;  // the largest |q| a bitstream holds

// Raw low bits of class c (at most 11: c < kTransformClasses).
KVSTREAM_HD constexpr int transform_low_bits(int c) { return c <= 20 ? 0 : (c - 20 + 3) / 4; }

// Stage 2: the raw low bits symbol `symbol` of a component of class c carries in LOWB.
KVSTREAM_HD int transform_symbol_low_bits(int symbol, int c) {
  return symbol == kTransformEscape ? 0 : transform_low_bits(c);
}

// `bits` (<= 24) bits of `bytes` starting at bit `at`, least significant first (the encoder's
// BitWriter order). Reads only bytes [at / 8, (at + bits + 7) / 8): the caller has checked them.
KVSTREAM_HD uint32_t read_low_bits(const uint8_t* bytes, uint64_t at, int bits) {
  if (bits == 0) return 0;
  const uint8_t* p = bytes + at / 8;
  const int shift = int(at % 8), needed = (shift + bits + 7) / 8;
  uint32_t word = 0;
  for (int b = 0; b < needed; ++b) word |= uint32_t(p[b]) << (8 * b);
  return (word >> shift) & ((1u << bits) - 1u);
}

// Stage 3: the coefficient of a symbol of class c, whose low bits start at bit `bit_at` of LOWB and
// whose escaped value (if any) is int32 `escape_at` of ESCP (little-endian). Returns false, leaving y
// alone, for an escaped value out of [-kTransformMaxQ, kTransformMaxQ], which no encoder writes.
KVSTREAM_HD bool transform_coefficient(int symbol, int c, const uint8_t* low_bits, uint64_t bit_at, const uint8_t* escapes,
                                       uint64_t escape_at, double step, float& y) {
  int64_t q;
  if (symbol == kTransformEscape) {
    const uint8_t* p = escapes + 4 * escape_at;
    q = int32_t(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    if (q < -kTransformMaxQ || q > kTransformMaxQ) return false;
  } else {
    const int k = transform_low_bits(c);
    q = int64_t(symbol - 32) * (int64_t(1) << k) + int64_t(read_low_bits(low_bits, bit_at, k));
  }
  y = static_cast<float>(common::dmul_rn(double(q), step));
  return true;
}

// Stage 4: channel c of one token, x = mean + sum_{i < kept} y[i] * basis[i * channels + c], summed
// in component order without fused multiply-adds.
KVSTREAM_HD float transform_value(const float* y, int kept, const float* basis, int channels, int c, float mean) {
  float sum = 0.0f;
  for (int i = 0; i < kept; ++i) sum = common::add_rn(sum, common::mul_rn(y[i], basis[int64_t(i) * channels + c]));
  return common::add_rn(sum, mean);
}

}  // namespace kvstream::codec
