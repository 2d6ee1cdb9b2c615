// Interleaved rANS over the CacheGen probability model (docs/CACHEGEN.md §9; ryg_rans' 32-bit state with
// 16-bit words). The CDF rows of cdf.h total exactly 2^16, so they are used as they are: symbol s has
// start = cdf[s] and freq = top(s) - cdf[s] >= 1 out of 2^16.
//
// Invariants (L = 2^16):
//   * Between symbols every state x lies in [L, 2^32).
//   * Encoding s: if x >= freq << 16, the low 16 bits go out as one word and x >>= 16 (at most once:
//     afterwards x < 2^16 <= freq << 16); then x = (x / freq) << 16 | (x % freq + start), which stays
//     below 2^32 because x / freq < 2^16.
//   * Decoding inverts it exactly: slot = x & 0xFFFF lies in [start, start + freq) of the symbol,
//     x = freq * (x >> 16) + slot - start, and if x < L one word comes back in: x = x << 16 | word.
//   * A group of n symbols is coded by N interleaved states, symbol i by state i mod N. The encoder
//     runs i = n-1 .. 0 writing words backwards, then stores the N final states in front; the decoder
//     reads the states, then the words forwards, in exactly the mirrored order, so one buffer serves
//     every state. Encoder states start at L, so after the last symbol every decoder state is L again:
//     a decoder that ends elsewhere, or with words left over, was given a corrupt group.
// Layout of a group: N states as u32 little-endian, then the words as u16 little-endian.
// All functions are per-thread code (KVSTREAM_HD): the CUDA kernels (codec/cachegen/gpu_decode.cu,
// gpu_encode.cu, and the transform codec's) run rans_decode_symbol / rans_encode_symbol in each lane
// of a warp, a lane per state, the CPU runs them in loops.
#pragma once
#include <cstdint>

#include "codec/entropy/cdf.h"
#include "common/host_device.h"

