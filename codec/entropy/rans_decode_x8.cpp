#include "codec/entropy/rans_decode_x8.h"

#include <immintrin.h>

#include <array>

namespace kvstream::codec {

namespace {

constexpr int kLanes = 8;

// For each refill mask, the word each lane takes: lane k with its bit set takes word
// popcount(mask & ((1 << k) - 1)) of the round's consecutive words.
struct RefillPermutations {
  alignas(32) std::array<std::array<uint32_t, kLanes>, 256> lane_word{};
  RefillPermutations() {
    for (uint32_t mask = 0; mask < 256; ++mask) {
      uint32_t taken = 0;
      for (int k = 0; k < kLanes; ++k)
        if (mask & (1u << k)) lane_word[mask][size_t(k)] = taken++;
    }
  }
};

const RefillPermutations& refill_permutations() {
  static const RefillPermutations table;
  return table;
}

// One round of the scalar decoder (rans_decode_group) for lanes 0..7 on channels c0..c0+7.
void scalar_round(uint32_t* x, const uint8_t* in, uint32_t length, uint32_t& pos, bool& overrun, int c0,
                  const uint16_t* cdf, const RansSymbolLookup* lookups, int m, uint8_t* symbols) {
  for (int k = 0; k < kLanes; ++k) {
    const int c = c0 + k;
    const int s = rans_decode_symbol(x[k], cdf + c * (m + 1), lookups[c], m);
    rans_refill(x[k], in, length, pos, overrun);
    symbols[k] = static_cast<uint8_t>(s);
  }
}

}  // namespace

bool rans_x8_available() {
  static const bool available = __builtin_cpu_supports("avx2");
  return available;
}

namespace {

// One group being decoded: its bytes, position, states and output.
struct GroupCursor {
  const uint8_t* in;
  uint32_t length, n, pos = 4u * kLanes;
  uint8_t* symbols;
  bool overrun = false, valid = true;
};

// Decodes up to two groups of one row (same CDF rows and lookups) round by round, alternating
// between them: each group's rounds form one dependency chain (gather, gather, multiply, refill,
// next round), so two groups give the core two chains to overlap.
template <int kGroups>
__attribute__((target("avx2"))) void decode_groups(GroupCursor* groups, int channels, const uint16_t* cdf,
                                                   const RansSymbolLookup* lookups, int m) {
  const auto& perms = refill_permutations();
  const auto* lookup_bytes = reinterpret_cast<const int*>(lookups);
  const auto* cdf_words = reinterpret_cast<const int*>(cdf);
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i low16 = _mm256_set1_epi32(0xFFFF), byte = _mm256_set1_epi32(0xFF);
  const __m256i symbol_bits = _mm256_set1_epi32(kLookupStep - 1), step_bit = _mm256_set1_epi32(kLookupStep);
  const __m256i scan_bit = _mm256_set1_epi32(kLookupScan), last_symbol = _mm256_set1_epi32(m - 1);
  const __m256i row_entries = _mm256_set1_epi32(m + 1), zero = _mm256_setzero_si256();
  // Bytes 0, 4, 8, 12 of each 128-bit half: the low byte of every 32-bit lane.
  const __m256i pack_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                              0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  alignas(32) uint32_t xs[kLanes];
  __m256i x[kGroups];
  uint32_t longest = 0;
  for (int g = 0; g < kGroups; ++g) {
    GroupCursor& group = groups[g];
    for (int k = 0; k < kLanes; ++k) {
      const uint8_t* p = group.in + 4 * k;
      xs[k] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
      group.valid = group.valid && xs[k] >= kRansLow;
    }
    x[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs));
    longest = group.valid && group.n > longest ? group.n : longest;
  }
  int c0 = 0;
  for (uint32_t base = 0; base < longest; base += kLanes) {
    const __m256i channel = _mm256_add_epi32(_mm256_set1_epi32(c0), iota);
    for (int g = 0; g < kGroups; ++g) {
      GroupCursor& group = groups[g];
      if (!group.valid || base >= group.n) continue;
      const __m256i slot = _mm256_and_si256(x[g], low16);
      const __m256i entry = _mm256_and_si256(
          _mm256_i32gather_epi32(lookup_bytes,
                                 _mm256_add_epi32(_mm256_slli_epi32(channel, 10), _mm256_srli_epi32(slot, 6)), 1),
          byte);
      if (!_mm256_testz_si256(entry, scan_bit) || group.pos + 16 > group.length) {  // the rare cases, scalar
        _mm256_store_si256(reinterpret_cast<__m256i*>(xs), x[g]);
        scalar_round(xs, group.in, group.length, group.pos, group.overrun, c0, cdf, lookups, m, group.symbols + base);
        x[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs));
        continue;
      }
      __m256i s = _mm256_and_si256(entry, symbol_bits);
      const __m256i index = _mm256_add_epi32(_mm256_mullo_epi32(channel, row_entries), s);
      const __m256i pair = _mm256_i32gather_epi32(cdf_words, index, 2);  // cdf[s] | cdf[s + 1] << 16
      // Step to s + 1 where the bucket holds one more symbol start and the slot lies at or past it.
      const __m256i step = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_srli_epi32(pair, 16), slot),
                                               _mm256_cmpeq_epi32(_mm256_and_si256(entry, step_bit), step_bit));
      s = _mm256_sub_epi32(s, step);  // step is -1 where taken
      const __m256i chosen = _mm256_testz_si256(step, step)
                                 ? pair
                                 : _mm256_i32gather_epi32(cdf_words, _mm256_sub_epi32(index, step), 2);
      const __m256i start = _mm256_and_si256(chosen, low16);
      const __m256i top = _mm256_sub_epi32(_mm256_srli_epi32(chosen, 16), _mm256_cmpeq_epi32(s, last_symbol));
      __m256i state = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(top, start), _mm256_srli_epi32(x[g], 16)),
                                       _mm256_sub_epi32(slot, start));
      const __m256i refill = _mm256_cmpeq_epi32(_mm256_srli_epi32(state, 16), zero);  // state < 2^16
      const auto mask = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(refill)));
      const __m256i words =
          _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(group.in + group.pos)));
      const __m256i lane_words = _mm256_permutevar8x32_epi32(
          words, _mm256_load_si256(reinterpret_cast<const __m256i*>(perms.lane_word[mask].data())));
      x[g] = _mm256_blendv_epi8(state, _mm256_or_si256(_mm256_slli_epi32(state, 16), lane_words), refill);
      group.pos += 2u * uint32_t(__builtin_popcount(mask));
      const __m256i packed = _mm256_shuffle_epi8(s, pack_bytes);
      const uint64_t eight = uint64_t(uint32_t(_mm256_extract_epi32(packed, 0))) |
                             uint64_t(uint32_t(_mm256_extract_epi32(packed, 4))) << 32;
      __builtin_memcpy(group.symbols + base, &eight, sizeof eight);
    }
    c0 += kLanes;
    if (c0 == channels) c0 = 0;
  }
  for (int g = 0; g < kGroups; ++g) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(xs), x[g]);
    GroupCursor& group = groups[g];
    group.valid = group.valid && !group.overrun && group.pos == group.length;
    for (const uint32_t state : xs) group.valid = group.valid && state == kRansLow;
  }
}

bool well_formed(uint32_t length) { return length >= 4u * kLanes && (length - 4u * kLanes) % 2 == 0; }

}  // namespace

bool rans_decode_group_x8(const uint8_t* in, uint32_t length, uint32_t n, int channels, const uint16_t* cdf,
                          const RansSymbolLookup* lookups, int m, uint8_t* symbols) {
  if (!well_formed(length)) return false;
  GroupCursor group{in, length, n, 4u * kLanes, symbols};
  decode_groups<1>(&group, channels, cdf, lookups, m);
  return group.valid;
}

bool rans_decode_group_pair_x8(const RansGroup& a, const RansGroup& b, int channels, const uint16_t* cdf,
                               const RansSymbolLookup* lookups, int m) {
  if (!well_formed(a.length) || !well_formed(b.length)) return false;
  GroupCursor groups[2] = {{a.in, a.length, a.n, 4u * kLanes, a.symbols}, {b.in, b.length, b.n, 4u * kLanes, b.symbols}};
  decode_groups<2>(groups, channels, cdf, lookups, m);
  return groups[0].valid && groups[1].valid;
}

}  // namespace kvstream::codec
