// rans_decode_group (rans_coder.h) with the eight states of a group in the lanes of AVX2 registers,
// for the default shape of a rANS group: 8 states, a multiple of 8 channels (then every round of 8
// symbols covers 8 consecutive channels). Each round gathers the 8 lookup entries and CDF pairs,
// updates the 8 states at once and refills the lanes that need a word from consecutive words in lane
// order (a permutation picked by the refill mask): exactly the scalar decoder's order, so both give
// the same symbols, states and verdict for any input, valid or not (a test). Rounds that a lookup
// bucket shared by several symbols, or the last 16 bytes of the group, would complicate run scalar.
// Rounds depend on each other (gather, gather, multiply, refill), so two independent groups are
// decoded together where possible.
#pragma once
#include <cstdint>

#include "codec/entropy/rans_coder.h"

namespace kvstream::codec {

// Whether this CPU runs the AVX2 path (checked once).
bool rans_x8_available();

// Same contract as rans_decode_group with states = 8 and channels % 8 == 0; `lookups` must be
// readable 4 bytes past its last entry (gathers read 32 bits at a byte offset).
bool rans_decode_group_x8(const uint8_t* in, uint32_t length, uint32_t n, int channels, const uint16_t* cdf,
                          const RansSymbolLookup* lookups, int m, uint8_t* symbols);

// Two groups with the same CDF rows (two sub-chunks of one row) decoded together, their rounds
// alternating so that the core overlaps two dependency chains; true when both decode to their end
// state (when false, decode them one by one to learn which is corrupt).
struct RansGroup {
  const uint8_t* in;
  uint32_t length, n;
  uint8_t* symbols;
};
bool rans_decode_group_pair_x8(const RansGroup& a, const RansGroup& b, int channels, const uint16_t* cdf,
                               const RansSymbolLookup* lookups, int m);

}  // namespace kvstream::codec
