// 16-bit cumulative frequency tables, the CacheGen way (docs/CACHEGEN.md §4.2, kernel `calculate_cdf`).
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

#include "common/host_device.h"

namespace kvstream::codec {

inline constexpr int kMaxAlphabet = 64;  // M <= 64: fits the GPU decoder's shared-memory tables

// Branch-free: every table has cdf[m] = 65535 (built so, and checked when read), so top(m-1) = cdf[m] + 1.
KVSTREAM_HD uint32_t cdf_top(const uint16_t* cdf, int m, int s) { return uint32_t(cdf[s + 1]) + uint32_t(s == m - 1); }

// counts[0..m-1] -> cdf[0..m]. An all-zero count vector gives the uniform-ish "+k" table. Per-thread
// code: the GPU encoder builds one row per thread with 32-bit counts.
template <class Count>
KVSTREAM_HD void build_cdf16(const Count* counts, int m, uint16_t* cdf) {
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

// Coarse slot -> symbol lookup for one CDF row, in 2^B buckets of w = 2^(16-B) counts: entry j holds
// the symbol s whose interval contains the bucket's first count j·w, plus kLookupStep when exactly one
// other symbol starts inside the bucket (then the answer is s or s + 1: one branch-free compare) or
// kLookupScan when several do (only never- or rarely-seen symbols are that narrow: a short scan).
// More buckets mean fewer compares for a larger table: the AC uses 2^8, rANS 2^10.
inline constexpr uint8_t kLookupStep = 0x40;  // symbols are < 64 (kMaxAlphabet): the top two bits are free
inline constexpr uint8_t kLookupScan = 0x80;

template <int kBucketBits>
struct SymbolLookup {
  static constexpr int kShift = 16 - kBucketBits;
  uint8_t entry[1 << kBucketBits];
};

// Bucket j starts inside symbol s's interval iff ceil(cdf[s] / w) <= j < ceil(top(s) / w), so each
// symbol fills a run of buckets; a symbol s >= 1 that starts past the first count of its bucket
// marks that bucket (a step, then a scan). Work: 2^B byte stores and m steps, no search per bucket.
template <int B>
KVSTREAM_HD void build_symbol_lookup(const uint16_t* cdf, int m, SymbolLookup<B>& lookup) {
  constexpr int shift = SymbolLookup<B>::kShift;
  constexpr uint32_t mask = (1u << shift) - 1;
  for (int s = 0; s < m; ++s) {
    const uint32_t first = (uint32_t(cdf[s]) + mask) >> shift, end = (cdf_top(cdf, m, s) + mask) >> shift;
    for (uint32_t j = first; j < end; ++j) lookup.entry[j] = static_cast<uint8_t>(s);
  }
  for (int s = 1; s < m; ++s)
    if (cdf[s] & mask) {
      uint8_t& entry = lookup.entry[cdf[s] >> shift];
      entry |= (entry & kLookupStep) ? kLookupScan : kLookupStep;
    }
}

// The largest symbol s with cdf[s] <= key (key <= 0xFFFF): always < m.
template <int B>
KVSTREAM_HD int lookup_symbol(const uint16_t* cdf, int m, const SymbolLookup<B>& lookup, uint32_t key) {
  const uint8_t entry = lookup.entry[key >> SymbolLookup<B>::kShift];
  int s = entry & (kLookupStep - 1);
  if (entry & kLookupScan) {
    while (s + 1 < m && cdf[s + 1] <= key) ++s;
    return s;
  }
  // With the step flag another symbol starts in the bucket, so s + 1 < m and cdf[s + 1] exists.
  return s + int((entry & kLookupStep) != 0 && cdf[s + 1] <= key);
}

// The same answer as lookup_symbol without a table: the largest symbol s < m with cdf[s] <= key, by
// bisection (ceil(log2 m) steps). Needs a strictly increasing cdf with cdf[0] = 0 (cdf16_is_valid).
// The GPU rANS decoder uses it on CDF rows staged in shared memory, where 2^B-byte tables do not fit.
KVSTREAM_HD int search_symbol(const uint16_t* cdf, int m, uint32_t key) {
  int step = 1;  // the largest power of two below m (1 for m <= 2)
  while (2 * step < m) step *= 2;
  // Invariant: cdf[s] <= key, and the answer lies in [s, s + 2·step).
  int s = 0;
  for (; step > 0; step /= 2)
    if (s + step < m && cdf[s + step] <= key) s += step;
  return s;
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
