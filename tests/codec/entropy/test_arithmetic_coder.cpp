// The 32-bit binary arithmetic coder (docs/CACHEGEN.md §4.4 encoder, §5.2 decoder) and the 16-bit CDF
// tables it codes with (§4.2): hand-derived bit vectors, size bounds against the ideal code length,
// the fixed-capacity overflow contract, seeded round trips and decoding of garbage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "codec/entropy/arithmetic_coder.h"
#include "codec/entropy/cdf.h"

namespace kvstream::codec {
namespace {

constexpr uint8_t kGuard = 0xA5;

// Encodes `symbols` (stride 1) into a buffer of `capacity` bytes followed by guard bytes; returns
// the whole buffer resized to the reported length when it fitted (and checks the guard bytes).
std::vector<uint8_t> encode(const std::vector<uint8_t>& symbols, const std::vector<uint16_t>& cdf, uint32_t capacity = 1024) {
  const int m = static_cast<int>(cdf.size()) - 1;
  std::vector<uint8_t> out(capacity + 64, kGuard);
  const uint32_t length =
      ac_encode_stream(symbols.data(), 1, static_cast<uint32_t>(symbols.size()), cdf.data(), m, out.data(), capacity);
  for (size_t i = capacity; i < out.size(); ++i) EXPECT_EQ(out[i], kGuard) << "guard byte " << i << " overwritten";
  EXPECT_LE(length, capacity) << "stream did not fit; use a larger capacity";
  out.resize(std::min(length, capacity));
  return out;
}

std::vector<uint8_t> decode(const std::vector<uint8_t>& stream, size_t n, const std::vector<uint16_t>& cdf) {
  std::vector<uint8_t> symbols(n, 0xEE);
  ac_decode_stream(stream.data(), static_cast<uint32_t>(stream.size()), static_cast<uint32_t>(n), cdf.data(),
                   static_cast<int>(cdf.size()) - 1, symbols.data(), 1);
  return symbols;
}

std::vector<uint16_t> cdf_from_counts(const std::vector<uint64_t>& counts) {
  std::vector<uint16_t> cdf(counts.size() + 1);
  build_cdf16(counts.data(), static_cast<int>(counts.size()), cdf.data());
  return cdf;
}

double ideal_bits(const std::vector<uint8_t>& symbols, const std::vector<uint16_t>& cdf) {
  double bits = 0;
  for (uint8_t s : symbols) bits += symbol_bits(cdf.data(), static_cast<int>(cdf.size()) - 1, s);
  return bits;
}

// Size bound (derivation): after renormalisation high - low >= 2^30, so with k = bits emitted or
// pending, the interval's true width is W = 2^-k (high - low + 1) / 2^32 with 1/4 < (high-low+1)/2^32 <= 1.
// Each symbol maps a span S >= 2^30 to floor(S c_hi / 2^16) - floor(S c_lo / 2^16) = S f / 2^16 ± 1,
// a relative change of at most 2^16 / 2^30 = 2^-14 (< 1e-4 bits per symbol). So
// ideal - 2 - 1e-4 n <= k <= ideal + 1e-4 n. The flush writes pending + 2 more bits than k (one
// decision bit, pending+1 follow bits), then pads up to 7 zero bits:
//     ideal - 1e-4 n  <=  8 · length  <=  ideal + 2 + 7 + 1e-4 n.
void expect_near_ideal(const std::vector<uint8_t>& symbols, const std::vector<uint16_t>& cdf, size_t length) {
  const double ideal = ideal_bits(symbols, cdf);
  const double slack = 1e-4 * static_cast<double>(symbols.size());
  EXPECT_GE(8.0 * double(length), ideal - slack) << "ideal " << ideal << " bits";
  EXPECT_LE(8.0 * double(length), ideal + 9.0 + slack) << "ideal " << ideal << " bits";
}

// --- build_cdf16 / cdf16_is_valid -----------------------------------------------------------

TEST(Cdf16, HandVectors) {
  // counts {1,0,3}, M=3: N=4, range 65535-3 = 65532; cum = {0,1,1,4}
  //   k=1: 65532·1/4 = 16383, +1 -> 16384;  k=2: 16383 +2 -> 16385;  k=3: 65532 +3 -> 65535
  EXPECT_EQ(cdf_from_counts({1, 0, 3}), std::vector<uint16_t>({0, 16384, 16385, 65535}));
  // counts {1,1}, M=2: range 65533; k=1: floor(65533/2) = 32766, +1 -> 32767
  EXPECT_EQ(cdf_from_counts({1, 1}), std::vector<uint16_t>({0, 32767, 65535}));
  // counts {0,0,5,0}, M=4: range 65531; cum = {0,0,0,5,5}: {0, 1, 2, 65531+3, 65531+4}
  EXPECT_EQ(cdf_from_counts({0, 0, 5, 0}), std::vector<uint16_t>({0, 1, 2, 65534, 65535}));
}

TEST(Cdf16, AllZeroCountsGiveTheEvenTable) {
  // total 0: base = range·k/M. M=3: 65532·k/3 = 0, 21844, 43688, 65532; plus k.
  EXPECT_EQ(cdf_from_counts({0, 0, 0}), std::vector<uint16_t>({0, 21845, 43690, 65535}));
  // M=4: 65531·k/4 = 0, 16382, 32765, 49148, 65531; plus k.
  EXPECT_EQ(cdf_from_counts({0, 0, 0, 0}), std::vector<uint16_t>({0, 16383, 32767, 49151, 65535}));
  for (int m = 2; m <= kMaxAlphabet; ++m) {
    const auto cdf = cdf_from_counts(std::vector<uint64_t>(size_t(m), 0));
    EXPECT_TRUE(cdf16_is_valid(cdf.data(), m)) << "M=" << m;
  }
}

TEST(Cdf16, BuiltTablesAreValidAndFrequenciesSumTo65536) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    const int m = std::uniform_int_distribution<int>(2, kMaxAlphabet)(rng);
    std::vector<uint64_t> counts(static_cast<size_t>(m));
    for (auto& c : counts) c = rng() % 3 == 0 ? 0 : rng() % 100000;
    const auto cdf = cdf_from_counts(counts);
    ASSERT_TRUE(cdf16_is_valid(cdf.data(), m)) << "trial " << trial;
    uint32_t sum = 0;
    for (int s = 0; s < m; ++s) sum += cdf_top(cdf.data(), m, s) - cdf[size_t(s)];
    ASSERT_EQ(sum, 65536u);
  }
}

