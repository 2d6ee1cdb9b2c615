#include "codec/entropy/rans_decode_x8.h"

#include <immintrin.h>

#include <array>

namespace kvstream::codec {

namespace {

constexpr int kLanes = 8;
constexpr int kBucketBits = 16 - RansSymbolLookup::kShift;  // a lookup is 2^kBucketBits bytes

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

// One group being decoded: its bytes and rows, position, channel of lane 0, and verdict.
struct GroupCursor {
  RansGroup group;
  uint32_t pos = 4u * kLanes;
  int c0 = 0;
  bool overrun = false, valid = true;
};

// One round of the scalar decoder (rans_decode_group) for lanes 0..7 of a group.
void scalar_round(uint32_t* x, GroupCursor& cursor, int m, uint8_t* symbols) {
  const RansGroup& g = cursor.group;
  for (int k = 0; k < kLanes; ++k) {
    const int c = cursor.c0 + k;
    const int s = rans_decode_symbol(x[k], g.cdf + c * (m + 1), g.lookups[c], m);
    rans_refill(x[k], g.in, g.length, cursor.pos, cursor.overrun);
    symbols[k] = static_cast<uint8_t>(s);
  }
}

bool well_formed(uint32_t length) { return length >= 4u * kLanes && (length - 4u * kLanes) % 2 == 0; }

// Decodes kGroups groups round by round, alternating between them: each group's rounds form one
// dependency chain (gather, gather, multiply, refill, next round), so several groups give the core
// independent chains to overlap.
template <int kGroups>
__attribute__((target("avx2"))) void decode_groups(GroupCursor* cursors, int m) {
  const auto& perms = refill_permutations();
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
    GroupCursor& cursor = cursors[g];
    for (int k = 0; k < kLanes; ++k) {
      const uint8_t* p = cursor.group.in + 4 * k;
      xs[k] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
      cursor.valid = cursor.valid && xs[k] >= kRansLow;
    }
    x[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs));
    longest = cursor.valid && cursor.group.n > longest ? cursor.group.n : longest;
  }
  for (uint32_t base = 0; base < longest; base += kLanes) {
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
      GroupCursor& cursor = cursors[g];
      const RansGroup& group = cursor.group;
      if (!cursor.valid || base >= group.n) continue;
      const __m256i channel = _mm256_add_epi32(_mm256_set1_epi32(cursor.c0), iota);
      const __m256i slot = _mm256_and_si256(x[g], low16);
      const __m256i entry = _mm256_and_si256(
          _mm256_i32gather_epi32(reinterpret_cast<const int*>(group.lookups),
                                 _mm256_add_epi32(_mm256_slli_epi32(channel, kBucketBits),
                                                  _mm256_srli_epi32(slot, RansSymbolLookup::kShift)),
                                 1),
          byte);
      if (!_mm256_testz_si256(entry, scan_bit) || cursor.pos + 16 > group.length) {  // the rare cases, scalar
        _mm256_store_si256(reinterpret_cast<__m256i*>(xs), x[g]);
        scalar_round(xs, cursor, m, group.symbols + base);
        x[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xs));
      } else {
        const auto* cdf_words = reinterpret_cast<const int*>(group.cdf);
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
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(group.in + cursor.pos)));
        const __m256i lane_words = _mm256_permutevar8x32_epi32(
            words, _mm256_load_si256(reinterpret_cast<const __m256i*>(perms.lane_word[mask].data())));
        x[g] = _mm256_blendv_epi8(state, _mm256_or_si256(_mm256_slli_epi32(state, 16), lane_words), refill);
        cursor.pos += 2u * uint32_t(__builtin_popcount(mask));
        const __m256i packed = _mm256_shuffle_epi8(s, pack_bytes);
        const uint64_t eight = uint64_t(uint32_t(_mm256_extract_epi32(packed, 0))) |
                               uint64_t(uint32_t(_mm256_extract_epi32(packed, 4))) << 32;
        __builtin_memcpy(group.symbols + base, &eight, sizeof eight);
      }
      cursor.c0 += kLanes;
      if (cursor.c0 == group.channels) cursor.c0 = 0;
    }
  }
  for (int g = 0; g < kGroups; ++g) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(xs), x[g]);
    GroupCursor& cursor = cursors[g];
    cursor.valid = cursor.valid && !cursor.overrun && cursor.pos == cursor.group.length;
    for (const uint32_t state : xs) cursor.valid = cursor.valid && state == kRansLow;
  }
}

}  // namespace

bool rans_x8_available() {
  static const bool available = __builtin_cpu_supports("avx2");
  return available;
}

uint32_t rans_decode_groups_x8(const RansGroup* groups, int count, int m) {
  GroupCursor cursors[kRansX8MaxGroups];
  for (int g = 0; g < count; ++g) {
    cursors[g].group = groups[g];
    cursors[g].valid = well_formed(groups[g].length);
  }
  switch (count) {
    case 1: decode_groups<1>(cursors, m); break;
    case 2: decode_groups<2>(cursors, m); break;
    case 3: decode_groups<3>(cursors, m); break;
    case 4: decode_groups<4>(cursors, m); break;
    default: return 0;
  }
  uint32_t valid = 0;
  for (int g = 0; g < count; ++g) valid |= uint32_t(cursors[g].valid) << g;
  return valid;
}

}  // namespace kvstream::codec
