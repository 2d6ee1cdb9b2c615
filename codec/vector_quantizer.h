// Per-token vector-wise absmax quantization (docs/CACHEGEN.md §4.1), shared by the CacheGen codec and the
// N-bit baseline. One token's C channels share one scale m = max_c |x[c]|, stored as fp16 rounded
// *up*, so |x| <= m always holds and every symbol stays in [0, 2Q].
//
//   CacheGen (artifact):  s = rint(x * (Q/m) + Q)         offset added before rounding
//   N-bit baseline:       s = rint(x * (Q/m)) + Q         round, then offset (int8 q = round(x·127/m))
//   decode (both):        x̂ = (s - Q) / Q * m
// rint rounds half to even in the default rounding mode, like torch.round.
// Invariant: |x - x̂| <= m / (2Q) up to float32 rounding. An all-zero token stores m = 0 and emits Q.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/half.h"
#include "common/host_device.h"

namespace kvstream::codec {

enum class RoundingOrder { kOffsetThenRound, kRoundThenOffset };

// Q for a bin count (bins 32 -> 15, 16 -> 7, 12 -> 5, 8 -> 3, 256 -> 127).
inline int bins_to_q(int bins) { return bins / 2 - 1; }

// rint(v) in the default rounding mode (half to even) for |v| <= 2^22, without a libm call, so the
// loops below vectorise: adding 1.5 * 2^23 leaves no fraction bits, the addition rounds v to an
// integer, and the subtraction is exact. (|v| <= 2Q + 1 < 2^9 here.)
KVSTREAM_HD float round_to_even(float v) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  return common::sub_rn(common::add_rn(v, kShift), kShift);  // not folded: (v + k) - k == v is false in IEEE arithmetic
}

// The reconstruction level (s - Q) / Q of symbol s.
KVSTREAM_HD float symbol_level(int s, int q) { return common::div_rn(static_cast<float>(s - q), static_cast<float>(q)); }

struct TokenQuantization {
  uint16_t scale_bits = 0;  // fp16 bits of the token's scale m
  int bad_channel = -1;     // the first channel whose value is not a finite fp16 number, or -1
};

// Quantizes the `channels` values value(0), value(1), ... into symbols (written at symbols[c * stride]).
// Per-thread code (KVSTREAM_HD): a CUDA thread quantizes one token with it, the CPU every token in
// turn. A token with a value that is not a finite fp16 number reports it and writes no symbols.
template <class Value>
KVSTREAM_HD TokenQuantization quantize_values(const Value& value, int channels, int q, RoundingOrder order,
                                              uint8_t* symbols, ptrdiff_t stride) {
  // max |x| on the bit patterns: for non-negative floats the integer order is the float order, and
  // NaN and infinity lie above every finite value, so one integer max (which vectorises, unlike a
  // float max under IEEE rules) also finds values that are not finite fp16.
  uint32_t max_bits = 0;
  for (int c = 0; c < channels; ++c) {
    const uint32_t bits = common::float_as_bits(value(c)) & 0x7FFFFFFFu;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  TokenQuantization out;
  constexpr uint32_t kHalfMaxBits = 0x477FE000u;  // the bits of common::kHalfMax (65504)
  if (max_bits > kHalfMaxBits) {
    for (int c = 0; c < channels && out.bad_channel < 0; ++c)
      if ((common::float_as_bits(value(c)) & 0x7FFFFFFFu) > kHalfMaxBits) out.bad_channel = c;
    return out;
  }
  out.scale_bits = common::float_to_half_up(common::bits_as_float(max_bits));
  const float m = common::half_to_float(out.scale_bits);
  const uint8_t zero_symbol = static_cast<uint8_t>(q);
  if (m == 0.0f) {
    for (int c = 0; c < channels; ++c) symbols[c * stride] = zero_symbol;
    return out;
  }
  const float inv = common::div_rn(static_cast<float>(q), m);
  const float offset = static_cast<float>(q);
  const float top = static_cast<float>(2 * q);
  for (int c = 0; c < channels; ++c) {
    const float scaled = common::mul_rn(value(c), inv);
    float s = order == RoundingOrder::kOffsetThenRound ? round_to_even(common::add_rn(scaled, offset))
                                                       : common::add_rn(round_to_even(scaled), offset);
    s = s < 0.0f ? 0.0f : (s > top ? top : s);  // float rounding of x*inv may touch ±Q+ε
    symbols[c * stride] = static_cast<uint8_t>(s);
  }
  return out;
}

// The values of one token, x[0..channels), as quantize_values takes them.
struct TokenValues {
  const float* x;
  KVSTREAM_HD float operator()(int c) const { return x[c]; }
};

inline std::string non_finite_message(float value, int channel) {
  return "KV value " + std::to_string(value) + " at channel " + std::to_string(channel) + " is not a finite fp16 number";
}

// quantize_values over x[0..channels); throws std::invalid_argument for values that are not finite fp16.
inline uint16_t quantize_token(const float* x, int channels, int q, RoundingOrder order, uint8_t* symbols,
                               ptrdiff_t stride) {
  const TokenQuantization t = quantize_values(TokenValues{x}, channels, q, order, symbols, stride);
  if (t.bad_channel >= 0)
    throw std::invalid_argument(non_finite_message(x[t.bad_channel], t.bad_channel));
  return t.scale_bits;
}

// x^[c] = (s[c] - Q) / Q * m for the `channels` symbols of one token. Symbols must lie in [0, 2Q]
// (decoders check this before dequantizing). The level is divided out per value rather than looked
// up in a table of symbol_level: the same IEEE division, so the same bits, and the loop vectorises.
inline void dequantize_token(const uint8_t* symbols, int channels, int q, uint16_t scale_bits, float* out) {
  const float m = common::half_to_float(scale_bits);
  for (int c = 0; c < channels; ++c) out[c] = symbol_level(symbols[c], q) * m;
}

}  // namespace kvstream::codec