TEST(Cdf16, Validity) {
  const std::vector<uint16_t> good = {0, 100, 101, 65535};
  EXPECT_TRUE(cdf16_is_valid(good.data(), 3));
  const std::vector<std::vector<uint16_t>> bad = {
      {1, 100, 101, 65535},   // does not start at 0
      {0, 100, 101, 65534},   // does not end at 65535
      {0, 100, 100, 65535},   // flat: a symbol of probability 0
      {0, 200, 100, 65535},   // decreasing
      {0, 65535, 65535, 65535},
  };
  for (const auto& cdf : bad) EXPECT_FALSE(cdf16_is_valid(cdf.data(), 3)) << cdf[0] << " " << cdf[1] << " " << cdf[2];
  EXPECT_DOUBLE_EQ(symbol_bits(good.data(), 3, 0), 16.0 - std::log2(100.0));
  EXPECT_DOUBLE_EQ(symbol_bits(good.data(), 3, 1), 16.0);                     // frequency 1
  EXPECT_DOUBLE_EQ(symbol_bits(good.data(), 3, 2), 16.0 - std::log2(65435.0));  // top of the last symbol is 65536
}

// --- hand-checked bit vectors ----------------------------------------------------------------

TEST(ArithmeticCoder, SingleSymbolHandVectors) {
  const std::vector<uint16_t> half = {0, 32768, 65535};  // M=2, each symbol p = 1/2
  // Symbol 0: span 2^32, c_lo 0, c_hi 32768 -> high = 2^31 - 1, low = 0.
  //   high < 2^31: emit 0; low = 0, high = 0xFFFFFFFF; stop (low < 2^30, high >= 2^31).
  //   flush: pending 1, low < 2^30 -> emit 0 then one 1.  bits 0,0,1 + padding = 0b00100000.
  EXPECT_EQ(encode({0}, half), std::vector<uint8_t>({0x20}));
  // Symbol 1: c_lo 32768, c_hi 65536 -> low = 2^31, high = 0xFFFFFFFF.
  //   low >= 2^31: emit 1; low = 0, high = 0xFFFFFFFF.  flush 0,1.  bits 1,0,1 = 0b10100000.
  EXPECT_EQ(encode({1}, half), std::vector<uint8_t>({0xA0}));
  // 0 then 1: 0 | 1 | flush 0,1 = 0b01010000.
  EXPECT_EQ(encode({0, 1}, half), std::vector<uint8_t>({0x50}));

  // M=3 {0, 16384, 49152, 65535}: symbol 1 covers [1/4, 3/4), which straddles the middle (E3).
  const std::vector<uint16_t> middle = {0, 16384, 49152, 65535};
  // Symbol 1: low = 0x40000000, high = 0xBFFFFFFF -> E3: pending 1, low = 0, high = 0xFFFFFFFF.
  //   flush: pending 2, low < 2^30 -> emit 0 then 1,1.  bits 0,1,1 = 0b01100000.
  EXPECT_EQ(encode({1}, middle), std::vector<uint8_t>({0x60}));
  // 1,1: two E3 steps, pending 3 at the flush: 0,1,1,1 = 0b01110000.
  EXPECT_EQ(encode({1, 1}, middle), std::vector<uint8_t>({0x70}));
  // 1,0: E3 (pending 1); symbol 0 gives high = 0x3FFFFFFF: emit 0 + pending 1 -> 0,1; high =
  //   0x7FFFFFFF: emit 0; then flush 0,1.  bits 0,1,0,0,1 = 0b01001000.
  EXPECT_EQ(encode({1, 0}, middle), std::vector<uint8_t>({0x48}));
  // 2: low = 0xC0000000, high = 0xFFFFFFFF: emit 1 (low -> 0x80000000), emit 1 (low -> 0); flush 0,1.
  EXPECT_EQ(encode({2}, middle), std::vector<uint8_t>({0xD0}));

  // Each decodes back; e.g. 0x60: value = 0x60000000, count = ((0x60000000 + 1)·65536 - 1) / 2^32
  // = 0x6000 = 24576, and cdf[1] = 16384 <= 24576 < 49152 -> symbol 1.
  for (const auto& [symbols, cdf] : std::vector<std::pair<std::vector<uint8_t>, std::vector<uint16_t>>>{
           {{0}, half}, {{1}, half}, {{0, 1}, half}, {{1}, middle}, {{1, 1}, middle}, {{1, 0}, middle}, {{2}, middle}})
    EXPECT_EQ(decode(encode(symbols, cdf), symbols.size(), cdf), symbols);
}

