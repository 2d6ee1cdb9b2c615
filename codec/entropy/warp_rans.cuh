// One rANS group decoded, or encoded, by one warp, a lane per state (rans_coder.h's layout), shared by
// the CacheGen kernels (codec/cachegen/gpu_decode.cu, gpu_encode.cu: a group per sub-chunk and row) and
// the transform kernels (codec/transform/gpu_transform_decode.cu, gpu_transform_encode.cu: a group per
// row). Symbol i of the group is decoded by state i mod N and uses the CDF row of its position c = i
// mod `period` in the group's cycle of rows (a channel for CacheGen, a component for the transform
// codec); `symbol_at(c, slot, cdf_row)` returns the symbol under `slot` and sets cdf_row to that row
// (by search_symbol or lookup_symbol: the CPU's answer).
// Lanes that need a word take consecutive words in lane order (a ballot and a prefix popcount),
// which is exactly the CPU decoder's state order. Every lane of the warp must call it.
#pragma once
#include <cstdint>

#include "codec/entropy/rans_coder.h"

namespace kvstream::codec {

// Returns true in every lane when the group is corrupt (too short, a state out of range, words
// missing or left over, final states other than L); the caller's length is >= 4N (checked on the host).
template <class SymbolAt>
__device__ bool warp_rans_decode_group(const uint8_t* in, uint32_t length, uint32_t n, int states, int period, int m,
                                       const SymbolAt& symbol_at, uint8_t* out) {
  const unsigned lane = threadIdx.x % 32;
  const bool has_state = lane < unsigned(states);
  uint32_t x = kRansLow;
  if (has_state) {
    const uint8_t* p = in + 4 * lane;
    x = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  bool bad = x < kRansLow;
  uint32_t pos = 4u * unsigned(states);
  // This lane's symbol of a round is i = base + lane, at cycle position i mod period, which advances
  // by N mod period per round.
  int c = int(lane % unsigned(period));
  const int c_step = states % period;
  for (uint32_t base = 0; base < n; base += unsigned(states)) {
    const uint32_t i = base + lane;
    bool refill = false;
    if (has_state && i < n) {
      const uint16_t* cdf_row = nullptr;
      const int s = symbol_at(c, x & 0xFFFFu, cdf_row);
      rans_decode_step(x, cdf_row, m, s);
      out[i] = static_cast<uint8_t>(s);
      refill = x < kRansLow;
    }
    const unsigned needing = __ballot_sync(0xFFFFFFFFu, refill);
    if (refill) {
      const uint32_t p = pos + 2u * unsigned(__popc(needing & ((1u << lane) - 1u)));
      const bool inside = p + 2 <= length;
      x = (x << 16) | (inside ? uint32_t(in[p]) | uint32_t(in[p + 1]) << 8 : 0u);
      bad |= !inside;
    }
    pos += 2u * unsigned(__popc(needing));
    c += c_step;
    if (c >= period) c -= period;
  }
  bad |= x != kRansLow || (lane == 0 && pos != length);
  return __any_sync(0xFFFFFFFFu, bad);
}

// Encodes symbols[0..n), symbol i under the CDF row cdf_row(i mod period), into slot[0..capacity)
// with capacity = rans_group_capacity(n, states): the CPU (rans_encode_group) codes symbols i = n-1
// .. 0, symbol i with state i mod N, each word written in front of the ones before; here a round
// codes symbols base .. base + N - 1 at once, lane k holding state k, and rans_round_word_position
// puts each word where the CPU would have (tests/codec/entropy/test_rans.cpp runs these rounds on the CPU).
// The group ends up at slot[head, capacity), the N states first; returns head in every lane.
template <class CdfRow>
__device__ uint32_t warp_rans_encode_group(const uint8_t* symbols, uint32_t n, int states, int period, int m,
                                           const CdfRow& cdf_row, uint8_t* slot) {
  const unsigned lane = threadIdx.x % 32, n_states = unsigned(states);
  uint32_t x = kRansLow, word = rans_group_capacity(n, states);  // word: where the last word written begins
  for (int64_t base = n == 0 ? -1 : int64_t((n - 1) / n_states * n_states); base >= 0; base -= n_states) {
    const uint64_t i = uint64_t(base) + lane;
    bool emit = false;
    uint16_t out = 0;
    if (lane < n_states && i < n) emit = rans_encode_symbol(x, cdf_row(int(i % unsigned(period))), m, symbols[i], out);
    const unsigned emitting = __ballot_sync(0xFFFFFFFFu, emit);
    if (emit) {
      const uint32_t at = rans_round_word_position(word, emitting, lane);
      slot[at] = static_cast<uint8_t>(out);
      slot[at + 1] = static_cast<uint8_t>(out >> 8);
    }
    word -= 2u * unsigned(__popc(emitting));
  }
  const uint32_t head = word - 4u * n_states;
  if (lane < n_states)
    for (int b = 0; b < 4; ++b) slot[head + 4 * lane + b] = static_cast<uint8_t>(x >> (8 * b));
  return head;
}

}  // namespace kvstream::codec
