// Encoding one transform chunk as per-thread work, the counterpart of transform_decode_stages.h: the
// CPU encoder (transform_codec.cpp) and the CUDA encoder (gpu_transform_encode.cu) share the
// quantizer below. The stages, for the coded (non-sink) tokens of every row r with kept_r components:
//   1. project   keys have RoPE undone (a thread per pair, rope_turn_pair); then a thread per (row,
//                token, component) y_i = sum_c W_r[i][c] (x_c - mu_r[c]) (transform_component, summed
//                in channel order; the CPU encoder computes the same sums, in the same order, as one
//                matrix product per row: projection.h);
//   2. quantize  a thread per symbol (transform_quantize): its rANS symbol, raw low bits or escape;
//   3. place     exclusive scans of the low-bit counts and escape flags give every symbol its bit
//                offset in LOWB and its index in ESCP, and a thread per symbol writes them there;
//   4. entropy   a group per sub-chunk of a row's tokens (transform_groups, transform_payload.h;
//                rans_coder.h; on the GPU a warp per group, a lane per state).
// Every stage gives the same values on both sides, so the same bytes. Compiles at C++17 for nvcc.
#pragma once
#include <cmath>
#include <cstdint>

#include "codec/transform/transform_decode_stages.h"
#include "common/host_device.h"

namespace kvstream::codec {

// Stage 1: component i of one token, y_i = sum_c basis_i[c] * (x[c] - mean[c]), in channel order.
KVSTREAM_HD float transform_component(const float* x, const float* mean, const float* basis_i, int channels) {
  float sum = 0.0f;
  for (int c = 0; c < channels; ++c) sum = common::add_rn(sum, common::mul_rn(basis_i[c], common::sub_rn(x[c], mean[c])));
  return sum;
}

struct TransformQuantized {
  int symbol = 0;      // hi + 32, or kTransformEscape
  int low_bits = 0;    // raw bits in LOWB (0 when escaped)
  uint32_t low = 0;    // their value
  int32_t escaped = 0; // q, when escaped
};

// Stage 2: q = rint(y / step), split by the class c of its component: hi = floor(q / 2^k_c) as
// symbol hi + 32 with k_c low bits when hi lies in [-32, 30], else escaped. A q beyond the format's
// range kTransformMaxQ (transform_distortion.h) is escaped as +-(kTransformMaxQ + 1), which no
// decoder accepts and every encoder refuses before writing a bitstream (write_transform_bitstream):
// the value is never silently clamped.
KVSTREAM_HD TransformQuantized transform_quantize(float y, double step, int c) {
  double scaled = rint(common::ddiv_rn(double(y), step));
  const double limit = double(kTransformMaxQ + 1);
  scaled = scaled < -limit ? -limit : (scaled > limit ? limit : scaled);  // a NaN stays NaN here ...
  const int64_t q = scaled == scaled ? static_cast<int64_t>(scaled) : 0;  // ... and codes as 0
  const int k = transform_low_bits(c);
  const int64_t hi = q >= 0 ? q >> k : ~(~q >> k);  // floor(q / 2^k), shifting only non-negative values
  TransformQuantized out;
  if (hi >= -32 && hi <= 30) {
    out.symbol = static_cast<int>(hi + 32);
    out.low_bits = k;
    out.low = static_cast<uint32_t>(uint64_t(q) & ((uint64_t(1) << k) - 1));  // q mod 2^k
  } else {
    out.symbol = kTransformEscape;
    out.escaped = static_cast<int32_t>(q);
  }
  return out;
}

}  // namespace kvstream::codec
