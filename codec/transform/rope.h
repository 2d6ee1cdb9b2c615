// Rotary position embedding (RoPE) on the keys of one token, undone and redone by the transform codec
// (transform_codec.cpp): a model stores its keys *after* RoPE, which turns each pair of a head's
// dimensions by an angle that grows with the position, so the same content at two positions looks
// different and a basis fitted across positions has to spend components on the rotation. Undone,
// the keys of all positions share one distribution (KVTC, ICLR 2026, §3).
//
// Pair j of a head (j < D/2) turns by position * theta^(-2j/D), the same angle models/llama_model.cpp
// uses; the pairs are (2j, 2j+1) in the llama2.c / Meta layout and (j, j + D/2) in Hugging Face's.
// Undo then redo gives the keys back up to float rounding (the angles are computed in double); the
// rotation is not part of what is entropy-coded, so the encoder's and decoder's libm need not agree.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/host_device.h"

namespace kvstream::codec {

enum class RopePairs : uint8_t { kNone = 0, kInterleaved = 1, kRotateHalf = 2 };

struct RopeSpec {
  RopePairs pairs = RopePairs::kNone;  // kNone: the keys are used as they are
  double theta = 10000.0;
};

// The channels of pair j of a head: (2j, 2j + 1) interleaved, (j, j + half) rotate-half.
KVSTREAM_HD int rope_pair_first(RopePairs pairs, int j) { return pairs == RopePairs::kInterleaved ? 2 * j : j; }
KVSTREAM_HD int rope_pair_second(RopePairs pairs, int j, int half) {
  return pairs == RopePairs::kInterleaved ? 2 * j + 1 : j + half;
}

// Turns one pair (a, b) by the angle of cosine `c` and sine `s`, backwards when `undo`: in double,
// without fused multiply-adds, so the CPU and the GPU decoder (transform_decode_stages.h) agree.
KVSTREAM_HD void rope_turn_pair(float& a, float& b, double c, double s, bool undo) {
  const double xa = a, xb = b, sj = undo ? -s : s;
  a = static_cast<float>(common::dsub_rn(common::dmul_rn(xa, c), common::dmul_rn(xb, sj)));
  b = static_cast<float>(common::dadd_rn(common::dmul_rn(xb, c), common::dmul_rn(xa, sj)));
}

// The angles of tokens [t0, t0 + tokens), computed once per chunk and shared by every layer's keys.
class RopeAngles {
 public:
  RopeAngles(const RopeSpec& rope, int head_dim, int64_t t0, int64_t tokens)
      : pairs_(rope.pairs), half_(head_dim / 2), cos_(size_t(tokens) * size_t(half_)), sin_(cos_.size()) {
    if (pairs_ == RopePairs::kNone) return;
    for (int j = 0; j < half_; ++j) {
      const double frequency = std::pow(rope.theta, -2.0 * j / head_dim);
      for (int64_t t = 0; t < tokens; ++t) {
        const double angle = double(t0 + t) * frequency;
        cos_[size_t(t) * half_ + j] = std::cos(angle);
        sin_[size_t(t) * half_ + j] = std::sin(angle);
      }
    }
  }

  // Turns the `heads` heads of token t's key (t counted from t0) by -angle (undo) or +angle (redo).
  void rotate(float* key, int heads, int64_t t, bool undo) const {
    if (pairs_ == RopePairs::kNone) return;
    const double* c = cos_.data() + size_t(t) * half_;
    const double* s = sin_.data() + size_t(t) * half_;
    for (int h = 0; h < heads; ++h) {
      float* x = key + h * 2 * half_;
      for (int j = 0; j < half_; ++j)
        rope_turn_pair(x[rope_pair_first(pairs_, j)], x[rope_pair_second(pairs_, j, half_)], c[j], s[j], undo);
    }
  }

  RopePairs pairs() const { return pairs_; }
  // cos and sin of pair j at token t (from t0): entry t * half + j; all zero without RoPE.
  const std::vector<double>& cos_table() const { return cos_; }
  const std::vector<double>& sin_table() const { return sin_; }

 private:
  RopePairs pairs_;
  int half_;
  std::vector<double> cos_, sin_;  // [tokens][half]
};

}  // namespace kvstream::codec
