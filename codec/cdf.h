// 16-bit cumulative frequency tables, the CacheGen way (CACHEGEN.md §4.2, kernel `calculate_cdf`).
//
// For an alphabet of M symbols with counts n[k] (N = sum n[k] > 0):
//     cdf[k] = floor((65535 - M) * cum[k] / N) + k,   k = 0..M,   cum[k] = n[0] + ... + n[k-1]
// so cdf[0] = 0, cdf[M] = 65535, and the "+k" makes the table strictly increasing: every symbol, even
// one never seen, has probability >= 1/65536. The coder treats the top of the last symbol (M-1) as
// 65536, so the frequencies f[s] = top(s) - cdf[s] sum to exactly 2^16.
// Counts are 64-bit here (the artifact's uint16 counters limit a chunk to 65,535 tokens; we do not).
#pragma once
#include <cmath>
#include <cstdint>

#include "host_device.h"

namespace kvstream::codec {

inline constexpr int kMaxAlphabet = 64;  // M <= 64: fits the GPU decoder's shared-memory tables

KVSTREAM_HD uint32_t cdf_top(const uint16_t* cdf, int m, int s) { return s == m - 1 ? 0x10000u : cdf[s + 1]; }

// counts[0..m-1] -> cdf[0..m]. An all-zero count vector gives the uniform-ish "+k" table.
inline void build_cdf16(const uint64_t* counts, int m, uint16_t* cdf) {
  uint64_t total = 0;
  for (int k = 0; k < m; ++k) total += counts[k];
  const uint64_t range = 65535u - static_cast<uint64_t>(m);
  uint64_t cum = 0;
  for (int k = 0; k <= m; ++k) {
    // (range * cum) fits in 64 bits while cum < 2^47, i.e. for any realistic profiling corpus.
    const uint64_t base = total == 0 ? (range * k) / m : (range * cum) / total;
    cdf[k] = static_cast<uint16_t>(base + static_cast<uint64_t>(k));
    if (k < m) cum += counts[k];
  }
}

// A table read from a bitstream is usable iff it is strictly increasing from 0 to 65535 (with top(M-1) = 65536).
inline bool cdf16_is_valid(const uint16_t* cdf, int m) {
  if (cdf[0] != 0 || cdf[m] != 65535) return false;
  for (int k = 0; k < m; ++k)
    if (cdf[k] >= cdf[k + 1]) return false;
  return true;
}

// Information content of symbol s under the table, in bits (for the ideal-size comparison).
inline double symbol_bits(const uint16_t* cdf, int m, int s) {
  return 16.0 - std::log2(static_cast<double>(cdf_top(cdf, m, s) - cdf[s]));
}

}  // namespace kvstream::codec
