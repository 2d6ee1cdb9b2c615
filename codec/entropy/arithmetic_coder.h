// The artifact's 32-bit binary arithmetic coder (docs/CACHEGEN.md §4.4 encoder, §5.2 decoder), one
// stream of n symbols at a time with one 16-bit CDF row (cdf.h). Witten–Neal–Cleary style: E1/E2
// renormalisation emits a settled top bit, E3 (straddling the middle) defers it as a pending bit.
//
// Invariants (state is uint32, shifts drop the top bit):
//   * low <= high always; after renormalisation high - low >= 2^30, so span >= 2^30 + 1 and every
//     symbol (frequency >= 1/65536) keeps a non-empty interval.
//   * Bits go out MSB-first, byte 0 first; the flush writes pending+1 bits and pads with zeros.
//   * The symbol count is not in the stream; the decoder is told n. Bits past the end read as 0.
// Renormalisation settles all leading bits that low and high share in one step (n = clz(low ^ high)),
// which is bit-identical to the spec's one-bit loop (tests/codec/entropy/reference_arithmetic_coder.h is that
// loop, kept as the test oracle). Both functions are per-thread code (KVSTREAM_HD) shared with CUDA.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/entropy/cdf.h"
#include "common/host_device.h"

namespace kvstream::codec {

KVSTREAM_HD int ac_clz(uint32_t x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __clz(x);
#else
  return __builtin_clz(x);  // GCC and Clang, also in nvcc's host pass (C++17: no std::countl_zero)
#endif
}

// Number of E3 steps due once low < 2^31 <= high: the run of positions below the top bit where low
// has a 1 and high a 0 (low = 0 1 1 ..., high = 1 0 0 ...). Bit 0 of the shifted word is 0, so the
// argument of clz always has a 1: the result is 0..31, and 0 when low < 2^30 or high >= 3 * 2^30.
KVSTREAM_HD int ac_e3_steps(uint32_t low, uint32_t high) { return ac_clz(~((low & ~high) << 1)); }

// MSB-first bit writer into a fixed buffer. Past `capacity` it keeps counting but stops writing,
// so the caller learns the size an overflowing stream would have had without any out-of-bounds write.
struct AcBitWriter {
  uint8_t* out;
  uint32_t capacity;
  uint32_t bytes = 0;
  uint64_t pending_bits = 0;  // the low `filled` bits are not yet written (filled < 8 between calls)
  int filled = 0;

  // Appends the low `count` bits of `bits` (1 <= count <= 32), most significant first.
  KVSTREAM_HD void put(uint32_t bits, int count) {
    pending_bits = (pending_bits << count) | (bits & ((uint64_t(1) << count) - 1));
    filled += count;
    while (filled >= 8) {
      filled -= 8;
      if (bytes < capacity) out[bytes] = static_cast<uint8_t>(pending_bits >> filled);
      ++bytes;
    }
  }
  KVSTREAM_HD void put_repeated(uint32_t bit, uint32_t count) {
    const uint32_t word = bit ? 0xFFFFFFFFu : 0u;
    for (; count >= 32; count -= 32) put(word, 32);
    if (count > 0) put(word, static_cast<int>(count));
  }
  KVSTREAM_HD void pad_to_byte() {
    if (filled > 0) put(0, 8 - filled);
  }
};

// Encodes symbols[0], symbols[stride], ... (n of them, each < m) and returns the stream length in
// bytes. A return value > capacity means the stream did not fit: bytes past capacity were not written.
KVSTREAM_HD uint32_t ac_encode_stream(const uint8_t* symbols, ptrdiff_t stride, uint32_t n, const uint16_t* cdf,
                                      int m, uint8_t* out, uint32_t capacity) {
  AcBitWriter writer{out, capacity};
  uint32_t low = 0, high = 0xFFFFFFFFu, pending = 0;
  for (uint32_t t = 0; t < n; ++t) {
    const int s = symbols[t * stride];
    const uint64_t span = uint64_t(high) - low + 1;
    high = static_cast<uint32_t>(uint64_t(low) + ((span * cdf_top(cdf, m, s)) >> 16) - 1);
    low = static_cast<uint32_t>(uint64_t(low) + ((span * cdf[s]) >> 16));
    // E1/E2: the n leading bits low and high share are settled. high - low >= 2^14 here (span > 2^30,
    // frequency >= 1/65536), so low ^ high != 0 and 1 <= n <= 18.
    if (const uint32_t diff = low ^ high; diff < 0x80000000u) {
      const int settled = ac_clz(diff);
      const uint32_t first = low >> 31;
      writer.put(first, 1);
      writer.put_repeated(first ^ 1u, pending);
      pending = 0;
      if (settled > 1) writer.put(low >> (32 - settled), settled - 1);  // the rest of the settled bits
      low <<= settled;
      high = (high << settled) | ((1u << settled) - 1);
    }
    // E3: low = 01..., high = 10...: defer the bit, once per straddling position. (No E1/E2 can
    // follow an E3 step: low < 2^31 <= high.)
    const int straddles = ac_e3_steps(low, high);
    pending += static_cast<uint32_t>(straddles);
    low = (low << straddles) & 0x7FFFFFFFu;
    high = (high << straddles) | 0x80000000u | ((1u << straddles) - 1);
  }
  const uint32_t last = low < 0x40000000u ? 0u : 1u;  // flush: pending + 1 bits pin the final interval
  writer.put(last, 1);
  writer.put_repeated(last ^ 1u, pending + 1);
  writer.pad_to_byte();
  return writer.bytes;
}

// One stream of a CacheGen chunk as the encoder stores it (codec/FORMAT.md §2): arithmetic coded
// only if strictly shorter than its n raw symbols (so <= 255 bytes), with trailing zero bytes dropped
// (the decoder reads zeros past a stream's end, as the artifact's decoder, which zero-fills each
// stream to 256 bytes); else the n raw symbols, code kRawStreamCode (255). Writes out[0..n) at most
// and returns the bytes; `code` is the LENS code. Per-thread code, the mirror of ac_decode_unit.
KVSTREAM_HD uint32_t ac_encode_unit(const uint8_t* symbols, ptrdiff_t stride, uint32_t n, const uint16_t* cdf, int m,
                                    uint8_t* out, uint8_t& code) {
  uint32_t length = ac_encode_stream(symbols, stride, n, cdf, m, out, n - 1);
  if (length < n) {
    while (length > 1 && out[length - 1] == 0) --length;
    code = static_cast<uint8_t>(length - 1);
    return length;
  }
  for (uint32_t t = 0; t < n; ++t) out[t] = symbols[t * stride];
  code = 255;
  return n;
}

// MSB-first bit reader over [in, in + length) through a 64-bit window; reads past the end return 0.
struct AcBitReader {
  const uint8_t* in;
  uint32_t length;
  uint64_t next_byte = 0;
  uint64_t window = 0;  // upcoming bits, left-aligned
  int available = 0;

