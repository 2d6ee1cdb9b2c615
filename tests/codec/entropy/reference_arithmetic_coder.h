// TEST ORACLE: a line-by-line transcription of the artifact's coder as docs/CACHEGEN.md §4.4 and §5.2
// write it (one bit per renormalisation step, a binary search per symbol). codec/entropy/arithmetic_coder.h
// must produce exactly the same bytes and symbols; tests/codec/entropy/test_ac_reference.cpp checks that.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/entropy/cdf.h"

namespace kvstream::codec::reference {

// MSB-first bit writer into a fixed buffer. Past `capacity` it keeps counting but stops writing,
// so the caller learns the size an overflowing stream would have had without any out-of-bounds write.
struct AcBitWriter {
  uint8_t* out;
  uint32_t capacity;
  uint32_t bytes = 0;
  uint32_t current = 0;
  int filled = 0;

  inline void put(uint32_t bit) {
    current = (current << 1) | bit;
    if (++filled == 8) {
      if (bytes < capacity) out[bytes] = static_cast<uint8_t>(current);
      ++bytes;
      current = 0;
      filled = 0;
    }
  }
  inline void put_with_pending(uint32_t bit, uint32_t& pending) {
    put(bit);
    for (; pending > 0; --pending) put(bit ^ 1u);
  }
  inline void pad_to_byte() {
    while (filled != 0) put(0);
  }
};

// Encodes symbols[0], symbols[stride], ... (n of them, each < m) and returns the stream length in
// bytes. A return value > capacity means the stream did not fit: bytes past capacity were not written.
inline uint32_t ac_encode_stream(const uint8_t* symbols, ptrdiff_t stride, uint32_t n, const uint16_t* cdf,
                                      int m, uint8_t* out, uint32_t capacity) {
  AcBitWriter writer{out, capacity};
  uint32_t low = 0, high = 0xFFFFFFFFu, pending = 0;
  for (uint32_t t = 0; t < n; ++t) {
    const int s = symbols[t * stride];
    const uint64_t span = uint64_t(high) - low + 1;
    high = static_cast<uint32_t>(uint64_t(low) + ((span * cdf_top(cdf, m, s)) >> 16) - 1);
    low = static_cast<uint32_t>(uint64_t(low) + ((span * cdf[s]) >> 16));
    for (;;) {
      if (high < 0x80000000u) {
        writer.put_with_pending(0, pending);
        low <<= 1;
        high = (high << 1) | 1u;
      } else if (low >= 0x80000000u) {
        writer.put_with_pending(1, pending);
        low <<= 1;
        high = (high << 1) | 1u;
      } else if (low >= 0x40000000u && high < 0xC0000000u) {
        ++pending;
        low = (low << 1) & 0x7FFFFFFFu;
        high = (high << 1) | 0x80000001u;
      } else {
        break;
      }
    }
  }
  ++pending;
  writer.put_with_pending(low < 0x40000000u ? 0u : 1u, pending);
  writer.pad_to_byte();
  return writer.bytes;
}

// MSB-first bit reader over [in, in + length); reads past the end return 0.
struct AcBitReader {
  const uint8_t* in;
  uint32_t length;
  uint64_t cursor = 0;  // in bits

  inline uint32_t next() {
    const uint64_t byte = cursor >> 3;
    const uint32_t bit = byte < length ? (in[byte] >> (7 - (cursor & 7))) & 1u : 0u;
    ++cursor;
    return bit;
  }
};

// Decodes n symbols from a stream of `length` bytes into symbols[0], symbols[stride], ...
// Never reads outside [in, in + length) and always writes symbols < m, whatever the input bytes.
inline void ac_decode_stream(const uint8_t* in, uint32_t length, uint32_t n, const uint16_t* cdf, int m,
                                  uint8_t* symbols, ptrdiff_t stride) {
  AcBitReader reader{in, length};
  uint32_t value = 0;
  for (int i = 0; i < 32; ++i) value = (value << 1) | reader.next();
  uint32_t low = 0, high = 0xFFFFFFFFu;
  for (uint32_t t = 0; t < n; ++t) {
    const uint64_t span = uint64_t(high) - low + 1;
    const uint64_t count = ((uint64_t(value) - low + 1) * 65536u - 1) / span;
    int lo = 0, hi = m - 1;  // largest s with cdf[s] <= count (cdf[0] = 0 <= count)
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (cdf[mid] <= count) lo = mid; else hi = mid - 1;
    }
    const int s = lo;
    symbols[t * stride] = static_cast<uint8_t>(s);
    if (t + 1 == n) break;  // no renormalisation after the last symbol
    high = static_cast<uint32_t>(uint64_t(low) + ((span * cdf_top(cdf, m, s)) >> 16) - 1);
    low = static_cast<uint32_t>(uint64_t(low) + ((span * cdf[s]) >> 16));
    for (;;) {
      if (low >= 0x80000000u || high < 0x80000000u) {
        low <<= 1;
        high = (high << 1) | 1u;
        value = (value << 1) | reader.next();
      } else if (low >= 0x40000000u && high < 0xC0000000u) {
        low = (low << 1) & 0x7FFFFFFFu;
        high = (high << 1) | 0x80000001u;
        value = ((value - 0x40000000u) << 1) | reader.next();
      } else {
        break;
      }
    }
  }
}

}  // namespace kvstream::codec
