// The strict check on what a decoder produced (codec/FORMAT.md §1, "Strict decoding"): a CRC only
// proves the bytes are the ones written, not that an encoder wrote them. Every encoder reads finite
// values of the source dtype (fp16, bf16 or fp32) and its reconstruction stays within them, so a
// decoded value that is not finite, or that would round to infinity when written back in the
// source dtype, comes from a bitstream no encoder wrote (e.g. scales rewritten with a valid CRC).
#pragma once
#include "codec/bitstream.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

// The largest magnitude that rounds (to nearest) to a finite value of `dtype`.
double largest_finite_rounding(SourceDtype dtype);

// Throws BitstreamError (implausible value, section DATA) naming the first value, by layer, K or V,
// token of the chunk and channel, that is NaN, infinite or rounds to infinity in `dtype`.
void check_decoded_values(const KvCache& kv, SourceDtype dtype);

}  // namespace kvstream::codec
