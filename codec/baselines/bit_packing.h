// Packing of unsigned N-bit values (1 <= N <= 8) into bytes, LSB-first: value i occupies bits
// [i·N, i·N + N) of the stream, where stream bit k is bit (k mod 8) of byte k / 8. The packed size is
// ceil(count·N / 8); padding bits in the last byte are zero. Used by the quant and kivi baselines.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvstream::codec {

inline uint64_t packed_bytes(uint64_t count, int bits) { return (count * static_cast<uint64_t>(bits) + 7) / 8; }

namespace detail {
inline void check_bit_width(int bits) {
  if (bits < 1 || bits > 8) throw std::invalid_argument("bit packing: width " + std::to_string(bits) + " not in [1, 8]");
}
}  // namespace detail

// Throws std::invalid_argument if a value does not fit in `bits` bits.
inline std::vector<uint8_t> pack_bits(std::span<const uint8_t> values, int bits) {
  detail::check_bit_width(bits);
  std::vector<uint8_t> out(packed_bytes(values.size(), bits));
  uint32_t acc = 0;  // pending bits, LSB first; fewer than 8 are pending between values
  int pending = 0;
  size_t pos = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] >> bits)
      throw std::invalid_argument("bit packing: value " + std::to_string(values[i]) + " at " + std::to_string(i) +
                                  " does not fit in " + std::to_string(bits) + " bits");
    acc |= uint32_t(values[i]) << pending;
    pending += bits;
    for (; pending >= 8; pending -= 8, acc >>= 8) out[pos++] = static_cast<uint8_t>(acc);
  }
  if (pending > 0) out[pos++] = static_cast<uint8_t>(acc);
  return out;
}

// Unpacks out.size() values. `packed` must hold exactly packed_bytes(out.size(), bits) bytes
// (std::invalid_argument otherwise), so no byte outside it is ever read. Padding bits are ignored.
inline void unpack_bits(std::span<const uint8_t> packed, int bits, std::span<uint8_t> out) {
  detail::check_bit_width(bits);
  if (packed.size() != packed_bytes(out.size(), bits))
    throw std::invalid_argument("bit packing: " + std::to_string(packed.size()) + " bytes for " +
                                std::to_string(out.size()) + " values of " + std::to_string(bits) + " bits");
  const uint32_t mask = (1u << bits) - 1u;
  uint32_t acc = 0;  // buffered bits, LSB first
  int buffered = 0;
  size_t pos = 0;
  for (auto& value : out) {
    // Reads byte ceil((i+1)·N/8) - 1 at most, which is < packed.size() by the size check.
    for (; buffered < bits; buffered += 8) acc |= uint32_t(packed[pos++]) << buffered;
    value = static_cast<uint8_t>(acc & mask);
    acc >>= bits;
    buffered -= bits;
  }
}

}  // namespace kvstream::codec