  // The next `count` bits (0 <= count <= 32).
  KVSTREAM_HD uint32_t take(int count) {
    if (available < count) {
      for (; available <= 56; available += 8, ++next_byte)
        window |= uint64_t(next_byte < length ? in[next_byte] : 0) << (56 - available);
    }
    const auto bits = static_cast<uint32_t>((window >> 1) >> (63 - count));  // 0 bits when count == 0
    window <<= count;
    available -= count;
    return bits;
  }
};

using AcSymbolLookup = SymbolLookup<8>;

// Decoder state of one stream. next() decodes one symbol; it never reads outside the stream and
// always returns a symbol < m, whatever the input bytes (low/high evolve only through valid symbols,
// so the renormalisation invariant holds on garbage too).
struct AcDecoder {
  AcBitReader reader;
  uint32_t value;
  uint32_t low = 0, high = 0xFFFFFFFFu;

  KVSTREAM_HD AcDecoder(const uint8_t* in, uint32_t length) : reader{in, length}, value(reader.take(32)) {}

  // `renormalise` is false for the stream's last symbol (the artifact stops there).
  KVSTREAM_HD int next(const uint16_t* cdf, const AcSymbolLookup& lookup, int m, bool renormalise) {
    const uint64_t span = uint64_t(high) - low + 1;
    const uint64_t count = ((uint64_t(value) - low + 1) * 65536u - 1) / span;
    // s = largest symbol with cdf[s] <= count. count exceeds 65535 only on corrupt input; clamping
    // it keeps s = m - 1, as the spec's search would.
    const uint32_t key = count > 0xFFFFu ? 0xFFFFu : static_cast<uint32_t>(count);
    const int s = lookup_symbol(cdf, m, lookup, key);
    if (!renormalise) return s;
    high = static_cast<uint32_t>(uint64_t(low) + ((span * cdf_top(cdf, m, s)) >> 16) - 1);
    low = static_cast<uint32_t>(uint64_t(low) + ((span * cdf[s]) >> 16));
    // Branch-free renormalisation, the same steps as the encoder: E1/E2 shift out the bits low and
    // high share (none when their top bits differ), then E3 steps, each of which maps
    // value -> ((value - 2^30) << 1) | bit = ((value << 1) ^ 2^31) | bit, since value is between
    // low = 01... and high = 10...; k of them in a row give ((value << k) ^ 2^31) | k bits.
    const int settled = ac_clz(low ^ high);
    low <<= settled;
    high = (high << settled) | ((1u << settled) - 1);
    const int straddles = ac_e3_steps(low, high);
    low = (low << straddles) & 0x7FFFFFFFu;
    high = (high << straddles) | 0x80000000u | ((1u << straddles) - 1);
    const int shift = settled + straddles;  // <= 17: the interval is >= 2^14 wide before it
    value = ((value << shift) | reader.take(shift)) ^ (uint32_t(straddles != 0) << 31);
    return s;
  }
};

// Decodes n symbols from a stream of `length` bytes into symbols[0], symbols[stride], ...
KVSTREAM_HD void ac_decode_stream(const uint8_t* in, uint32_t length, uint32_t n, const uint16_t* cdf, int m,
                                  uint8_t* symbols, ptrdiff_t stride) {
  AcSymbolLookup lookup;
  build_symbol_lookup(cdf, m, lookup);
  AcDecoder decoder(in, length);
  for (uint32_t t = 0; t < n; ++t) symbols[t * stride] = static_cast<uint8_t>(decoder.next(cdf, lookup, m, t + 1 < n));
}

// One stream of a CacheGen chunk as LENS describes it (codec/FORMAT.md §2): `code` + 1 coded bytes,
// or n raw symbols when code is kRawStreamCode (255). Per-thread code: the CPU decoder calls it per
// stream, a GPU kernel once per thread.
KVSTREAM_HD void ac_decode_unit(const uint8_t* in, uint8_t code, uint32_t n, const uint16_t* cdf,
                                const AcSymbolLookup& lookup, int m, uint8_t* symbols, ptrdiff_t stride) {
  if (code == 255) {
    for (uint32_t t = 0; t < n; ++t) symbols[t * stride] = in[t];
    return;
  }
  AcDecoder decoder(in, uint32_t(code) + 1);
  for (uint32_t t = 0; t < n; ++t) symbols[t * stride] = static_cast<uint8_t>(decoder.next(cdf, lookup, m, t + 1 < n));
}

}  // namespace kvstream::codec