TEST(ArithmeticCoder, DecoderReadsPastTheEndAsZeroBits) {
  // 0x20 alone decodes symbol 0 under the half table; so does 0x20 followed by explicit zero bytes.
  const std::vector<uint16_t> half = {0, 32768, 65535};
  EXPECT_EQ(decode({0x20}, 1, half), std::vector<uint8_t>({0}));
  EXPECT_EQ(decode({0x20, 0, 0, 0, 0}, 1, half), std::vector<uint8_t>({0}));
  // A zero-length stream is value 0: symbol 0 every time (cdf[0] = 0 <= count 0).
  EXPECT_EQ(decode({}, 5, half), std::vector<uint8_t>(5, 0));
}

TEST(ArithmeticCoder, SingleSymbolStream) {
  const auto cdf = cdf_from_counts({3, 5, 0, 9, 1});
  for (uint8_t s = 0; s < 5; ++s) {
    const auto stream = encode({s}, cdf);
    ASSERT_GE(stream.size(), 1u);
    EXPECT_EQ(decode(stream, 1, cdf), std::vector<uint8_t>({s}));
    expect_near_ideal({s}, cdf, stream.size());
  }
}

TEST(ArithmeticCoder, EveryStrideRoundTrips) {
  // Symbols interleaved with stride 3 (the codec's channel stride); only every third byte is coded.
  const auto cdf = cdf_from_counts({5, 1, 1, 7, 2, 0, 4});
  std::vector<uint8_t> strided(3 * 50, 0xCC);
  for (size_t t = 0; t < 50; ++t) strided[3 * t] = static_cast<uint8_t>((t * 5) % 7);
  std::vector<uint8_t> out(256);
  const uint32_t length = ac_encode_stream(strided.data(), 3, 50, cdf.data(), 7, out.data(), 256);
  ASSERT_LE(length, 256u);
  std::vector<uint8_t> decoded(3 * 50, 0xCC);
  ac_decode_stream(out.data(), length, 50, cdf.data(), 7, decoded.data(), 3);
  EXPECT_EQ(decoded, strided);  // also: the bytes between the strided slots are untouched
}

