// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and Snappy.
// crc32c("123456789") == 0xE3069283.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace kvstream::codec {

// SSE4.2's crc32 instruction where the CPU has it (checked once), else crc32c_portable.
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t seed = 0);
// The table-driven computation (slicing-by-8), the same answers on any CPU: what crc32c falls back
// to, and what a test holds the instruction's path to.
uint32_t crc32c_portable(std::span<const uint8_t> bytes, uint32_t seed = 0);

// The 64-bit id of a file that bitstreams reference (offline CDF tables, transform calibrations):
// CRC32C(bytes) << 32 | CRC32C(bytes, seed 0x9E3779B9), over everything before the file's own CRC.
inline uint64_t file_fingerprint(std::span<const uint8_t> bytes) {
  return uint64_t(crc32c(bytes)) << 32 | crc32c(bytes, 0x9E3779B9u);
}

}  // namespace kvstream::codec
