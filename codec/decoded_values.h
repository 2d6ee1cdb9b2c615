// The strict check on what a decoder produced (codec/FORMAT.md §1, "Strict decoding"): a CRC only
// proves the bytes are the ones written, not that an encoder wrote them. Every encoder reads finite
// values of the source dtype (fp16, bf16 or fp32), and its reconstruction stays within them up to
// the rounding of its scales: KIVI rounds a group's scale up to fp16, so min + levels x scale may
// pass the largest finite value by a few of the scale's ulps (65504 comes back as up to ~65620 at
// 2 bits). A decoded value beyond kOvershoot x the dtype's largest value, or one not finite, comes
// from a bitstream no encoder wrote (e.g. scales rewritten with a valid CRC).
#pragma once
#include "codec/format/bitstream.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

// How far past the dtype's largest finite value an encoder's reconstruction may land.
inline constexpr double kOvershoot = 1.0 + 1.0 / 256;

// The largest finite value of `dtype`.
double largest_finite(SourceDtype dtype);

// Throws BitstreamError (implausible value, section DATA) naming the first value, by layer, K or V,
// token of the chunk and channel, that is NaN, infinite or beyond kOvershoot x largest_finite(dtype);
// values between largest_finite and that bound are set to +-largest_finite, the value the encoder
// read, so that writing the KV back in its dtype never makes an infinity.
void check_decoded_values(KvCache& kv, SourceDtype dtype);

}  // namespace kvstream::codec
