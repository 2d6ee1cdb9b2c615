// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and Snappy.
// crc32c("123456789") == 0xE3069283.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace kvstream::codec {

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t seed = 0);

}  // namespace kvstream::codec
