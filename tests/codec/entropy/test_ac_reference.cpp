// The optimised arithmetic coder (codec/entropy/arithmetic_coder.h: multi-bit renormalisation, lookup-table
// symbol search) must be bit-identical to the spec-literal reference coder, in both directions.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "codec/entropy/arithmetic_coder.h"
#include "tests/codec/entropy/reference_arithmetic_coder.h"

namespace kvstream::codec {
namespace {

// A random strictly increasing 16-bit CDF over m symbols, skewed like real KV histograms.
std::vector<uint16_t> random_cdf(std::mt19937& rng, int m) {
  std::vector<uint64_t> counts(static_cast<size_t>(m));
  std::geometric_distribution<int> tail(0.3);
  for (auto& c : counts) c = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 0 : uint64_t(tail(rng)) * 17 + 1;
  std::vector<uint16_t> cdf(static_cast<size_t>(m) + 1);
  build_cdf16(counts.data(), m, cdf.data());
  return cdf;
}

std::vector<uint8_t> random_symbols(std::mt19937& rng, const std::vector<uint16_t>& cdf, int m, uint32_t n) {
  std::vector<uint8_t> symbols(n);
  std::uniform_int_distribution<uint32_t> slot(0, 65535);
  for (auto& s : symbols) {  // draw from the table's own distribution, so streams are near-typical
    const uint32_t u = slot(rng);
    int k = 0;
    while (k + 1 < m && cdf[static_cast<size_t>(k) + 1] <= u) ++k;
    s = static_cast<uint8_t>(k);
  }
  return symbols;
}

TEST(ArithmeticCoderReference, OptimisedCoderIsBitIdenticalToTheSpecTranscription) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 3000; ++trial) {
    const int m = std::uniform_int_distribution<int>(2, 64)(rng);
    const auto n = std::uniform_int_distribution<uint32_t>(1, 256)(rng);
    const auto cdf = random_cdf(rng, m);
    auto symbols = random_symbols(rng, cdf, m, n);
    if (trial % 10 == 0)  // some streams full of improbable symbols, which overflow small buffers
      for (auto& s : symbols) s = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, m - 1)(rng));

    std::vector<uint8_t> fast(600, 0xAB), slow(600, 0xAB);
    const uint32_t fast_len = ac_encode_stream(symbols.data(), 1, n, cdf.data(), m, fast.data(), 600);
    const uint32_t slow_len = reference::ac_encode_stream(symbols.data(), 1, n, cdf.data(), m, slow.data(), 600);
    ASSERT_EQ(fast_len, slow_len) << "trial " << trial;
    ASSERT_EQ(fast, slow) << "trial " << trial;

    std::vector<uint8_t> decoded_fast(n), decoded_slow(n);
    ac_decode_stream(fast.data(), fast_len, n, cdf.data(), m, decoded_fast.data(), 1);
    reference::ac_decode_stream(fast.data(), fast_len, n, cdf.data(), m, decoded_slow.data(), 1);
    ASSERT_EQ(decoded_fast, symbols) << "trial " << trial;
    ASSERT_EQ(decoded_slow, symbols) << "trial " << trial;
  }
}

TEST(ArithmeticCoderReference, GarbageDecodesToTheSameValidSymbolsAsTheReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const int m = std::uniform_int_distribution<int>(2, 64)(rng);
    const auto cdf = random_cdf(rng, m);
    std::vector<uint8_t> garbage(std::uniform_int_distribution<size_t>(1, 64)(rng));
    for (auto& b : garbage) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> fast(256), slow(256);
    ac_decode_stream(garbage.data(), static_cast<uint32_t>(garbage.size()), 256, cdf.data(), m, fast.data(), 1);
    reference::ac_decode_stream(garbage.data(), static_cast<uint32_t>(garbage.size()), 256, cdf.data(), m, slow.data(), 1);
    for (uint8_t s : fast) ASSERT_LT(s, m);
    ASSERT_EQ(fast, slow) << "trial " << trial;
  }
}

}  // namespace
}  // namespace kvstream::codec
