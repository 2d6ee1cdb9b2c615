// IEEE fp16 and bfloat16 <-> float32, in software (no F16C needed, bit-exact on every host).
// float -> half rounds to nearest, ties to even; NaN stays NaN; overflow gives +-inf.
// float_to_half_up rounds toward +inf in magnitude, so |x| <= half_to_float(float_to_half_up(|x|)).
// Per-thread code (KVSTREAM_HD): the CUDA encoder computes the same fp16 scales as the CPU.
#pragma once
#include <cstdint>

#include "common/host_device.h"

namespace kvstream::common {

KVSTREAM_HD float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {        // subnormal: renormalise
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return bits_as_float(bits);
}

KVSTREAM_HD uint16_t float_to_half(float value) {
  const uint32_t bits = float_as_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (abs_bits > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs_bits >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs_bits < 0x38800000u) {  // result is subnormal or zero: scale by 2^24 and round
    const float scaled = bits_as_float(abs_bits) * 16777216.0f;  // exact
    const float r = scaled + 12582912.0f - 12582912.0f;  // round-half-even to an integer (|scaled| < 2^10)
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r));
  }
  // normal: drop 13 mantissa bits with round-half-to-even
  uint32_t half_bits = ((abs_bits - 0x38000000u) >> 13);
  const uint32_t rest = abs_bits & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half_bits & 1u))) ++half_bits;
  return static_cast<uint16_t>(sign | half_bits);
}

// Smallest fp16 whose magnitude is >= |value| (value finite, |value| <= 65504).
KVSTREAM_HD uint16_t float_to_half_up(float value) {
  const float magnitude = value < 0 ? -value : value;
  uint16_t h = float_to_half(magnitude);
  if (half_to_float(h) < magnitude) ++h;  // next representable magnitude
  return h;
}

// Largest fp16 that is <= value (value finite, within fp16 range).
KVSTREAM_HD uint16_t float_to_half_down(float value) {
  uint16_t h = float_to_half(value);
  const float back = half_to_float(h);
  if (back > value) {
    if (h == 0x0000u) return 0x8001u;  // +0 -> smallest negative subnormal
    h = (h & 0x8000u) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h - 1);
  }
  return h;
}

KVSTREAM_HD float round_to_half(float value) { return half_to_float(float_to_half(value)); }

KVSTREAM_HD float bf16_to_float(uint16_t b) { return bits_as_float(static_cast<uint32_t>(b) << 16); }

KVSTREAM_HD uint16_t float_to_bf16(float value) {
  const uint32_t bits = float_as_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline constexpr float kHalfMax = 65504.0f;

}  // namespace kvstream::common
