// rans_decode_group (rans_coder.h) with the eight states of a group in the lanes of AVX2 registers,
// for the default shape of a rANS group: 8 states, a multiple of 8 channels (then every round of 8
// symbols covers 8 consecutive channels). Each round gathers the 8 lookup entries and CDF pairs,
// updates the 8 states at once and refills the lanes that need a word from consecutive words in lane
// order (a permutation picked by the refill mask): exactly the scalar decoder's order, so both give
// the same symbols, states and verdict for any input, valid or not (a test). Rounds that a lookup
// bucket shared by several symbols, or the last 16 bytes of the group, would complicate run scalar.
// A round is one dependency chain (gather, gather, multiply, refill, next round), so up to
// kRansX8MaxGroups independent groups are decoded together, their rounds alternating, for the core
// to overlap their chains.
#pragma once
#include <cstdint>

#include "codec/entropy/rans_coder.h"

namespace kvstream::codec {

// Whether this CPU runs the AVX2 path (checked once).
bool rans_x8_available();

inline constexpr int kRansX8MaxGroups = 4;

// One 8-state group: what rans_decode_group takes, with `channels` a multiple of 8 and `lookups`
// readable 4 bytes past its last entry (gathers read 32 bits at a byte offset).
struct RansGroup {
  const uint8_t* in;
  uint32_t length, n;
  int channels;
  const uint16_t* cdf;
  const RansSymbolLookup* lookups;
  uint8_t* symbols;
};

// Decodes groups[0..count) (1 <= count <= kRansX8MaxGroups, each with its own rows, the same
// alphabet m); bit g of the result is set when group g decoded to its end state, i.e. when
// rans_decode_group would have returned true for it.
uint32_t rans_decode_groups_x8(const RansGroup* groups, int count, int m);

}  // namespace kvstream::codec