namespace kvstream::codec {

inline constexpr uint32_t kRansLow = 1u << 16;  // L
inline constexpr int kRansMaxStates = 64;
using RansSymbolLookup = SymbolLookup<10>;  // 1 KiB per CDF row: a symbol boundary in ~6 % of the slots at most

// Bytes a group of n symbols can take at most: N states, and at most one 16-bit word per symbol
// (freq >= 1 out of 2^16 costs at most 16 bits).
KVSTREAM_HD uint32_t rans_group_capacity(uint32_t n, int states) { return 4u * uint32_t(states) + 2u * n; }

// The default sub-chunk of both codecs' rANS layouts: the smallest power of two of tokens (up to
// max_tokens) whose groups give each of their `states` states at least kRansSymbolsPerState symbols,
// so that a state's 4-byte flush stays small beside what it codes while a wide chunk splits into as
// many independent chains as that allows, which a GPU needs (docs/CODECS.md "Parallelism of rANS").
inline constexpr int kRansSymbolsPerState = 2048;
inline int rans_sub_tokens(int64_t symbols_per_token, int states, int max_tokens) {
  int sub = 1;
  while (sub < max_tokens && int64_t(sub) * symbols_per_token < int64_t(kRansSymbolsPerState) * states) sub *= 2;
  return sub;
}

// One encoding step of one state: symbol s under the CDF row `row`. Returns true when the state first
// gave out its low 16 bits as `word`, which goes in front of the words written so far.
KVSTREAM_HD bool rans_encode_symbol(uint32_t& state, const uint16_t* row, int m, int s, uint16_t& word) {
  const uint32_t start = row[s], freq = cdf_top(row, m, s) - start;
  const bool emit = state >= freq << 16;
  word = static_cast<uint16_t>(state);
  if (emit) state >>= 16;
  state = ((state / freq) << 16) | (state % freq + start);
  return emit;
}

// The warp encoder (codec/cachegen/gpu_encode.cu) codes a round of symbols base .. base + N - 1 at once, lane k
// with state k. The sequential encoder would have coded them from the highest lane down, each word in
// front of the previous ones; so a lane that gives out a word (bit `lane` of `emitting`) puts it below
// those of the higher emitting lanes. `word` is where the words of the earlier rounds begin.
KVSTREAM_HD uint32_t rans_round_word_position(uint32_t word, uint32_t emitting, unsigned lane) {
  const uint32_t higher = lane >= 31 ? 0u : emitting >> (lane + 1);
#if defined(__CUDA_ARCH__)
  const auto above = static_cast<uint32_t>(__popc(higher));
#else
  const auto above = static_cast<uint32_t>(__builtin_popcount(higher));
#endif
  return word - 2u * (above + 1u);
}

// Encodes symbols[0..n) where symbol i uses the CDF row cdf + (i mod channels) * (m + 1), with
// `states` (1..kRansMaxStates) interleaved states, into out[0..rans_group_capacity); returns the bytes.
KVSTREAM_HD uint32_t rans_encode_group(const uint8_t* symbols, uint32_t n, int channels, const uint16_t* cdf, int m,
                                       int states, uint8_t* out) {
  uint32_t x[kRansMaxStates];
  for (int k = 0; k < states; ++k) x[k] = kRansLow;
  // Words go backwards from the end of the word area; the states go in front of them afterwards.
  uint8_t* const end = out + rans_group_capacity(n, states);
  uint8_t* word = end;
  // Channel and state of symbol i, counted down with i (no division per symbol).
  int c = n ? static_cast<int>((n - 1) % uint32_t(channels)) : 0;
  int k = n ? static_cast<int>((n - 1) % uint32_t(states)) : 0;
  for (uint32_t i = n; i-- > 0;) {
    uint16_t out_word;
    if (rans_encode_symbol(x[k], cdf + c * (m + 1), m, symbols[i], out_word)) {
      word -= 2;
      word[0] = static_cast<uint8_t>(out_word);
      word[1] = static_cast<uint8_t>(out_word >> 8);
    }
    c = c == 0 ? channels - 1 : c - 1;
    k = k == 0 ? states - 1 : k - 1;
  }
  uint8_t* head = word - 4 * states;
  for (int j = 0; j < states; ++j)
    for (int b = 0; b < 4; ++b) head[4 * j + b] = static_cast<uint8_t>(x[j] >> (8 * b));
  const auto bytes = static_cast<uint32_t>(end - head);
  for (uint32_t b = 0; b < bytes; ++b) out[b] = head[b];  // move to the front (memmove; head >= out)
  return bytes;
}

// One decoding step of one state once the symbol s under its slot (state & 0xFFFF) is known, from
// lookup_symbol or search_symbol (the same s). The refill aside, which depends on how states share
// the word stream; the state afterwards may lie below L.
KVSTREAM_HD void rans_decode_step(uint32_t& state, const uint16_t* row, int m, int s) {
  const uint32_t start = row[s];
  state = (cdf_top(row, m, s) - start) * (state >> 16) + (state & 0xFFFFu) - start;
}

// One decoding step with the row's lookup: returns the symbol under the state's slot.
KVSTREAM_HD int rans_decode_symbol(uint32_t& state, const uint16_t* row, const RansSymbolLookup& lookup, int m) {
  const int s = lookup_symbol(row, m, lookup, state & 0xFFFFu);
  rans_decode_step(state, row, m, s);
  return s;
}

// The decoder's renormalisation: a state that fell below L takes the next word (0 past the end of
// the group, which marks `overrun`). Branch-free: the word is read whether or not it is used.
KVSTREAM_HD void rans_refill(uint32_t& state, const uint8_t* in, uint32_t length, uint32_t& pos, bool& overrun) {
  const bool refill = state < kRansLow;
  const bool inside = pos + 2 <= length;
  const uint32_t next = inside ? uint32_t(in[pos]) | uint32_t(in[pos + 1]) << 8 : 0u;
  overrun |= refill && !inside;
  state = refill ? (state << 16) | next : state;
  pos += refill ? 2u : 0u;
}

// Decodes a group of n symbols (symbol i with CDF row i mod channels and its lookup) from
// in[0..length) into symbols[0..n). Reads nothing outside the group and always writes symbols < m;
// returns false when the group is corrupt (too short, a state out of range, words left over or
// missing, or final states other than L).
KVSTREAM_HD bool rans_decode_group(const uint8_t* in, uint32_t length, uint32_t n, int channels, const uint16_t* cdf,
                                   const RansSymbolLookup* lookups, int m, int states, uint8_t* symbols) {
  if (length < 4u * uint32_t(states) || (length - 4u * uint32_t(states)) % 2 != 0) return false;
  uint32_t x[kRansMaxStates];
  for (int k = 0; k < states; ++k) {
    const uint8_t* p = in + 4 * k;
    x[k] = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    if (x[k] < kRansLow) return false;
  }
  uint32_t pos = 4u * uint32_t(states);  // next word
  bool overrun = false;
  const uint16_t* row = cdf;  // symbol i's CDF row and lookup: channel i mod C, advanced with i
  const RansSymbolLookup* lookup = lookups;
  int c = 0, k = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t state = x[k];
    const int s = rans_decode_symbol(state, row, *lookup, m);
    rans_refill(state, in, length, pos, overrun);
    x[k] = state;
    symbols[i] = static_cast<uint8_t>(s);
    if (++c == channels) {
      c = 0;
      row = cdf;
      lookup = lookups;
    } else {
      row += m + 1;
      ++lookup;
    }
    if (++k == states) k = 0;
  }
  bool ok = !overrun && pos == length;
  for (int j = 0; j < states; ++j) ok = ok && x[j] == kRansLow;
  return ok;
}

}  // namespace kvstream::codec