TEST(ArithmeticCoder, EverySymbolOfTheAlphabet) {
  for (int m : {2, 3, 16, 32, 33, 47, 64}) {
    std::vector<uint64_t> counts(static_cast<size_t>(m));
    for (int k = 0; k < m; ++k) counts[size_t(k)] = uint64_t(k % 5) * 10;  // some symbols never counted
    const auto cdf = cdf_from_counts(counts);
    std::vector<uint8_t> symbols;
    for (int rep = 0; rep < 2; ++rep)
      for (int s = 0; s < m; ++s) symbols.push_back(static_cast<uint8_t>(rep ? m - 1 - s : s));
    const auto stream = encode(symbols, cdf);
    EXPECT_EQ(decode(stream, symbols.size(), cdf), symbols) << "M=" << m;
    expect_near_ideal(symbols, cdf, stream.size());
  }
}

TEST(ArithmeticCoder, SkewedStreamIsCloseToItsEntropy) {
  // p(0) ~ 0.985: a 256-symbol stream costs a few dozen bits, far below one byte per symbol.
  const auto cdf = cdf_from_counts({1000, 10, 5, 1});
  std::mt19937 rng(3);
  std::discrete_distribution<int> draw({1000, 10, 5, 1});
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint8_t> symbols(256);
    for (auto& s : symbols) s = static_cast<uint8_t>(draw(rng));
    const auto stream = encode(symbols, cdf);
    EXPECT_EQ(decode(stream, symbols.size(), cdf), symbols);
    expect_near_ideal(symbols, cdf, stream.size());
    EXPECT_LT(stream.size(), 40u);
  }
  // All 256 symbols the likeliest one: ideal = 256·(16 - log2(cdf[1])) ~ 5.6 bits.
  const std::vector<uint8_t> zeros(256, 0);
  const auto stream = encode(zeros, cdf);
  expect_near_ideal(zeros, cdf, stream.size());
  EXPECT_LE(stream.size(), 2u);
  EXPECT_EQ(decode(stream, 256, cdf), zeros);
}

TEST(ArithmeticCoder, UniformWorstCaseFitsIn256Bytes) {
  // 256 uniform symbols over the even M=64 table: 6 bits each up to 2^-16 rounding, so 192 bytes + flush.
  const auto cdf = cdf_from_counts(std::vector<uint64_t>(64, 0));
  std::mt19937 rng(17);
  std::vector<uint8_t> symbols(256);
  for (auto& s : symbols) s = static_cast<uint8_t>(rng() % 64);
  const auto stream = encode(symbols, cdf, 256);
  EXPECT_GE(stream.size(), 192u);
  EXPECT_LE(stream.size(), 194u);
  expect_near_ideal(symbols, cdf, stream.size());
  EXPECT_EQ(decode(stream, symbols.size(), cdf), symbols);
}

