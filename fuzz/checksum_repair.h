// Checksum repair for the fuzz targets of checksummed formats (bitstreams, .kvs headers, .kvcdf
// tables): a mutated input almost never keeps a valid CRC32C, so without repair the fuzzer would
// only ever test the checksum comparison. A target repairs when its selector byte says so and
// leaves the bytes alone otherwise, so both the checks and what lies behind them are fuzzed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codec/format/crc32c.h"

namespace kvstream::fuzz {

inline uint64_t load_le(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

inline void store_le(uint8_t* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

// Writes the CRC32C of bytes [begin, crc_at) at crc_at (u32, little-endian). Requires
// begin <= crc_at and crc_at + 4 <= bytes.size().
inline void repair_crc32c(std::vector<uint8_t>& bytes, size_t begin, size_t crc_at) {
  store_le(bytes.data() + crc_at, codec::crc32c({bytes.data() + begin, crc_at - begin}), 4);
}

}  // namespace kvstream::fuzz
