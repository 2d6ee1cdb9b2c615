// Helpers shared by codecs that carry fp16 values: pack a chunk to little-endian fp16 in canonical
// [L][2][T][C] order, unpack it again, and the single-level check.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec/format/bitstream_error.h"
#include "codec/kv_cache.h"

namespace kvstream::codec {

// Throws std::invalid_argument for values that are not finite fp16 numbers.
std::vector<uint8_t> pack_fp16(const KvChunkView& chunk);
// Throws BitstreamError(kCorruptPayload) in `section` for NaN/inf values, which no encoder writes.
KvCache unpack_fp16(std::span<const uint8_t> bytes, const KvShape& shape, const std::string& section);

}  // namespace kvstream::codec