TEST(ArithmeticCoder, OverflowingStreamReportsItsSizeAndWritesNothingPastCapacity) {
  // Symbol 0 has frequency 1 (p = 1/65536, 16 bits): 256 of them need 4096 bits = 512 bytes (+1 flush byte).
  const std::vector<uint16_t> cdf = {0, 1, 65535};
  const std::vector<uint8_t> symbols(256, 0);
  std::vector<uint8_t> small(256 + 64, kGuard);
  const uint32_t length = ac_encode_stream(symbols.data(), 1, 256, cdf.data(), 2, small.data(), 256);
  EXPECT_GT(length, 256u);
  EXPECT_GE(length, 512u);
  EXPECT_LE(length, 513u);
  for (size_t i = 256; i < small.size(); ++i) ASSERT_EQ(small[i], kGuard) << "byte " << i << " written past capacity";
  // The bytes that were written are the prefix of the full stream, and the full stream decodes.
  const auto full = encode(symbols, cdf, 1024);
  ASSERT_EQ(full.size(), length);
  EXPECT_TRUE(std::equal(small.begin(), small.begin() + 256, full.begin()));
  EXPECT_EQ(decode(full, 256, cdf), symbols);
  // Capacity 0 writes nothing at all but still counts.
  std::vector<uint8_t> none(8, kGuard);
  EXPECT_EQ(ac_encode_stream(symbols.data(), 1, 256, cdf.data(), 2, none.data(), 0), length);
  EXPECT_EQ(none, std::vector<uint8_t>(8, kGuard));
}

TEST(ArithmeticCoder, RandomRoundTrips) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 3000; ++trial) {
    const int m = std::uniform_int_distribution<int>(2, kMaxAlphabet)(rng);
    const size_t n = std::uniform_int_distribution<size_t>(1, 256)(rng);
    std::vector<uint64_t> counts(static_cast<size_t>(m));
    const int shape = trial % 3;  // 0: random counts, 1: peaked, 2: sparse with many unseen symbols
    for (int k = 0; k < m; ++k)
      counts[size_t(k)] = shape == 0 ? rng() % 1000 : shape == 1 ? uint64_t(1) << std::min(k, 20) : (rng() % 4 == 0 ? rng() % 50 : 0);
    const auto cdf = cdf_from_counts(counts);
    std::vector<uint8_t> symbols(n);
    const bool from_model = trial % 2 == 0 && std::accumulate(counts.begin(), counts.end(), uint64_t(0)) > 0;
    if (from_model) {
      std::discrete_distribution<int> draw(counts.begin(), counts.end());
      for (auto& s : symbols) s = static_cast<uint8_t>(draw(rng));
    } else {
      for (auto& s : symbols) s = static_cast<uint8_t>(rng() % uint32_t(m));  // includes improbable symbols
    }
    const auto stream = encode(symbols, cdf, 1024);  // 256 symbols x 16 bits = 512 bytes at most, + 1
    ASSERT_EQ(decode(stream, n, cdf), symbols) << "trial " << trial << " M=" << m << " n=" << n;
    expect_near_ideal(symbols, cdf, stream.size());
    if (HasFailure()) return;
  }
}

TEST(ArithmeticCoder, GarbageNeverDecodesOutsideTheAlphabet) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 3000; ++trial) {
    const int m = std::uniform_int_distribution<int>(2, kMaxAlphabet)(rng);
    std::vector<uint64_t> counts(static_cast<size_t>(m));
    for (auto& c : counts) c = rng() % 2 ? rng() % 5000 : 0;
    const auto cdf = cdf_from_counts(counts);
    std::vector<uint8_t> garbage(rng() % 300);
    for (auto& b : garbage) b = static_cast<uint8_t>(trial % 5 == 0 ? 0xFF : rng());  // all-ones is the extreme
    const size_t n = std::uniform_int_distribution<size_t>(1, 256)(rng);
    for (uint8_t s : decode(garbage, n, cdf)) ASSERT_LT(int(s), m) << "trial " << trial;
  }
}

}  // namespace
}  // namespace kvstream::codec
